package main

import (
	"testing"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli/clitest"
)

// TestEverySubcommandHonoursLogEnv: LOG_LEVEL and LOG_FORMAT are read for every subcommand; a
// bad value is a usage error before anything runs.
func TestEverySubcommandHonoursLogEnv(t *testing.T) {
	t.Parallel()
	clitest.CheckLogEnv(t, "booking-consumer", run, cli.ErrUsage, "run", "migrate", "lifetimes", "export", "dead", "healthcheck")
}
