package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/liteclaims"
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

// alertsConfig is the configuration of the crawler-side alerts (--watches and the --alert-* flags):
// the service's (Commands and FailingAfter in run; Now, the claim clock, set by tests) and once's
// wait.
type alertsConfig struct {
	alerts.Config
	WatchesFile string
	Wait        time.Duration // once: how long to wait for the sends after the crawl
}

// define defines the alert flags on fs (the once-only and run-only ones by scheduled).
func (c *alertsConfig) define(fs *flag.FlagSet, getenv func(string) string, scheduled bool) {
	fs.StringVar(&c.WatchesFile, "watches", getenv("WATCHES_FILE"), "watches YAML `file` (the format of booking-consumer notify): after each site's crawl its "+
		"events are matched against the watches, claimed in <state-dir>/"+alertsFile+" and sent by the crawler itself, Kafka or not; empty: no alerts [WATCHES_FILE]")
	fs.BoolVar(&c.NoBacklog, "no-backlog", false, "a new or changed watch (or a site's first crawl) claims nothing of what matches already; "+
		"without it, its first evaluation sends what matches now once, worded as already open (a watch's backlog: false does the same for it)")
	fs.DurationVar(&c.MaxAge, "alert-max-age", notify.DefaultMaxAge, "an alert whose event occurred longer ago than this when it is claimed or about to be sent is skipped (stale)")
	fs.IntVar(&c.MaxAttempts, "alert-max-attempts", notify.DefaultMaxAttempts, "attempts per alert message on transient errors (timeouts, 5xx, 429) before it is marked failed")
	fs.DurationVar(&c.RetryBase, "alert-retry-backoff", time.Second, "first wait before an alert's retry; doubles per attempt up to 1m (a Retry-After answer wins, capped at 5m)")
	fs.DurationVar(&c.Retention, "alert-retention", defaultAlertRetention, "sent and skipped alerts claimed longer ago than this are deleted from "+alertsFile+" (at start-up and after each run)")
	c.Commands = scheduled
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

// alertsRuntime is the crawler-side alerts of one crawler process: the alert service over the
// claim store in the state dir (SQLite), and the Runner's hook into it.
type alertsRuntime struct {
	svc   *alerts.Service
	store *liteclaims.Store
	hook  crawlHook
}

// openAlertStore opens (creating it if needed) the alerts database of stateDir. A database that
// cannot be read (a truncated file, a bad header) is an error naming the file, never a fresh
// start that would alert everything again.
func openAlertStore(ctx context.Context, stateDir string) (*liteclaims.Store, error) {
	st, err := liteclaims.Open(ctx, alertsPath(stateDir))
	if err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	return st, nil
}

// openAlerts opens the state dir's alerts database for watches and builds the alert service over
// it, its metrics, the oldest unsent claim's age and its /healthz sections registered on m. The
// caller holds the state dir's lock.
func openAlerts(ctx context.Context, env cli.Env, stateDir string, cfg alertsConfig, watches *notify.Config,
	m *crawlerMetrics) (*alertsRuntime, error) {
	st, err := openAlertStore(ctx, stateDir)
	if err != nil {
		return nil, err
	}
	acfg := cfg.Config
	acfg.Watches, acfg.Logger = watches, env.Logger
	if m != nil {
		acfg.Registerer, acfg.MetricsPrefix = m.reg, "crawler_"
	}
	svc, err := alerts.New(st, acfg)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	if m != nil {
		for _, h := range svc.Health() {
			m.health.AddHealthCheck(h.Name, h.Check)
		}
	}
	return &alertsRuntime{svc: svc, store: st, hook: crawlHook{svc}}, nil
}

// close stops the service, giving the sends in flight grace to be answered and marked, and
// closes the database.
func (a *alertsRuntime) close(grace time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return errors.Join(a.svc.Stop(ctx), a.store.Close())
}

// crawlHook is the Runner's Alerts hook: a site crawl's events, with the snapshot about to be
// saved as what is open now and as the evidence that confirms the alerts waiting (confirm_after),
// claimed by the service before the snapshot is saved.
type crawlHook struct{ svc *alerts.Service }

var (
	_ crawler.Alerts         = crawlHook{}
	_ crawler.AlertsAwaiting = crawlHook{}
)

func (h crawlHook) Claim(ctx context.Context, c crawler.AlertCrawl) error {
	cf := &alerts.Confirm{At: c.At, After: c.ConfirmAfter, Seen: func(key string) alerts.Sighting { return sighting(c, key) }}
	if _, err := h.svc.Claim(ctx, alerts.Crawl{Events: c.EventRefs(), Site: c.Site, First: c.First, Open: c.Next, Confirm: cf}); err != nil {
		return fmt.Errorf("alerts of %s: %w", c.CrawlID, err)
	}
	return nil
}

// Awaiting implements crawler.AlertsAwaiting: the listings of site whose alerts wait for their
// confirm crawl.
func (h crawlHook) Awaiting(site string) []events.Listing { return h.svc.Awaiting(site) }

// sighting is the listing of key as crawl c leaves it: in its snapshot about to be saved (gone:
// not open), shown when the crawl covered its page set and saw it without a miss pending.
func sighting(c crawler.AlertCrawl, key string) alerts.Sighting {
	e, ok := c.Next.Listings[key]
	if !ok {
		return alerts.Sighting{}
	}
	return alerts.Sighting{Listing: e.Listing, Open: e.Open(), Since: e.FirstSeen,
		Shows: e.Open() && e.Misses == 0 && e.Suspect == 0 && c.Covered != nil && c.Covered(e.Listing)}
}
