package testkit

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Golden compares got with the file at path byte for byte and fails the test with the first
// differing line when they differ. With UPDATE_GOLDENS=1 in the environment it writes got to path
// instead (creating its folder): run that on the code whose output is the reference, then commit.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDENS") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (UPDATE_GOLDENS=1 writes it)", path, err)
	}
	if bytes.Equal(got, want) {
		return
	}
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range max(len(g), len(w)) {
		var gl, wl []byte
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if !bytes.Equal(gl, wl) {
			t.Fatalf("output differs from %s (%d bytes, want %d) at line %d:\n got: %s\nwant: %s", path, len(got), len(want), i+1, gl, wl)
		}
	}
	t.Fatalf("output differs from %s (%d bytes, want %d)", path, len(got), len(want))
}
