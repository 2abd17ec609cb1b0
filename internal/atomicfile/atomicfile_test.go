package atomicfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/golfcrawler/golf-crawler/internal/atomicfile"
)

// TestDirSyncFailsAfterTheRename: a directory sync that fails leaves the new file in place and
// says so (ErrDirNotSynced); a write that fails leaves the old one. No temporary file is left.
func TestDirSyncFailsAfterTheRename(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	write := func(s string) func(*os.File) error {
		return func(f *os.File) error { _, err := f.WriteString(s); return err }
	}
	if err := atomicfile.Write(path, 0o644, write("old")); err != nil {
		t.Fatal(err)
	}
	eio := errors.New("input/output error")
	err := atomicfile.WriteSyncing(path, 0o644, func(string) error { return eio }, write("new"))
	if !errors.Is(err, atomicfile.ErrDirNotSynced) || !errors.Is(err, eio) {
		t.Errorf("err %v, want ErrDirNotSynced wrapping the sync's error", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("after the failed directory sync the file holds %q, want the new content", b)
	}
	err = atomicfile.Write(path, 0o644, func(*os.File) error { return eio })
	if !errors.Is(err, eio) || errors.Is(err, atomicfile.ErrDirNotSynced) {
		t.Errorf("a failed write: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("after a failed write the file holds %q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".f.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
