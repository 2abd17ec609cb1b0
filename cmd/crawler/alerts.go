package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
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
	NoBacklog    bool          // new and changed watches hear only of what enters them from now
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
	fs.BoolVar(&c.NoBacklog, "no-backlog", false, "a new or changed watch (or a site's first crawl) claims nothing of what matches already; "+
		"without it, its first evaluation sends what matches now once, worded as already open (a watch's backlog: false does the same for it)")
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
// wakes the channels' senders. A watch new or changed on a site (its fingerprint, kept in the
// store per watch and site, differs) also claims, in that transaction, the backlog: what matches
// in the snapshot about to be saved, worded as already open (notify.Watch.BacklogClaims).
type crawlAlerts struct {
	live      *notify.Live // the file's watches and the chat's, swapped whole on a change
	intake    *notify.Intake
	fps       fingerprintStore
	noBacklog bool // --no-backlog: new and changed watches start from now
	wakes     notify.Wakes
	maxAge    time.Duration
	now       func() time.Time

	mu    sync.Mutex
	known map[string]map[string]string // site → watch → fingerprint recorded (a cache of fps)
}

// fingerprintStore reads the fingerprints the watches were last evaluated with on a site
// (liteclaims.Store).
type fingerprintStore interface {
	Fingerprints(ctx context.Context, source string) (map[string]string, error)
}

var _ crawler.Alerts = (*crawlAlerts)(nil)

func newCrawlAlerts(live *notify.Live, store alertStore, maxAge time.Duration, noBacklog bool, logger *slog.Logger, metrics *notify.Metrics) *crawlAlerts {
	wakes := notify.NewWakes(live.File().UsedChannels())
	return &crawlAlerts{live: live, maxAge: maxAge, now: time.Now, wakes: wakes, fps: store, noBacklog: noBacklog,
		known: map[string]map[string]string{}, intake: &notify.Intake{Store: store, Metrics: metrics, Logger: logger, Wake: wakes.Wake}}
}

// Claim claims the matches of one site crawl (crawler.Alerts): every match of one watch and
// channel in the crawl is claimed in the one transaction, so they go out as one message. On the
// first crawl of a site every event is the opening of a listing that was open before the crawler
// looked: those are claimed as the backlog of every watch (worded as already open), not as
// openings.
func (a *crawlAlerts) Claim(ctx context.Context, c crawler.AlertCrawl) error {
	now := a.now()
	ptrs := make([]*events.Event, len(c.Events))
	for i := range c.Events {
		ptrs[i] = &c.Events[i]
	}
	watches := a.live.Load()
	b := watches.Batch(ptrs, now, a.maxAge)
	if c.First {
		b.Claims = nil
	}
	asking, err := a.asking(ctx, watches, c.Site, c.First)
	if err != nil {
		return fmt.Errorf("alerts of %s: %w", c.CrawlID, err)
	}
	if len(asking) > 0 {
		var open []*events.Event
		if !a.noBacklog {
			evs := c.Next.Openings()
			open = make([]*events.Event, len(evs))
			for i := range evs {
				open[i] = &evs[i]
			}
		}
		b.AddBacklog(asking, open, c.Site, a.noBacklog)
	}
	if _, err := a.intake.Claim(ctx, b); err != nil {
		return fmt.Errorf("alerts of %s: %w", c.CrawlID, err)
	}
	a.mu.Lock()
	for _, f := range b.Fingerprints {
		a.known[c.Site][f.Watch] = f.Fingerprint
	}
	a.mu.Unlock()
	return nil
}

// asking returns the watches (not muted) that ask site for the first time with their current
// conditions: all of them on the site's first crawl, else those whose recorded fingerprint is
// another or none.
func (a *crawlAlerts) asking(ctx context.Context, watches *notify.Config, site string, first bool) ([]*notify.Watch, error) {
	a.mu.Lock()
	known, ok := a.known[site]
	a.mu.Unlock()
	if !ok {
		fps, err := a.fps.Fingerprints(ctx, site)
		if err != nil {
			return nil, err
		}
		a.mu.Lock()
		a.known[site], known = fps, fps
		a.mu.Unlock()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return watches.Asking(known, first), nil
}

// unsent counts the claims still waiting to be sent.
func unsent(ctx context.Context, store notify.ClaimStore) (int, error) {
	rows, err := store.List(ctx, notify.Filter{Status: notify.StatusSending, Limit: 1_000_000})
	if err != nil {
		return 0, err
	}
	return len(rows), nil
}
