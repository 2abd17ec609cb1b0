package cli

import (
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want error
	}{
		{nil, nil},
		{[]string{"--n", "3"}, nil},
		{[]string{"--help"}, flag.ErrHelp},
		{[]string{"--nope"}, ErrUsage},
		{[]string{"--n", "x"}, ErrUsage},
		{[]string{"extra"}, ErrUsage},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Int("n", 0, "")
		if err := Parse(fs, tc.args); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("Parse(%q) = %v, want %v", tc.args, err, tc.want)
		}
	}
}

func TestNewLogger(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		level, format string
		ok            bool
	}{
		{"", "", true}, {"debug", "text", true}, {" warn ", "json", true},
		{"loud", "", false}, {"", "xml", false},
	} {
		env := map[string]string{"LOG_LEVEL": tc.level, "LOG_FORMAT": tc.format}
		_, err := NewLogger(func(k string) string { return env[k] }, io.Discard)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrUsage)) {
			t.Errorf("NewLogger(%q, %q) = %v, want ok=%v", tc.level, tc.format, err, tc.ok)
		}
	}
}

func TestEnvOr(t *testing.T) {
	t.Parallel()
	env := map[string]string{"SET": " v ", "BLANK": "  "}
	get := func(k string) string { return env[k] }
	if EnvOr(get, "SET", "d") != "v" || EnvOr(get, "BLANK", "d") != "d" || EnvOr(get, "UNSET", "d") != "d" {
		t.Fatal("EnvOr does not trim or fall back")
	}
}

func TestHealthcheck(t *testing.T) {
	t.Parallel()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer ok.Close()
	sick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	defer sick.Close()
	if err := Healthcheck(t.Context(), ok.URL, time.Second); err != nil {
		t.Errorf("healthy: %v", err)
	}
	if err := Healthcheck(t.Context(), sick.URL, time.Second); err == nil {
		t.Error("503 passed")
	}
	if err := Healthcheck(t.Context(), "http://127.0.0.1:1/healthz", time.Second); err == nil {
		t.Error("a closed port passed")
	}
}

func TestSubcommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args     []string
		sub      string
		rest     int
		wantHelp bool
	}{
		{nil, "run", 0, false},
		{[]string{"--schedule", "x"}, "run", 2, false},
		{[]string{"once", "--sites", "f"}, "once", 2, false},
		{[]string{"--help"}, "", 0, true},
		{[]string{"-h", "once"}, "", 0, true},
	} {
		sub, rest, help := Subcommand(tc.args, "run")
		if sub != tc.sub || len(rest) != tc.rest || help != tc.wantHelp {
			t.Errorf("Subcommand(%q) = %q, %q, %v; want %q, %d args, %v", tc.args, sub, rest, help, tc.sub, tc.rest, tc.wantHelp)
		}
	}
}
