package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notifylist"
)

// notificationsCmd is `crawler notifications`: the crawler-side alerts' claims, newest first.
func notificationsCmd(ctx context.Context, env cli.Env, args []string) error {
	flags := env.NewFlagSet("notifications", "List the crawler's tee-time alerts (the claims in <state-dir>/"+alertsFile+"), newest claim\n"+
		"first, times in Asia/Seoul (--tz): status sending (claimed, being delivered), sent, failed (with the error),\n"+
		"unknown (a chat channel timed out after the request left: maybe delivered, never re-sent) or skipped\n"+
		"(with the reason: stale, closed, watch_removed, watch_muted). It reads while `crawler run` runs.",
		"Environment:\n  CRAWLER_STATE_DIR           snapshot directory (--state-dir; default "+defaultStateDir+")\n"+logEnvHelp)
	stateDir := flags.String("state-dir", cli.EnvOr(env.Getenv, "CRAWLER_STATE_DIR", defaultStateDir), "the crawler's state `directory` [CRAWLER_STATE_DIR]")
	status := flags.String("status", "", "only this `status`: sending, sent, failed, unknown or skipped")
	watch := flags.String("watch", "", "only this `watch`")
	tz := flags.String("tz", "Asia/Seoul", "time `zone` of the printed timestamps")
	asJSON := flags.Bool("json", false, "JSON lines instead of a table")
	limit := flags.Int("limit", 1000, "at most this many `rows`")
	if err := cli.Parse(flags, args); err != nil {
		return err
	}
	if *status != "" && !slices.Contains(notify.Statuses, *status) {
		return fmt.Errorf("%w: notifications: --status %q: want one of %s", cli.ErrUsage, *status, strings.Join(notify.Statuses, ", "))
	}
	loc, err := cli.Location(*tz)
	if err != nil {
		return err
	}
	if *limit < 1 {
		return fmt.Errorf("%w: notifications: --limit must be at least 1", cli.ErrUsage)
	}
	if _, err := os.Stat(alertsPath(*stateDir)); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no alerts database at %s: the crawler has not run with --watches on this state dir", alertsPath(*stateDir))
	}
	st, err := openAlertStore(ctx, *stateDir)
	if err != nil {
		return err
	}
	defer st.Close()
	rows, err := st.List(ctx, notify.Filter{Status: notify.Status(*status), Watch: *watch, Limit: *limit})
	if err != nil {
		return fmt.Errorf("list alerts: %w", err)
	}
	return notifylist.Write(env.Stdout, rows, loc, *asJSON)
}
