package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// pty opens a pseudo-terminal and returns its terminal side (what a command's stderr is in a
// golfer's shell) and the side that reads what was written to it.
func pty(t *testing.T) (term, reader *os.File) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptm.Close() })
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pts.Close() })
	return pts, ptm
}

// TestLogsForPeople: with LOG_FORMAT unset, logs on a terminal are text (a golfer's terminal
// filled with "duration":8468870623), JSON on anything else (a pipe, /dev/null, a buffer);
// LOG_FORMAT wins either way.
func TestLogsForPeople(t *testing.T) {
	term, reader := pty(t)
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	if !IsTerminal(term) || IsTerminal(devNull) || IsTerminal(&bytes.Buffer{}) {
		t.Fatalf("IsTerminal: pty %v, /dev/null %v, buffer %v", IsTerminal(term), IsTerminal(devNull), IsTerminal(&bytes.Buffer{}))
	}
	line := func(format string, w io.Writer, read func() string) string {
		env := map[string]string{"LOG_FORMAT": format}
		l, err := NewLogger(func(k string) string { return env[k] }, w)
		if err != nil {
			t.Fatal(err)
		}
		l.Info("site crawled", "site", "tee")
		return read()
	}
	readTerm := func() string {
		b := make([]byte, 4096)
		n, err := reader.Read(b)
		if err != nil {
			t.Fatal(err)
		}
		return string(b[:n])
	}
	if got := line("", term, readTerm); !strings.Contains(got, `level=INFO msg="site crawled" site=tee`) {
		t.Errorf("LOG_FORMAT unset on a terminal: %q, want text", got)
	}
	if got := line("json", term, readTerm); !strings.HasPrefix(got, `{"time":`) {
		t.Errorf("LOG_FORMAT=json on a terminal: %q, want JSON", got)
	}
	var buf bytes.Buffer
	if got := line("", &buf, buf.String); !strings.HasPrefix(got, `{"time":`) {
		t.Errorf("LOG_FORMAT unset on a buffer: %q, want JSON", got)
	}
}
