package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
)

// TestEverySubcommandHonoursLogEnv: LOG_LEVEL and LOG_FORMAT are read for every subcommand; a
// bad value is a usage error before anything runs.
func TestEverySubcommandHonoursLogEnv(t *testing.T) {
	t.Parallel()
	for _, sub := range []string{"run", "migrate", "lifetimes", "export", "dead", "healthcheck"} {
		for _, kv := range [][2]string{{"LOG_LEVEL", "loud"}, {"LOG_FORMAT", "xml"}} {
			getenv := func(k string) string {
				if k == kv[0] {
					return kv[1]
				}
				return ""
			}
			err := run(t.Context(), []string{sub, "--help"}, getenv, &bytes.Buffer{}, &bytes.Buffer{})
			if !errors.Is(err, cli.ErrUsage) || !strings.Contains(err.Error(), kv[0]) {
				t.Errorf("booking-consumer %s with %s=%s: err = %v, want a usage error naming %s", sub, kv[0], kv[1], err, kv[0])
			}
		}
	}
}
