package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// ModuleRoot is the folder of the go.mod above the test's working directory (the repository's
// root): for tests that read the tree or run its scripts.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's working directory")
		}
		dir = parent
	}
}
