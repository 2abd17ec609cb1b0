package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
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

// SiteSchedule runs `crawler run` when some site times its own crawls (Site.HasTimes) or a
// Demand is given: every site is crawled at its own SiteTimes.Next, the sites due at the same
// moment in one Crawl call (so that they share their hosts fairly from their first request).
// Overlap is per site: a site whose own previous crawl is still running when its next time comes
// is skipped (logged, reported to OnSkip), so a burst never starts a second crawl of a site, while
// a site of the same call that has finished is crawled again at its next time (review 4, F9).
//
// With a Demand, each site's page sets are scheduled inside its one loop (#51; siteDemand): the
// page sets some watch can match are crawled every watched_every within the site's
// watched_budget, the stalest first beyond it, a watched page set that showed an opening, and any
// page set holding an alert that waits for its confirmation (SiteSummary.Awaiting), again
// confirm_after later, and the scheduled crawl skips the watched page sets fetched within their
// interval; those crawls are partial (Job.Sets). A site whose pages are not page sets keeps its
// schedule only.
//
// The per-host politeness is the runner's, shared by all of the calls. Shutdown is Schedule's: no
// new crawls once ctx ends, the running ones get ShutdownTimeout, then their ctx is cancelled.
type SiteSchedule struct {
	Sites  []*site.Site
	Times  []*site.SiteTimes // indexed like Sites
	Logger *slog.Logger
	// Crawl crawls the jobs once (Runner.RunJobs) and calls done(i, summary) as soon as job i's
	// crawl has ended; a job it returns without reporting ends with the call. Its ctx outlives
	// Run's by ShutdownTimeout.
	Crawl func(ctx context.Context, jobs []Job, done func(i int, s SiteSummary))
	Clock Clock // nil: the real clock
	// ShutdownTimeout: 0 means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// RunAtStart crawls every site inside its active hours as soon as Run starts.
	RunAtStart bool
	// Demand, optional, says which page sets are watched (see above); nil: none.
	Demand    Demand
	OnSkip    func(site string)                   // optional
	OnNext    func(site string, at time.Time)     // optional: a site's next crawl time, each time it changes
	OnWatched func(site string, oldest time.Time) // optional: after each tick, the last fetch of each site's stalest watched page set (zero: none watched)

	afterCrawl func() // tests: called once a Crawl call has returned
}

// siteLoop is one Run of a SiteSchedule: the state its ticks and the crawls' ends share, under mu.
type siteLoop struct {
	s       SiteSchedule
	clock   Clock
	jobCtx  context.Context
	wg      sync.WaitGroup
	wake    chan struct{} // a crawl ended with a crawl due before waiting: look again
	mu      sync.Mutex
	waiting time.Time // the time the loop waits for; zero while it ticks
	running []bool
	next    []time.Time   // each site's next scheduled time
	demand  []*siteDemand // nil for a site without page sets, or without Demand
	sets    [][]PageSet   // each site's page sets at its last tick (demand only)
}

// Run schedules the sites until ctx ends; see SiteSchedule.
func (s SiteSchedule) Run(ctx context.Context) error {
	if s.Logger == nil || s.Crawl == nil || len(s.Times) != len(s.Sites) {
		return errors.New("site schedule: Logger, Crawl and one SiteTimes per site are required")
	}
	grace := s.ShutdownTimeout
	if grace <= 0 {
		grace = DefaultShutdownTimeout
	}
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	l := &siteLoop{s: s, clock: s.Clock, jobCtx: jobCtx, wake: make(chan struct{}, 1),
		running: make([]bool, len(s.Sites)), next: make([]time.Time, len(s.Sites)),
		demand: make([]*siteDemand, len(s.Sites)), sets: make([][]PageSet, len(s.Sites))}
	if l.clock == nil {
		l.clock = realClock{}
	}
	now := l.clock.Now()
	var first []Job
	for i, t := range s.Times {
		l.next[i] = s.advance(i, now)
		if s.Demand != nil && len(PageSets(s.Sites[i], now)) > 0 {
			l.demand[i] = newSiteDemand(t)
		}
		if s.RunAtStart && t.Active(now) {
			l.running[i] = true
			first = append(first, Job{Site: s.Sites[i]})
		}
	}
	if len(first) > 0 {
		l.start(first, now)
	}
	s.Logger.InfoContext(ctx, "site schedules started", "sites", len(s.Sites), "run_at_start", s.RunAtStart,
		"demand", s.Demand != nil)
	for {
		at := l.earliest(now)
		if at.IsZero() {
			<-ctx.Done()
			break
		}
		if l.wait(ctx, at) != nil {
			break
		}
		now = l.clock.Now()
		if jobs := l.tick(ctx, now); len(jobs) > 0 {
			l.start(jobs, now)
		}
	}
	return s.stop(ctx, &l.wg, cancelJobs, grace)
}

// wait waits for the clock to reach at, or for a wake (nil error either way), or for ctx's end.
func (l *siteLoop) wait(ctx context.Context, at time.Time) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	woken := make(chan struct{})
	go func() {
		select {
		case <-l.wake:
			close(woken)
			cancel()
		case <-wctx.Done():
		}
	}()
	err := l.clock.Wait(wctx, at)
	select {
	case <-woken:
		return ctx.Err()
	default:
	}
	return err
}

// earliest is the next time something may be due: a site's schedule, or the watched and
// confirm crawls of a site not running; with a Demand, at most one watched_every from now, so
// that a watch made meanwhile is noticed within its interval.
func (l *siteLoop) earliest(now time.Time) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	at := time.Time{}
	for i, n := range l.next {
		at = minTime(at, n)
		if d := l.demand[i]; d != nil {
			if !l.running[i] {
				at = minTime(at, d.next())
			}
			at = minTime(at, now.Add(d.every))
		}
	}
	if !at.IsZero() && !at.After(now) && l.s.Demand != nil {
		at = now.Add(time.Second) // a due crawl the budget or the active hours hold back: never spin
	}
	l.waiting = at
	return at
}

// tick decides what starts at now: each site not running whose schedule is due, or (with a
// demand) whose watched or confirm crawls are; a site still running skips its scheduled time.
func (l *siteLoop) tick(ctx context.Context, now time.Time) []Job {
	s := l.s
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waiting = time.Time{}
	var jobs []Job
	for i, at := range l.next {
		scheduled := !at.IsZero() && !at.After(now)
		if scheduled {
			l.next[i] = s.advance(i, now)
		}
		if l.running[i] {
			if scheduled {
				s.Logger.InfoContext(ctx, "scheduled crawl skipped: the site's previous crawl is still running",
					"site", s.Sites[i].Name, "due", at)
				if s.OnSkip != nil {
					s.OnSkip(s.Sites[i].Name)
				}
			}
			continue
		}
		job, ok := Job{Site: s.Sites[i]}, scheduled
		if d := l.demand[i]; d != nil {
			job.Sets, ok = l.plan(i, now, scheduled)
		}
		if ok {
			l.running[i] = true
			jobs = append(jobs, job)
		}
	}
	return jobs
}

// plan is site i's page sets to crawl at now (nil: the whole site) and whether to crawl at all.
// l.mu is held.
func (l *siteLoop) plan(i int, now time.Time, scheduled bool) ([]PageSet, bool) {
	s, d := l.s, l.demand[i]
	sets := PageSets(s.Sites[i], now)
	l.sets[i] = sets
	watched := make([]bool, len(sets))
	if s.Times[i].Active(now) {
		for k, p := range sets {
			watched[k] = s.Demand.Watched(s.Sites[i].Name, p, now)
		}
	}
	defer func() {
		if s.OnWatched != nil {
			s.OnWatched(s.Sites[i].Name, d.oldest())
		}
	}()
	if !s.Times[i].Active(now) {
		d.idle()
		return nil, scheduled
	}
	crawl, full := d.plan(now, sets, watched, scheduled)
	if full {
		return nil, true
	}
	return crawl, len(crawl) > 0
}

// start starts one Crawl call of jobs begun at now.
func (l *siteLoop) start(jobs []Job, now time.Time) {
	s := l.s
	idx := make([]int, len(jobs))
	for k, j := range jobs {
		idx[k] = slices.Index(s.Sites, j.Site)
	}
	l.wg.Go(func() {
		var mu sync.Mutex
		reported := make([]bool, len(jobs))
		defer func() {
			if p := recover(); p != nil {
				s.Logger.Error("site crawl panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			}
			mu.Lock()
			defer mu.Unlock()
			for k, i := range idx {
				if !reported[k] { // Crawl did not report it: it ends with the call
					l.ended(i, Job{}, SiteSummary{})
				}
			}
			if s.afterCrawl != nil {
				s.afterCrawl()
			}
		}()
		s.Crawl(l.jobCtx, jobs, func(k int, sum SiteSummary) {
			mu.Lock()
			defer mu.Unlock()
			if !reported[k] {
				reported[k] = true
				l.ended(idx[k], jobs[k], sum)
			}
		})
	})
}

// ended records the end of site i's crawl (job, with its summary; a zero job when Crawl did not
// report it): its running flag is cleared, so that its next time starts its next crawl, and its
// demand learns what the crawl fetched, which page sets it saw change and which hold alerts still
// waiting for their confirmation (confirm crawls). When
// that makes a crawl of the site due before the time the loop waits for, the loop is woken.
func (l *siteLoop) ended(i int, job Job, sum SiteSummary) {
	l.mu.Lock()
	l.running[i] = false
	d := l.demand[i]
	if d != nil && job.Site != nil && sum.Err == nil {
		all := l.sets[i]
		if all == nil {
			all = PageSets(job.Site, sum.At)
		}
		d.done(sum.At, job.Sets, job.Sets == nil, all, setsOf(all, sum.Entered), setsOf(all, sum.Awaiting))
	}
	wake := d != nil && !l.waiting.IsZero() && d.next().Before(l.waiting)
	l.mu.Unlock()
	if wake { // the loop waits for a later time than this site's next crawl
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// setsOf is the page sets of all that cover one of ls.
func setsOf(all []PageSet, ls []events.Listing) []PageSet {
	var out []PageSet
	for _, l := range ls {
		for _, p := range all {
			if p.Covers(l) && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
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
