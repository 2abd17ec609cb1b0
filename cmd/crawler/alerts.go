package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/events"
)

// Defaults of the crawler-side alerts.
const (
	// alertsFile is the alerts' claim database in the state dir.
	alertsFile = "alerts.db"
	// defaultAlertWait is how long `crawler once` waits for its sends after the crawl.
	defaultAlertWait = 5 * time.Second
	// defaultAlertRetention is how long sent and skipped claims are kept.
	defaultAlertRetention = 30 * 24 * time.Hour
	// defaultChannelFailingAfter is how long a channel may fail before /healthz says so.
	defaultChannelFailingAfter = 30 * time.Minute
)

const alertsEnvHelp = `  WATCHES_FILE                the watches file of the crawler-side alerts (--watches); unset or empty:
                              no alerts. The alerts' claims live in <state dir>/` + alertsFile + ` (SQLite)
`

// alertsConfig is the configuration of the crawler-side alerts (--watches and the --alert-* flags).
type alertsConfig struct {
	WatchesFile  string
	Wait         time.Duration // once: how long to wait for the sends after the crawl
	MaxAge       time.Duration
	MaxAttempts  int
	RetryBase    time.Duration
	Retention    time.Duration
	FailingAfter time.Duration // run: /healthz reports a channel failing for longer
}

// define defines the alert flags on fs (the once-only and run-only ones by scheduled).
func (c *alertsConfig) define(fs *flag.FlagSet, getenv func(string) string, scheduled bool) {
	fs.StringVar(&c.WatchesFile, "watches", getenv("WATCHES_FILE"), "watches YAML `file` (the format of booking-consumer notify): after each site's crawl its "+
		"events are matched against the watches, claimed in <state-dir>/"+alertsFile+" and sent by the crawler itself, Kafka or not; empty: no alerts [WATCHES_FILE]")
	fs.DurationVar(&c.MaxAge, "alert-max-age", notify.DefaultMaxAge, "an alert whose event occurred longer ago than this when it is claimed or about to be sent is skipped (stale)")
	fs.IntVar(&c.MaxAttempts, "alert-max-attempts", notify.DefaultMaxAttempts, "attempts per alert message on transient errors (timeouts, 5xx, 429) before it is marked failed")
	fs.DurationVar(&c.RetryBase, "alert-retry-backoff", time.Second, "first wait before an alert's retry; doubles per attempt up to 1m (a Retry-After answer wins, capped at 5m)")
	fs.DurationVar(&c.Retention, "alert-retention", defaultAlertRetention, "sent and skipped alerts claimed longer ago than this are deleted from "+alertsFile+" (at start-up and after each run)")
	if scheduled {
		fs.DurationVar(&c.FailingAfter, "alert-failing-after", defaultChannelFailingAfter, "/healthz answers 503 when an alert channel has failed every send for longer than this; 0 never")
	} else {
		fs.DurationVar(&c.Wait, "alert-wait", defaultAlertWait, "after the crawl, how long to wait for the alerts to be sent; the rest stay claimed and go out at the next run")
	}
}

func (c *alertsConfig) validate(scheduled bool) error {
	switch {
	case c.WatchesFile == "":
		return nil
	case c.MaxAge <= 0 || c.RetryBase <= 0 || c.Retention <= 0:
		return fmt.Errorf("%w: --alert-max-age, --alert-retry-backoff and --alert-retention must be positive", cli.ErrUsage)
	case c.MaxAttempts < 1:
		return fmt.Errorf("%w: --alert-max-attempts must be at least 1", cli.ErrUsage)
	case !scheduled && c.Wait < 0, scheduled && c.FailingAfter < 0:
		return fmt.Errorf("%w: --alert-wait and --alert-failing-after must not be negative", cli.ErrUsage)
	}
	return nil
}

// alertsPath is the claim database of the state dir.
func alertsPath(stateDir string) string { return filepath.Join(stateDir, alertsFile) }

// crawlAlerts is the Runner's Alerts hook: it matches a site crawl's events against the watches
// and claims the matches through the engine's Intake (one transaction of the claim store), which
// wakes the channels' senders.
type crawlAlerts struct {
	watches *notify.Config
	intake  *notify.Intake
	wakes   notify.Wakes
	maxAge  time.Duration
	now     func() time.Time
}

var _ crawler.Alerts = (*crawlAlerts)(nil)

func newCrawlAlerts(watches *notify.Config, store notify.ClaimStore, maxAge time.Duration, logger *slog.Logger, metrics *notify.Metrics) *crawlAlerts {
	wakes := notify.NewWakes(watches.UsedChannels())
	return &crawlAlerts{watches: watches, maxAge: maxAge, now: time.Now, wakes: wakes,
		intake: &notify.Intake{Store: store, Metrics: metrics, Logger: logger, Wake: wakes.Wake}}
}

// Claim claims the matches of one site crawl (crawler.Alerts): every match of one watch and
// channel in the crawl is claimed in the one transaction, so they go out as one message.
func (a *crawlAlerts) Claim(ctx context.Context, site, crawlID string, evs []events.Event) error {
	if len(evs) == 0 {
		return nil
	}
	ptrs := make([]*events.Event, len(evs))
	for i := range evs {
		ptrs[i] = &evs[i]
	}
	if _, err := a.intake.Claim(ctx, a.watches.Batch(ptrs, a.now(), a.maxAge)); err != nil {
		return fmt.Errorf("alerts of %s: %w", crawlID, err)
	}
	return nil
}

// unsent counts the claims still waiting to be sent.
func unsent(ctx context.Context, store notify.ClaimStore) (int, error) {
	rows, err := store.List(ctx, notify.Filter{Status: notify.StatusSending, Limit: 1_000_000})
	if err != nil {
		return 0, err
	}
	return len(rows), nil
}
