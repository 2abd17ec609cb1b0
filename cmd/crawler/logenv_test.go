package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli/clitest"
)

// TestEverySubcommandHonoursLogEnv: LOG_LEVEL and LOG_FORMAT are read for every subcommand (a
// bad value is a usage error before anything runs), and replay, which defaults to warnings as
// text, logs JSON when LOG_FORMAT says so.
func TestEverySubcommandHonoursLogEnv(t *testing.T) {
	t.Parallel()
	clitest.CheckLogEnv(t, "crawler", run, cli.ErrUsage, "run", "once", "try", "check", "sim", "replay", "healthcheck")
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
