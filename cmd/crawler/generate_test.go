package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
)

func TestRunGenerate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gen := func(name string) []byte {
		t.Helper()
		p := filepath.Join(dir, name)
		var stderr bytes.Buffer
		err := runGenerate(t.Context(), []string{"--generate", p, "--days", "1", "--seed", "3"}, func(string) string { return "" }, &bytes.Buffer{}, &stderr)
		if err != nil {
			t.Fatalf("runGenerate: %v (%s)", err, stderr.String())
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

func TestRunGenerateUsage(t *testing.T) {
	t.Parallel()
	env := func(string) string { return "" }
	var help bytes.Buffer
	if err := runGenerate(t.Context(), []string{"--help"}, env, &bytes.Buffer{}, &help); err != nil {
		t.Errorf("--help: %v", err)
	}
	for _, f := range []string{"-generate", "-days", "-seed", "-interval", "-start"} {
		if !strings.Contains(help.String(), f) {
			t.Errorf("--help does not explain %s", f)
		}
	}
	for _, args := range [][]string{{}, {"--generate", "x", "--days", "0"}, {"--generate", "x", "--start", "yesterday"}, {"--generate", "x", "extra"}} {
		if err := runGenerate(t.Context(), args, env, &bytes.Buffer{}, &bytes.Buffer{}); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("%q: %v, want cli.ErrUsage", args, err)
		}
	}
}
