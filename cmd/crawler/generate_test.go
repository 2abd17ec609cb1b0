package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunGenerate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gen := func(name string) []byte {
		t.Helper()
		p := filepath.Join(dir, name)
		var stderr bytes.Buffer
		err := run(t.Context(), []string{"sim", "--generate", p, "--days", "1", "--seed", "3"}, env(nil), &bytes.Buffer{}, &stderr)
		if err != nil {
			t.Fatalf("sim --generate: %v (%s)", err, stderr.String())
		}
		if !strings.Contains(stderr.String(), "wrote ") {
			t.Errorf("no summary on stderr: %q", stderr.String())
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := gen("a.jsonl"), gen("b.jsonl")
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("two runs with the same flags: %d and %d bytes, equal %v", len(a), len(b), bytes.Equal(a, b))
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "*.tmp-*")); len(m) > 0 {
		t.Errorf("temporary files left behind: %v", m)
	}
}
