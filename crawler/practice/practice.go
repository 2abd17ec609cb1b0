// Package practice generates the deterministic practice set of booking events: a simulated season
// of crawls of the simulated booking site (crawler/sitesim), run in-process through the production
// crawl path (crawler.Runner: Collect, the completeness gate, Diff, StateDir snapshots), with an
// in-memory publisher that keeps the events, written as JSON lines in
// the format `crawler --events-out` and `booking-consumer export` write (one events.Encode per
// line).
//
// The same Options give a byte-identical file: the site is a pure function of (seed, clock), the
// clock is driven to each crawl time instead of running, crawl ids are derived from the crawl time
// (crawler.CrawlID),
// occurred_at is the crawl time (a close's is the earlier crawl that first missed the listing), and
// Collect and Diff sort what they return. The defaults (21 days,
// a crawl every 4 simulated hours, 21 tee times per course part) give 7,072 events for seed 1, the
// size of a season that users replay to practise Kafka, in about 126 crawls (5-10 s on 2 cores).
//
// It does not publish and does not touch Kafka or PostgreSQL.
package practice

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/spool"
)

// Defaults of Options. With these the set holds 7,072 events for seed 1 (3,752 opened, 354
// changed, 2,966 closed): 7 course parts × 21 tee times over the 36 play dates the season shows.
// The crawl interval barely changes the count (every 30 min gave 2% more events) but sets the run
// time, which is one crawl of ~1,500 rows per interval: 4 h keeps the default set at ~126 crawls.
const (
	DefaultDays           = 21
	DefaultInterval       = 4 * time.Hour
	DefaultSeed           = 1
	DefaultTeeTimesPerDay = 21
	// DefaultSource is the events' source: the name of the simulated site in crawler/sitesim/sites.yaml.
	DefaultSource = "sim-golf"
	// simHost is the host the in-memory transport answers for; nothing listens on it.
	simHost = "sim.practice.invalid"
)

// DefaultStart is when the simulated season begins: Wednesday 2026-04-01 06:00 in Seoul. It is
// fixed, not the current time, so that the set never depends on when it was generated.
var DefaultStart = time.Date(2026, 4, 1, 6, 0, 0, 0, sitesim.KST)

// Options configure Generate. Zero fields take the Default* values.
type Options struct {
	Seed     int64         // the simulated site's seed; DefaultSeed when 0
	Days     int           // length of the season in days; DefaultDays when ≤ 0
	Interval time.Duration // simulated time between crawls; DefaultInterval when ≤ 0
	Start    time.Time     // the first crawl; DefaultStart when zero
	// TeeTimesPerDay per course part of the simulated site; DefaultTeeTimesPerDay when ≤ 0.
	TeeTimesPerDay int
	// Logger receives the crawler's logs (malformed rows are logged at Warn); nil discards them.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.Days <= 0 {
		o.Days = DefaultDays
	}
	if o.Interval <= 0 {
		o.Interval = DefaultInterval
	}
	if o.Start.IsZero() {
		o.Start = DefaultStart
	}
	if o.TeeTimesPerDay <= 0 {
		o.TeeTimesPerDay = DefaultTeeTimesPerDay
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Stats counts what Generate did.
type Stats struct {
	Crawls     int                 // crawls run
	Incomplete int                 // crawls that were not complete (none expected: the site injects no faults)
	Pages      int                 // pages fetched and parsed
	Rejected   int                 // malformed rows skipped by the crawler
	Events     int                 // events written
	ByType     map[events.Type]int // events written by type
	First      time.Time           // the first crawl
	Last       time.Time           // the last crawl
}

// Generate runs a season of crawls of a simulated site and writes every event the diff emits to w,
// one events.Encode per line, in crawl order (within a crawl, as Diff sorts them). It stops with
// ctx's error when ctx ends; what was written until then is a valid prefix of the full set.
func Generate(ctx context.Context, w io.Writer, opts Options) (Stats, error) {
	opts = opts.withDefaults()
	stats := Stats{ByType: map[events.Type]int{}}

	var (
		mu  sync.Mutex
		now time.Time
	)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	st := sitesim.New(sitesim.Config{Seed: opts.Seed, Now: clock, TeeTimesPerDay: opts.TeeTimesPerDay})

	dir, err := os.MkdirTemp("", "golf-practice-state-")
	if err != nil {
		return stats, fmt.Errorf("generate practice set: state dir: %w", err)
	}
	defer os.RemoveAll(dir)

	sim, err := simSite(opts.Interval)
	if err != nil {
		return stats, fmt.Errorf("generate practice set: %w", err)
	}
	runner := &crawler.Runner{
		Sites:     []*site.Site{sim},
		State:     crawler.StateDir{Dir: dir},
		Logger:    opts.Logger,
		Now:       clock,
		Transport: handlerTransport{st},
	}
	sp, err := openSpool(runner)
	if err != nil {
		return stats, fmt.Errorf("generate practice set: %w", err)
	}
	defer func() { _ = sp.Close(); runner.Unlock() }()
	bw := bufio.NewWriterSize(w, 64<<10)
	end := opts.Start.Add(time.Duration(opts.Days) * 24 * time.Hour)
	for at := opts.Start; at.Before(end); at = at.Add(opts.Interval) {
		if err := ctx.Err(); err != nil {
			_ = bw.Flush()
			return stats, fmt.Errorf("generate practice set: stopped before the crawl at %s: %w", at.Format(time.RFC3339), err)
		}
		mu.Lock()
		now = at
		mu.Unlock()
		sum, err := runner.Run(ctx)
		if err != nil && ctx.Err() != nil {
			_ = bw.Flush()
			return stats, fmt.Errorf("generate practice set: crawl at %s: %w", at.Format(time.RFC3339), err)
		}
		// Any other error is an incomplete crawl (counted); its events are still the production
		// path's output, so they are written like the others.
		stats.Crawls++
		for _, s := range sum.Sites {
			stats.Pages += s.Pages
			stats.Rejected += s.Rejected
			if !s.Complete {
				stats.Incomplete++
			}
		}
		evs, err := committed(ctx, sp)
		if err != nil {
			_ = bw.Flush()
			return stats, fmt.Errorf("generate practice set: crawl at %s: %w", at.Format(time.RFC3339), err)
		}
		if err := writeEvents(bw, evs, &stats); err != nil {
			return stats, fmt.Errorf("generate practice set: %w", err)
		}
		if stats.First.IsZero() {
			stats.First = at
		}
		stats.Last = at
	}
	if err := bw.Flush(); err != nil {
		return stats, fmt.Errorf("generate practice set: write: %w", err)
	}
	return stats, nil
}

// writeEvents writes evs to bw, one events.Encode per line, and counts them in stats. On an
// encoding error it flushes what came before, so the output stays a valid prefix.
func writeEvents(bw *bufio.Writer, evs []events.Event, stats *Stats) error {
	for _, e := range evs {
		b, err := events.Encode(e)
		if err != nil {
			_ = bw.Flush()
			return fmt.Errorf("encode event %s: %w", e.EventID, err)
		}
		if _, err := bw.Write(b); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		if err := bw.WriteByte('\n'); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		stats.Events++
		stats.ByType[e.EventType]++
	}
	return nil
}

// openSpool takes r's state dir lock and opens its spool as a Kafka crawler's (kept until a
// cursor acknowledges it), with a cursor at its start: the crawls' way out, read by committed.
func openSpool(r *crawler.Runner) (*spool.Spool, error) {
	if err := r.Lock(); err != nil {
		return nil, err
	}
	sp, err := r.OpenSpool(spool.Options{Retain: true, Logger: r.Logger})
	if err == nil {
		_, err = sp.OpenCursor("practice", "practice")
	}
	if err != nil {
		if sp != nil {
			_ = sp.Close()
		}
		r.Unlock()
		return nil, err
	}
	return sp, nil
}

// committed returns the events the crawls committed since the last call, in order (within a
// crawl, as Diff sorts them), and acknowledges them.
func committed(ctx context.Context, sp *spool.Spool) ([]events.Event, error) {
	items, err := sp.Next(ctx, math.MaxInt, false)
	if err != nil || len(items) == 0 {
		return nil, err
	}
	evs := make([]events.Event, len(items))
	for i, it := range items {
		evs[i] = it.Event
	}
	return evs, sp.Ack(items[len(items)-1].After)
}

// simSite is the DefaultSource entry of the simulator's sites (sitesim.SitesYAML, their one
// definition; compose/dev/sites.yaml is derived from it), pointed at the in-memory host, with no
// politeness delay: nothing real is crawled.
func simSite(interval time.Duration) (*site.Site, error) {
	specs, err := site.ParseSpecs(sitesim.SitesYAML)
	if err != nil {
		return nil, fmt.Errorf("crawler/sitesim/sites.yaml: %w", err)
	}
	i := slices.IndexFunc(specs, func(s site.SiteSpec) bool { return s.Name == DefaultSource })
	if i < 0 {
		return nil, fmt.Errorf("crawler/sitesim/sites.yaml has no site %s", DefaultSource)
	}
	s := specs[i]
	s.URLTemplate = strings.Replace(s.URLTemplate, "http://"+sitesim.DefaultAddr+"/", "http://"+simHost+"/", 1)
	s.AllowedDomains = []string{simHost}
	s.Politeness = site.Politeness{
		NoDelay:        true,
		Parallelism:    2,
		RequestTimeout: site.Duration(min(interval, 10*time.Second)),
		Retries:        1,
		BackoffBase:    site.Duration(time.Millisecond),
		BackoffCap:     site.Duration(time.Millisecond),
	}
	st, err := s.Compile()
	if err != nil {
		return nil, fmt.Errorf("crawler/sitesim/sites.yaml's %s pointed at %s: %w", DefaultSource, simHost, err)
	}
	return st, nil
}

// handlerTransport answers every request by calling the site's handler in-process: no sockets,
// no ports, same bytes as over HTTP.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	if r.URL.Host != simHost {
		return nil, errors.New("practice transport: only " + simHost + " is served")
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}
