package liteclaims_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/liteclaims"
	"github.com/golfcrawler/golf-crawler/events"
)

func opening(course string) *events.Event {
	price, players := int64(100000), 4
	e := events.Opened(events.Listing{Source: "s", CourseName: course, RoundDate: "2026-12-05", PlayDate: "2026-12-05",
		TeeTime: "07:00", Values: events.Values{PriceKRW: &price, Players: &players}}, "c1", time.Now())
	return &e
}

func claimN(t *testing.T, st notify.ClaimStore, prefix string, n int) {
	t.Helper()
	var cs []notify.Claim
	for i := range n {
		e := opening(fmt.Sprint(prefix, i))
		cs = append(cs, notify.Claim{Key: notify.ClaimKey("w", "a", e.EventID), Watch: "w", Channel: "a", Event: e})
	}
	if _, err := st.Claim(t.Context(), notify.ClaimBatch{Now: time.Now(), Claims: cs}); err != nil {
		t.Fatal(err)
	}
}

// TestOpenRefusesACorruptFile: a truncated or overwritten alerts database fails Open with an
// error naming the file; it never starts afresh (which would alert every open listing again).
func TestOpenRefusesACorruptFile(t *testing.T) {
	t.Parallel()
	good := filepath.Join(t.TempDir(), "alerts.db")
	st := open(t, good)
	claimN(t, st, "course-", 200) // a few pages
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	whole, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	garbled := append([]byte(nil), whole...)
	for i := 4096; i < len(garbled) && i < 4096+2000; i++ {
		garbled[i] = 0xa5 // the second page, its header first
	}
	cases := map[string][]byte{
		"empty":                   {},
		"shorter than the header": whole[:50],
		"bad header":              append([]byte("PostgreSQL dump\x00"), whole[16:]...),
		"truncated":               whole[:len(whole)/2+100],
		"truncated pages":         whole[:4096],
		"garbled page":            garbled,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "alerts.db")
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			st, err := liteclaims.Open(t.Context(), path)
			if err == nil {
				st.Close()
				t.Fatalf("Open of a %s file succeeded", name)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error does not name the file: %v", err)
			}
			if name != "garbled page" && !errors.Is(err, liteclaims.ErrCorrupt) {
				t.Errorf("error is not ErrCorrupt: %v", err)
			}
		})
	}
	// With a WAL beside it the file is judged by SQLite alone, which refuses garbage as well.
	for name, content := range map[string][]byte{"bad header": cases["bad header"], "garbled page": garbled} {
		path := filepath.Join(t.TempDir(), "alerts.db")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+"-wal", make([]byte, 4096), 0o600); err != nil {
			t.Fatal(err)
		}
		if st, err := liteclaims.Open(t.Context(), path); err == nil || !strings.Contains(err.Error(), path) {
			if st != nil {
				st.Close()
			}
			t.Errorf("Open of a %s file with a WAL: %v, want an error naming the file", name, err)
		}
	}
	unreadable := filepath.Join(t.TempDir(), "alerts.db")
	if err := os.Mkdir(unreadable, 0o700); err != nil { // a directory where the file should be
		t.Fatal(err)
	}
	if st, err := liteclaims.Open(t.Context(), unreadable); err == nil || !strings.Contains(err.Error(), unreadable) {
		if st != nil {
			st.Close()
		}
		t.Errorf("Open of a directory: %v", err)
	}
}

// TestClaimsAreDurableAndParallelClaimsSerialise: claims from several sites crawled at once (one
// goroutine each) all land, none fails on a busy database, and a reopened file has them all.
func TestClaimsAreDurableAndParallelClaimsSerialise(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "alerts.db")
	st := open(t, path)
	var wg sync.WaitGroup
	for site := range 8 {
		wg.Go(func() {
			for b := range 10 {
				claimN(t, st, fmt.Sprintf("site-%d-batch-%d-", site, b), 5)
			}
		})
	}
	wg.Wait()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open(t, path)
	ns, err := st.List(t.Context(), notify.Filter{Limit: 10000})
	if err != nil || len(ns) != 8*10*5 {
		t.Fatalf("%d claims after reopening (%v), want 400", len(ns), err)
	}
}
