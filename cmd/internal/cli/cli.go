// Package cli holds what the two commands (crawler, booking-consumer) share about being a
// command: usage errors, flag parsing, the logger from LOG_LEVEL and LOG_FORMAT, environment
// defaults, and the healthcheck used by distroless container images.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

// ErrUsage marks command-line mistakes; the mains exit with status 2 for it.
var ErrUsage = errors.New("usage")

// ErrPartial marks a result that is only partly there (`crawler suggest` printed an entry with
// fields missing or a login to fill in); the mains exit with status 2 for it too.
var ErrPartial = errors.New("partial")

// IsHelp reports whether a is one of the spellings of --help.
func IsHelp(a string) bool {
	return a == "-h" || a == "-help" || a == "--help"
}

// Subcommand splits args into the subcommand and its arguments: the first argument unless it is a
// flag, else def. help reports a bare --help (or -h) asking for the command's own usage.
func Subcommand(args []string, def string) (sub string, rest []string, help bool) {
	switch {
	case len(args) > 0 && !strings.HasPrefix(args[0], "-"):
		return args[0], args[1:], false
	case len(args) > 0 && IsHelp(args[0]):
		return "", nil, true
	}
	return def, args, false
}

// Parse parses args into fs; mistakes wrap ErrUsage (the flag package already printed why), and
// leftover arguments are a mistake too. flag.ErrHelp is returned as it is.
func Parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %s: %v", ErrUsage, fs.Name(), err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: %s: unexpected arguments %q", ErrUsage, fs.Name(), fs.Args())
	}
	return nil
}

// NewLogger builds the logger on w from LOG_LEVEL and LOG_FORMAT: text when LOG_FORMAT is unset
// and w is a terminal (a person reads it), else JSON (log collectors parse it; durations stay
// nanoseconds there, as slog writes them).
func NewLogger(getenv func(string) string, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if s := strings.TrimSpace(getenv("LOG_LEVEL")); s != "" {
		if err := level.UnmarshalText([]byte(s)); err != nil {
			return nil, fmt.Errorf("%w: LOG_LEVEL=%q: want debug, info, warn or error", ErrUsage, s)
		}
	}
	opts := &slog.HandlerOptions{Level: level}
	f := strings.TrimSpace(getenv("LOG_FORMAT"))
	if f == "" && IsTerminal(w) {
		f = "text"
	}
	switch f {
	case "", "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	default:
		return nil, fmt.Errorf("%w: LOG_FORMAT=%q: want json or text", ErrUsage, f)
	}
}

// EnvOr returns getenv(key) trimmed, or def when it is empty.
func EnvOr(getenv func(string) string, key, def string) string {
	if v := strings.TrimSpace(getenv(key)); v != "" {
		return v
	}
	return def
}

// Healthcheck GETs url and returns nil only for 200 OK: the container healthcheck of images that
// have no shell and no curl.
func Healthcheck(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%w: --url %q: %v", ErrUsage, url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck %s: %w", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck %s: %s", url, resp.Status)
	}
	return nil
}

// Main runs a command: run gets a context cancelled by SIGINT or SIGTERM, the arguments without
// the program name and the process environment; its error becomes the exit status (0; 2 for
// ErrUsage and ErrPartial; 1 otherwise), printed after the program's name.
func Main(name string, run func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
	if errors.Is(err, ErrUsage) || errors.Is(err, ErrPartial) {
		os.Exit(2)
	}
	os.Exit(1)
}
