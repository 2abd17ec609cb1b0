package testkit

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
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
	if line, gl, wl, differ := firstDiff(got, want); differ {
		t.Fatalf("output differs from %s (%d bytes, want %d) at line %d:\n got: %s\nwant: %s", path, len(got), len(want), line, gl, wl)
	}
}

// GoldenSection is Golden for the lines of a hand-written file between the line begin and the line
// end (a generated table inside a docs page): got, whole lines, is compared with what is between
// them, and UPDATE_GOLDENS=1 writes it there, leaving the rest of the file as it is. A file
// without both lines, in that order, fails the test.
func GoldenSection(t testing.TB, path, begin, end string, got []byte) {
	t.Helper()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v", path, err)
	}
	lines := bytes.SplitAfter(file, []byte("\n"))
	b := slices.IndexFunc(lines, func(l []byte) bool { return string(bytes.TrimSuffix(l, []byte("\n"))) == begin })
	e := -1
	if b >= 0 {
		e = slices.IndexFunc(lines[b+1:], func(l []byte) bool { return string(bytes.TrimSuffix(l, []byte("\n"))) == end })
	}
	if e < 0 {
		t.Fatalf("golden %s: no line %q followed by a line %q: put them where the generated text goes", path, begin, end)
	}
	e += b + 1
	if os.Getenv("UPDATE_GOLDENS") == "1" {
		out := slices.Concat(bytes.Join(lines[:b+1], nil), got, bytes.Join(lines[e:], nil))
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want := bytes.Join(lines[b+1:e], nil)
	if line, gl, wl, differ := firstDiff(got, want); differ {
		t.Fatalf("output differs from %s between its lines %q and %q at line %d (UPDATE_GOLDENS=1 rewrites it):\n got: %s\nwant: %s",
			path, begin, end, b+1+line, gl, wl)
	}
}

// firstDiff is the first line (from 1) where got and want differ, and that line of each.
func firstDiff(got, want []byte) (line int, gl, wl []byte, differ bool) {
	if bytes.Equal(got, want) {
		return 0, nil, nil, false
	}
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range max(len(g), len(w)) {
		gl, wl = nil, nil
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if !bytes.Equal(gl, wl) {
			return i + 1, gl, wl, true
		}
	}
	return max(len(g), len(w)), nil, nil, true // not reached: unequal bytes differ in some line
}
