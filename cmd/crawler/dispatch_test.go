package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWantsGenerate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false},
		{[]string{"--addr", "127.0.0.1:0"}, false},
		{[]string{"--generate", "f.jsonl"}, true},
		{[]string{"-generate=f.jsonl", "--days", "3"}, true},
		{[]string{"--seed", "2", "--generate", "-"}, true},
		{[]string{"--", "--generate"}, false},
		{[]string{"generate"}, false},
	} {
		if got := wantsGenerate(tc.args); got != tc.want {
			t.Errorf("wantsGenerate(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// The root command reaches replay and the practice-set generator.
func TestDispatchReplayAndGenerate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := filepath.Join(dir, "practice.jsonl")
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"sim", "--generate", set, "--days", "1"}, env(nil), &out, &errOut); err != nil {
		t.Fatalf("crawler sim --generate: %v\n%s", err, errOut.String())
	}
	b, err := os.ReadFile(set)
	if err != nil || bytes.Count(b, []byte("\n")) == 0 {
		t.Fatalf("practice set: %d bytes, err %v", len(b), err)
	}
	errOut.Reset()
	if err := run(t.Context(), []string{"replay", "--dry-run", set}, env(nil), &out, &errOut); err != nil {
		t.Fatalf("crawler replay --dry-run: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(errOut.String()+out.String(), "dry run") && !strings.Contains(errOut.String()+out.String(), "dry-run") {
		t.Fatalf("dry-run report does not say it was a dry run:\n%s\n%s", out.String(), errOut.String())
	}
}
