package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notifylist"
	"github.com/golfcrawler/golf-crawler/crawler"
)

// notificationsCmd is `crawler notifications`: the crawler-side alerts' claims, newest first.
func notificationsCmd(ctx context.Context, env cli.Env, args []string) error {
	if len(args) > 0 && args[0] == "resend" {
		return resendCmd(ctx, env, args[1:])
	}
	flags := env.NewFlagSet("notifications", "List the crawler's tee-time alerts (the claims in <state-dir>/"+alertsFile+"), newest claim\n"+
		"first, times in Asia/Seoul (--tz): status sending (claimed, being delivered), sent, failed (with the error),\n"+
		"unknown (a chat channel timed out after the request left: maybe delivered, never re-sent) or skipped\n"+
		"(with the reason: stale, closed, watch_removed, watch_muted). It reads while `crawler run` runs.\n"+
		"`crawler notifications resend --status failed` sends the failed ones again (see its --help).",
		"Environment:\n  CRAWLER_STATE_DIR           snapshot directory (--state-dir; default "+defaultStateDir+")\n"+logEnvHelp)
	stateDir := flags.String("state-dir", cli.EnvOr(env.Getenv, "CRAWLER_STATE_DIR", defaultStateDir), "the crawler's state `directory` [CRAWLER_STATE_DIR]")
	var lf notifylist.ListFlags
	lf.Define(flags, "Asia/Seoul")
	if err := cli.Parse(flags, args); err != nil {
		return err
	}
	if err := lf.Check(); err != nil {
		return err
	}
	if _, err := os.Stat(alertsPath(*stateDir)); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no alerts database at %s: the crawler has not run with --watches on this state dir", alertsPath(*stateDir))
	}
	st, err := openAlertStore(ctx, *stateDir)
	if err != nil {
		return err
	}
	defer st.Close()
	return lf.List(ctx, env.Stdout, st)
}

// resendCmd is `crawler notifications resend`: the failed alerts of the state dir sent again by
// this process, which takes the state dir's lock (a running crawler would send them too).
func resendCmd(ctx context.Context, env cli.Env, args []string) error {
	flags := env.NewFlagSet("notifications resend", notifylist.ResendUsage+"\nIt takes the state dir's lock: stop `crawler run` first.",
		"Environment:\n  CRAWLER_STATE_DIR           snapshot directory (--state-dir; default "+defaultStateDir+")\n"+
			"  WATCHES_FILE                the watches file (--watches): the channels to send on\n"+logEnvHelp)
	stateDir := flags.String("state-dir", cli.EnvOr(env.Getenv, "CRAWLER_STATE_DIR", defaultStateDir), "the crawler's state `directory` [CRAWLER_STATE_DIR]")
	watchesFile := flags.String("watches", env.Getenv("WATCHES_FILE"), "watches YAML `file` with the channels [WATCHES_FILE]")
	maxAttempts := flags.Int("alert-max-attempts", notify.DefaultMaxAttempts, "attempts per message on transient errors")
	retryBase := flags.Duration("alert-retry-backoff", time.Second, "first wait before a retry; doubles per attempt up to 1m")
	var rf notifylist.ResendFlags
	rf.Define(flags)
	if err := cli.Parse(flags, args); err != nil {
		return err
	}
	f, err := rf.Filter(time.Now())
	if err != nil {
		return err
	}
	if *watchesFile == "" || *maxAttempts < 1 || *retryBase <= 0 {
		return fmt.Errorf("%w: notifications resend: --watches (WATCHES_FILE) is required, --alert-max-attempts at least 1, --alert-retry-backoff positive", cli.ErrUsage)
	}
	watches, secrets, err := loadWatches(&env, *watchesFile)
	if err != nil {
		return err
	}
	if _, err := os.Stat(alertsPath(*stateDir)); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no alerts database at %s: the crawler has not run with --watches on this state dir", alertsPath(*stateDir))
	}
	lock, err := crawler.StateDir{Dir: *stateDir}.Lock()
	if err != nil {
		return fmt.Errorf("notifications resend: %w (stop it, resend, start it again)", err)
	}
	defer lock.Unlock()
	st, err := openAlertStore(ctx, *stateDir)
	if err != nil {
		return err
	}
	defer st.Close()
	svc, err := alerts.New(st, alerts.Config{Watches: watches, MaxAttempts: *maxAttempts, RetryBase: *retryBase, Logger: env.Logger})
	if err != nil {
		return err
	}
	// A chat watch's claims are sent as `crawler run` sends them, not skipped as watch_removed.
	return notifylist.Resend(ctx, env.Stdout, svc, f, secrets, "crawler notifications")
}

// loadWatches is notifylist.LoadWatches, its error pointing at crawler check.
func loadWatches(env *cli.Env, path string) (*notify.Config, []string, error) {
	w, secrets, err := notifylist.LoadWatches(env, path)
	if err != nil {
		return nil, nil, fmt.Errorf("%w (crawler check --watches FILE lists every error)", err)
	}
	return w, secrets, nil
}
