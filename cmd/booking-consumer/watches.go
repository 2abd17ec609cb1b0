package main

import (
	"context"
	"fmt"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notifylist"
)

// watchesCmd is `booking-consumer watches`: every watch `booking-consumer notify` has in force,
// the file's and the ones made in a command channel's chat (kept in chat_watches), with where
// each came from.
func watchesCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := newFlagSet(env, "watches", "List the watches `booking-consumer notify` uses: the watches file's (from: file) and the ones\n"+
		"made with /watch in a Telegram channel with commands: true (from: chat, kept in PostgreSQL,\n"+
		"table chat_watches), with their channels, whether they are muted and what they ask.")
	var dbURL, watchesFile string
	var asJSON bool
	fs.StringVar(&dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	fs.StringVar(&watchesFile, "watches", env.Getenv("WATCHES_FILE"), "watches YAML file ($WATCHES_FILE; required)")
	fs.BoolVar(&asJSON, "json", false, "JSON lines instead of a table")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if watchesFile == "" {
		return fmt.Errorf("%w: watches: --watches (or WATCHES_FILE) is required", cli.ErrUsage)
	}
	cfg, err := notify.LoadFile(watchesFile, nil) // a listing reads no secret
	if err != nil {
		return fmt.Errorf("%w: watches: %w", cli.ErrUsage, err)
	}
	env.Stderr = cli.ScrubWriter(env.Stderr, cfg.Secrets())
	if env.Logger, err = cli.NewLogger(env.Getenv, env.Stderr); err != nil {
		return err
	}
	pool, err := cli.OpenDatabase(ctx, cli.DatabaseURL(env.Getenv, dbURL), 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	svc, err := alerts.New(&pgclaims.Store{Pool: pool}, alerts.Config{Watches: cfg, Logger: env.Logger})
	if err != nil {
		return err
	}
	ws, err := svc.Watches(ctx)
	if err != nil {
		return err
	}
	return notifylist.WriteWatches(env.Stdout, ws, asJSON)
}
