package diskfull_test

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/golfcrawler/golf-crawler/internal/diskfull"
)

type sqliteCode int

func (c sqliteCode) Error() string { return fmt.Sprintf("sqlite error %d", int(c)) }
func (c sqliteCode) Code() int     { return int(c) }

func TestIs(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{&fs.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC}, true},
		{fmt.Errorf("save: %w", &os.LinkError{Op: "rename", Old: "a", New: "b", Err: syscall.EDQUOT}), true},
		{fmt.Errorf("claim: %w", sqliteCode(13)), true},
		{sqliteCode(13 | 1<<8), true}, // an extended code of SQLITE_FULL
		{sqliteCode(11), false},       // SQLITE_CORRUPT
		{&fs.PathError{Op: "write", Path: "/x", Err: syscall.EIO}, false},
		{errors.New("database or disk is full"), false}, // text alone is not the code
		{nil, false},
	} {
		if got := diskfull.Is(tc.err); got != tc.want {
			t.Errorf("Is(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// TestIsSQLiteFull: the driver's own error for a database at its size limit (max_page_count, the
// same SQLITE_FULL a full disk gives) is recognised.
func TestIsSQLiteFull(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("create table t (v text); pragma max_page_count = 3"); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		_, err = db.Exec("insert into t values (?)", strings.Repeat("x", 4000))
		if err != nil || i > 100 {
			break
		}
	}
	if err == nil || !diskfull.Is(err) {
		t.Errorf("insert into a full database: %v, want SQLITE_FULL", err)
	}
}
