package store

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteFileAtomicFailingMidWay: a write that fails after a megabyte leaves the existing file
// as it was and no temporary file; a good write replaces it whole, mode 0644.
func TestWriteFileAtomicFailingMidWay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := writeFileAtomic(path, func(w io.Writer) error {
		if _, err := io.WriteString(w, strings.Repeat("x", 1<<20)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), path) {
		t.Fatalf("writeFileAtomic = %v, want boom naming the path", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old\n" {
		t.Errorf("a failed write changed the file: %d bytes", len(b))
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("a failed write left %d entries in the directory, want 1", len(es))
	}
	if err := writeFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if b, _ := os.ReadFile(path); string(b) != "new\n" || err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("after a good write: %q, mode %v (%v)", b, st.Mode(), err)
	}
}
