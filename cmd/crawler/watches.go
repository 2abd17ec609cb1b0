package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notifylist"
)

// watchesCmd is `crawler watches`: every watch in force, the file's and the ones made in a
// command channel's chat (kept in <state-dir>/alerts.db), with where each came from.
func watchesCmd(ctx context.Context, env cli.Env, args []string) error {
	flags := env.NewFlagSet("watches", "List the watches the crawler's alerts use: the watches file's (from: file) and the ones\n"+
		"made with /watch in a Telegram channel with commands: true (from: chat, kept in <state-dir>/"+alertsFile+"),\n"+
		"with their channels, whether they are muted and what they ask. It reads while `crawler run` runs.",
		"Environment:\n  WATCHES_FILE                the watches file (--watches)\n"+
			"  CRAWLER_STATE_DIR           snapshot directory (--state-dir; default "+defaultStateDir+")\n"+logEnvHelp)
	stateDir := flags.String("state-dir", cli.EnvOr(env.Getenv, "CRAWLER_STATE_DIR", defaultStateDir), "the crawler's state `directory` [CRAWLER_STATE_DIR]")
	watchesFile := flags.String("watches", env.Getenv("WATCHES_FILE"), "watches YAML `file` [WATCHES_FILE]")
	asJSON := flags.Bool("json", false, "JSON lines instead of a table")
	if err := cli.Parse(flags, args); err != nil {
		return err
	}
	if *watchesFile == "" {
		return fmt.Errorf("%w: watches: --watches (or WATCHES_FILE) is required", cli.ErrUsage)
	}
	cfg, err := notify.LoadFile(*watchesFile, nil) // a listing reads no secret
	if err != nil {
		return err
	}
	ws := cfg.Watches
	if _, err := os.Stat(alertsPath(*stateDir)); err == nil {
		st, err := openAlertStore(ctx, *stateDir)
		if err != nil {
			return err
		}
		defer st.Close()
		svc, err := alerts.New(st, alerts.Config{Watches: cfg, Logger: env.Logger})
		if err != nil {
			return err
		}
		if ws, err = svc.Watches(ctx); err != nil {
			return err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("alerts database: %w", err)
	}
	return notifylist.WriteWatches(env.Stdout, ws, *asJSON)
}
