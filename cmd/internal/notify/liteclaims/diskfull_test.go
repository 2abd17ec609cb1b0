package liteclaims_test

import (
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	_ "modernc.org/sqlite"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/liteclaims"
	"github.com/golfcrawler/golf-crawler/internal/diskfull"
)

// TestOpenTrustsSQLiteWithItsWAL: a file shorter than its header's page count whose missing pages
// are in the WAL (what a checkpoint cut short by a full disk leaves: page 1 written, the growth
// not) is a whole database to SQLite; Open opens it with every claim. Without the WAL the same
// file is refused.
func TestOpenTrustsSQLiteWithItsWAL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "alerts.db")
	st := open(t, path)
	claimN(t, st, "before-", 50)
	if err := st.Close(); err != nil { // checkpointed: the file holds the 50
		t.Fatal(err)
	}
	// A second connection that never checkpoints: the next claims' pages stay in the WAL.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for i := range 200 {
		if _, err := db.Exec(`insert into claims (key, watch, channel, event_id, crawl_id, listing_key, occurred_at, event,
			status, claimed_at, updated_at) values (?, 'w', 'a', ?, 'c2', ?, 1, ?, 'sending', 1, 1)`,
			uuid.NewString(), uuid.NewString(), fmt.Sprint("l", i), `{"course_name":"`+strings.Repeat("x", 300)+`"}`); err != nil {
			t.Fatal(err)
		}
	}
	// Copy the file and its WAL as the full disk left them, with page 1's new page count in the
	// file (the header is valid for its change counter) and the file not grown.
	copyDir := t.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if suffix == "" {
			pages := binary.BigEndian.Uint32(b[28:32])
			binary.BigEndian.PutUint32(b[28:32], pages+20)
			copy(b[92:96], b[24:28])
		}
		if err := os.WriteFile(filepath.Join(copyDir, "alerts.db"+suffix), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copied := filepath.Join(copyDir, "alerts.db")
	got, err := liteclaims.Open(t.Context(), copied)
	if err != nil {
		t.Fatalf("Open of a file whose pages are in its WAL: %v", err)
	}
	ns, err := got.List(t.Context(), notify.Filter{Limit: 10000})
	got.Close()
	if err != nil || len(ns) != 250 {
		t.Errorf("%d claims (%v), want the 250 of the file and its WAL", len(ns), err)
	}
}

// smallDisk mounts a tmpfs of size under a temporary dir (root only: the tests of a full disk need
// a real one).
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Fatalf("mount a tmpfs: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes a file into dir until the disk has about room bytes left; removing it frees them.
func fill(t *testing.T, dir string, room int64) string {
	t.Helper()
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		t.Fatal(err)
	}
	free := int64(fs.Bavail) * fs.Bsize
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, make([]byte, max(0, free-room)), 0o600); err != nil {
		t.Fatal(err)
	}
	return filler
}

// TestClaimOnAFullDisk: a claim transaction that finds the disk full fails as a full disk naming
// the file (never as a corrupt database), and once there is room again the file opens with the
// claims made before, and takes new ones.
func TestClaimOnAFullDisk(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t, "4m")
	path := filepath.Join(disk, "st", "alerts.db")
	if err := os.Mkdir(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	st, err := liteclaims.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	claimN(t, st, "before-", 50)
	filler := fill(t, disk, 120<<10)
	var cs []notify.Claim
	for i := range 400 {
		e := opening(fmt.Sprint("full-", i, strings.Repeat("긴 코스 이름 ", 10)))
		cs = append(cs, notify.Claim{Key: notify.ClaimKey("w", "a", e.EventID), Watch: "w", Channel: "a", Event: e})
	}
	_, err = st.Claim(t.Context(), notify.ClaimBatch{Now: time.Now(), Claims: cs})
	t.Logf("claim on the full disk: %v", err)
	switch {
	case err == nil:
		t.Fatal("a claim of 400 on a disk with 120 KiB left succeeded")
	case !diskfull.Is(err) || !strings.Contains(err.Error(), "disk full") || !strings.Contains(err.Error(), path):
		t.Errorf("claim error %q: want a full disk naming %s", err, path)
	case errors.Is(err, liteclaims.ErrCorrupt) || strings.Contains(err.Error(), "corrupt"):
		t.Errorf("claim error %q calls the database corrupt", err)
	}
	st.Close() // on the full disk, as a crawler stopped by the failure would
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	st, err = liteclaims.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open after the disk has room again: %v", err)
	}
	defer st.Close()
	claimN(t, st, "after-", 5)
	ns, err := st.List(t.Context(), notify.Filter{Status: notify.StatusSending, Limit: 10000})
	if err != nil || len(ns) != 55 {
		t.Errorf("%d claims sending (%v), want the 50 before and the 5 after", len(ns), err)
	}
}
