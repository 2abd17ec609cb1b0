package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notifylist"
)

// notificationsCmd is `booking-consumer notifications`: the notifications table, newest first.
func notificationsCmd(ctx context.Context, env cli.Env, args []string) error {
	if len(args) > 0 && args[0] == "resend" {
		return resendCmd(ctx, env, args[1:])
	}
	fs := newFlagSet(env, "notifications", "List tee-time alert notifications (the notifier's claims), newest claim first:\n"+
		"status sending (claimed, being delivered), sent, failed (with the error), unknown (a chat channel\n"+
		"timed out after the request was sent: maybe delivered, never re-sent) or skipped (with the reason).\n"+
		"`booking-consumer notifications resend --status failed` sends the failed ones again (see its --help).")
	var dbURL string
	var lf notifylist.ListFlags
	fs.StringVar(&dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	lf.Define(fs, defaultTZ)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if err := lf.Check(); err != nil {
		return err
	}
	pool, err := cli.OpenDatabase(ctx, cli.DatabaseURL(env.Getenv, dbURL), 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	return lf.List(ctx, env.Stdout, &pgclaims.Store{Pool: pool})
}

// resendCmd is `booking-consumer notifications resend`: the failed notifications sent again by
// this process, under a lease of its own (a running notifier leaves them to it; if this process
// dies, the notifier takes them once the lease expired).
func resendCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := newFlagSet(env, "notifications resend", notifylist.ResendUsage)
	var dbURL, watchesFile string
	var maxAttempts int
	var retryBase, lease time.Duration
	fs.StringVar(&dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	fs.StringVar(&watchesFile, "watches", env.Getenv("WATCHES_FILE"), "watches YAML file with the channels ($WATCHES_FILE; required)")
	fs.IntVar(&maxAttempts, "max-attempts", notify.DefaultMaxAttempts, "attempts per message on transient errors")
	fs.DurationVar(&retryBase, "retry-backoff", time.Second, "first wait before a retry; doubles per attempt up to 1m")
	fs.DurationVar(&lease, "lease", pgclaims.DefaultLease, "how long this process holds a notification it is sending")
	var rf notifylist.ResendFlags
	rf.Define(fs)
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	f, err := rf.Filter(time.Now())
	if err != nil {
		return err
	}
	if watchesFile == "" || maxAttempts < 1 || retryBase <= 0 || lease <= 0 {
		return fmt.Errorf("%w: notifications resend: --watches (WATCHES_FILE) is required, --max-attempts at least 1, --retry-backoff and --lease positive", cli.ErrUsage)
	}
	watches, secrets, err := notifylist.LoadWatches(&env, watchesFile)
	if err != nil {
		return err
	}
	pool, err := cli.OpenDatabase(ctx, cli.DatabaseURL(env.Getenv, dbURL), 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	host, _ := os.Hostname()
	// No settling: the claims of a message are put back together.
	st := &pgclaims.Store{Pool: pool, Owner: fmt.Sprintf("%s/%d/resend", host, os.Getpid()), Lease: lease, Settle: time.Millisecond}
	svc, err := alerts.New(st, alerts.Config{Watches: watches, MaxAttempts: maxAttempts, RetryBase: retryBase, Logger: env.Logger})
	if err != nil {
		return err
	}
	// A chat watch's claims are sent as the notifier sends them, not skipped as watch_removed.
	return notifylist.Resend(ctx, env.Stdout, svc, f, secrets, "booking-consumer notifications")
}
