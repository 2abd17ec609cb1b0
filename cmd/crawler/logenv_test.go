package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
)

// TestEverySubcommandHonoursLogEnv: LOG_LEVEL and LOG_FORMAT are read for every subcommand (a
// bad value is a usage error before anything runs), and replay, which defaults to warnings as
// text, logs JSON when LOG_FORMAT says so.
func TestEverySubcommandHonoursLogEnv(t *testing.T) {
	t.Parallel()
	for _, sub := range []string{"run", "once", "try", "check", "sim", "replay", "healthcheck"} {
		for _, kv := range [][2]string{{"LOG_LEVEL", "loud"}, {"LOG_FORMAT", "xml"}} {
			getenv := func(k string) string {
				if k == kv[0] {
					return kv[1]
				}
				return ""
			}
			var stderr bytes.Buffer
			err := run(t.Context(), []string{sub, "--help"}, getenv, &bytes.Buffer{}, &stderr)
			if !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), kv[0]) {
				t.Errorf("crawler %s with %s=%s: err = %v, want a usage error naming %s", sub, kv[0], kv[1], err, kv[0])
			}
		}
	}
	p, _ := replayFile(t)
	for format, want := range map[string]string{"": `level=WARN msg="invalid line skipped"`, "json": `"msg":"invalid line skipped"`} {
		var stderr bytes.Buffer
		getenv := func(k string) string {
			if k == "LOG_FORMAT" {
				return format
			}
			return ""
		}
		if err := run(t.Context(), []string{"replay", p, "--dry-run"}, getenv, &bytes.Buffer{}, &stderr); err != nil {
			t.Fatalf("replay --dry-run with LOG_FORMAT=%q: %v", format, err)
		}
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("replay with LOG_FORMAT=%q logged:\n%s\nwant a line with %s", format, stderr.String(), want)
		}
	}
}
