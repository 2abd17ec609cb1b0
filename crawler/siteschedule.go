package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/internal/retry"
)

// Clock is what SiteSchedule waits on: the real clock, or a fake one in tests.
type Clock interface {
	Now() time.Time
	// Wait blocks until the clock reaches until, or ctx ends (its error).
	Wait(ctx context.Context, until time.Time) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Wait(ctx context.Context, until time.Time) error {
	return retry.Sleep(ctx, time.Until(until))
}

// SiteSchedule runs `crawler run` when some site times its own crawls (Site.HasTimes): every site
// is crawled at its own SiteTimes.Next, the sites due at the same moment in one Crawl call. A
// site whose previous crawl is still running when its next time comes is skipped (logged, reported
// to OnSkip): a burst never starts a second crawl of a site. The per-host politeness is the
// runner's, shared by all of the calls. Shutdown is Schedule's: no new crawls once ctx ends, the
// running ones get ShutdownTimeout, then their ctx is cancelled.
type SiteSchedule struct {
	Sites  []*site.Site
	Times  []*site.SiteTimes // indexed like Sites
	Logger *slog.Logger
	// Crawl crawls sites once (Runner.RunSites). Its ctx outlives Run's by ShutdownTimeout.
	Crawl func(ctx context.Context, sites []*site.Site)
	Clock Clock // nil: the real clock
	// ShutdownTimeout: 0 means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// RunAtStart crawls every site inside its active hours as soon as Run starts.
	RunAtStart bool
	OnSkip     func(site string)               // optional
	OnNext     func(site string, at time.Time) // optional: a site's next crawl time, each time it changes

	afterCrawl func() // tests: called once a Crawl call has returned and its sites may start again
}

// Run schedules the sites until ctx ends; see SiteSchedule.
func (s SiteSchedule) Run(ctx context.Context) error {
	if s.Logger == nil || s.Crawl == nil || len(s.Times) != len(s.Sites) {
		return errors.New("site schedule: Logger, Crawl and one SiteTimes per site are required")
	}
	clock := s.Clock
	if clock == nil {
		clock = realClock{}
	}
	grace := s.ShutdownTimeout
	if grace <= 0 {
		grace = DefaultShutdownTimeout
	}
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		running = make([]bool, len(s.Sites))
	)
	start := func(idx []int) {
		sites := make([]*site.Site, len(idx))
		for k, i := range idx {
			sites[k] = s.Sites[i]
		}
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					s.Logger.Error("site crawl panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				}
				mu.Lock()
				for _, i := range idx {
					running[i] = false
				}
				mu.Unlock()
				if s.afterCrawl != nil {
					s.afterCrawl()
				}
			}()
			s.Crawl(jobCtx, sites)
		})
	}
	now := clock.Now()
	next := make([]time.Time, len(s.Sites))
	var first []int
	for i, t := range s.Times {
		next[i] = s.advance(i, now)
		if s.RunAtStart && t.Active(now) {
			running[i] = true
			first = append(first, i)
		}
	}
	if len(first) > 0 {
		start(first)
	}
	s.Logger.InfoContext(ctx, "site schedules started", "sites", len(s.Sites), "run_at_start", s.RunAtStart)
	for {
		earliest := time.Time{}
		for _, at := range next {
			if !at.IsZero() && (earliest.IsZero() || at.Before(earliest)) {
				earliest = at
			}
		}
		if earliest.IsZero() {
			<-ctx.Done()
			break
		}
		if clock.Wait(ctx, earliest) != nil {
			break
		}
		now := clock.Now()
		var due []int
		mu.Lock()
		for i, at := range next {
			if at.IsZero() || at.After(now) {
				continue
			}
			if running[i] {
				s.Logger.InfoContext(ctx, "scheduled crawl skipped: the site's previous crawl is still running",
					"site", s.Sites[i].Name, "due", at)
				if s.OnSkip != nil {
					s.OnSkip(s.Sites[i].Name)
				}
			} else {
				running[i] = true
				due = append(due, i)
			}
			next[i] = s.advance(i, now)
		}
		mu.Unlock()
		if len(due) > 0 {
			start(due)
		}
	}
	return s.stop(ctx, &wg, cancelJobs, grace)
}

// advance is site i's next time after now, reported to OnNext.
func (s SiteSchedule) advance(i int, now time.Time) time.Time {
	at := s.Times[i].Next(now)
	if s.OnNext != nil {
		s.OnNext(s.Sites[i].Name, at)
	}
	s.Logger.Debug("next crawl", "site", s.Sites[i].Name, "at", at)
	return at
}

// stop waits for the running crawls as Schedule does (awaitStop).
func (s SiteSchedule) stop(ctx context.Context, wg *sync.WaitGroup, cancel context.CancelFunc, grace time.Duration) error {
	stopped := make(chan struct{})
	go func() {
		wg.Wait()
		close(stopped)
	}()
	return awaitStop(ctx, s.Logger, stopped, cancel, grace)
}
