package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// fatalTB records the first Fatal and ends the goroutine as testing.T does, so a golden helper's
// failure can be asserted on.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (f *fatalTB) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

// failure runs fn with a fatalTB and returns its failure, "" if none.
func failure(t *testing.T, fn func(testing.TB)) string {
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(tb)
	}()
	<-done
	return tb.msg
}

// GoldenSection compares and rewrites only the lines between its markers, and fails when they
// differ or a marker is missing or out of order.
func TestGoldenSection(t *testing.T) {
	const begin, end = "<!-- begin -->", "<!-- end -->"
	path := filepath.Join(t.TempDir(), "page.md")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	section := func(got string) func(testing.TB) {
		return func(tb testing.TB) { GoldenSection(tb, path, begin, end, []byte(got)) }
	}
	page := "# Page\n" + begin + "\n| a |\n| b |\n" + end + "\nhand-written\n"

	t.Setenv("UPDATE_GOLDENS", "")
	write(page)
	if msg := failure(t, section("| a |\n| b |\n")); msg != "" {
		t.Errorf("an equal section fails: %s", msg)
	}
	if msg := failure(t, section("| a |\n| c |\n")); !strings.Contains(msg, "at line 4") || !strings.Contains(msg, "| c |") {
		t.Errorf("a differing section: %q, want its line 4 of the file and the line got", msg)
	}
	if msg := failure(t, section("| a |\n")); msg == "" {
		t.Error("a shorter section passes")
	}
	for _, bad := range []string{
		"# Page\n| a |\n" + end + "\n",                    // no begin
		"# Page\n" + begin + "\n| a |\n",                  // no end
		"# Page\n" + end + "\n| a |\n" + begin + "\n",     // out of order
		"# Page\nsee " + begin + "\n| a |\n" + end + "\n", // begin is not a line of its own
	} {
		write(bad)
		if msg := failure(t, section("| a |\n")); !strings.Contains(msg, "no line") {
			t.Errorf("%q: %q, want the missing marker", bad, msg)
		}
	}

	t.Setenv("UPDATE_GOLDENS", "1")
	write(page)
	if msg := failure(t, section("| x |\n")); msg != "" {
		t.Fatal(msg)
	}
	if got, want := read(), "# Page\n"+begin+"\n| x |\n"+end+"\nhand-written\n"; got != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, want)
	}
	write("# Page\n" + begin + "\n" + end + "\n")
	if msg := failure(t, section("| y |\n")); msg != "" {
		t.Fatal(msg)
	}
	if got, want := read(), "# Page\n"+begin+"\n| y |\n"+end+"\n"; got != want {
		t.Errorf("an empty section rewritten:\n%s\nwant:\n%s", got, want)
	}
}
