package crawler

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// fakeClock is a Clock that moves only when the test says: Wait registers until and blocks
// until Advance reaches it.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	until   time.Time // the pending Wait's; zero: none
	wake    chan struct{}
	waiting chan time.Time
}

func newFakeClock(now time.Time) *fakeClock {
	return &fakeClock{now: now, waiting: make(chan time.Time, 1)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Wait(ctx context.Context, until time.Time) error {
	c.mu.Lock()
	if !until.After(c.now) {
		c.mu.Unlock()
		return nil
	}
	wake := make(chan struct{})
	c.until, c.wake = until, wake
	c.mu.Unlock()
	c.waiting <- until
	select {
	case <-wake:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// next is the time the schedule waits for next; the clock then moves there.
func (c *fakeClock) next(t *testing.T) time.Time {
	t.Helper()
	return c.wakeAt(c.peek(t))
}

// peek is the time the schedule waits for next, once it waits: what it did before is done.
func (c *fakeClock) peek(t *testing.T) time.Time {
	t.Helper()
	return testkit.Recv(t, c.waiting, 10*time.Second, "the schedule waiting for its next time")
}

// wakeAt moves the clock to until, the pending Wait's (peek).
func (c *fakeClock) wakeAt(until time.Time) time.Time {
	c.mu.Lock()
	c.now = until
	close(c.wake)
	c.mu.Unlock()
	return until
}

// schedRecorder is a SiteSchedule's Crawl for tests: each call is sent on calls, with the clock's
// time, and returns when release gets a value (or at once with release nil).
type schedRecorder struct {
	clock   *fakeClock
	calls   chan schedCall
	release chan struct{}
	done    chan struct{}
	skipped atomic.Int32
}

type schedCall struct {
	at    time.Time
	sites []string
}

func newSchedRecorder(clock *fakeClock, blocking bool) *schedRecorder {
	r := &schedRecorder{clock: clock, calls: make(chan schedCall, 100), done: make(chan struct{}, 100)}
	if blocking {
		r.release = make(chan struct{})
	}
	return r
}

func (r *schedRecorder) schedule(t *testing.T, sites []*site.Site, times []*site.SiteTimes) SiteSchedule {
	return SiteSchedule{Sites: sites, Times: times, Logger: testkit.Logger(t, slog.LevelInfo), Clock: r.clock, ShutdownTimeout: time.Minute,
		Crawl: func(ctx context.Context, jobs []Job, _ func(int, SiteSummary)) {
			c := schedCall{at: r.clock.Now()}
			for _, j := range jobs {
				c.sites = append(c.sites, j.Site.Name)
			}
			r.calls <- c
			if r.release != nil {
				<-r.release
			}
		},
		OnSkip:     func(string) { r.skipped.Add(1) },
		afterCrawl: func() { r.done <- struct{}{} },
	}
}

func runSiteSchedule(t *testing.T, s SiteSchedule) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	return func() {
		cancel()
		if err := testkit.Recv(t, errc, 15*time.Second, "SiteSchedule.Run after cancel"); err != nil {
			t.Error(err)
		}
	}
}

// TestSiteScheduleCrawlsWhenCheckSays: a site with a schedule, active hours, a jitter and a burst
// is crawled at exactly the times SiteTimes.Upcoming (what crawler check prints) gives, over a
// night and a Monday burst.
func TestSiteScheduleCrawlsWhenCheckSays(t *testing.T) {
	t.Parallel()
	golfSite := timedSite(t, "    schedule: \"*/30 * * * *\"\n    active_hours: \"05:00-23:00\"\n    jitter: 5m\n"+burstKeys)
	st, err := golfSite.Times(DefaultSchedule)
	if err != nil {
		t.Fatal(err)
	}
	from := kst(8, 22, 0, 0) // Sunday evening: the last runs, the night, Monday morning, the burst
	clock := newFakeClock(from)
	rec := newSchedRecorder(clock, false)
	stop := runSiteSchedule(t, rec.schedule(t, []*site.Site{golfSite}, []*site.SiteTimes{st}))
	defer stop()
	want := st.Upcoming(from, 40)
	for i, w := range want {
		if got := clock.next(t); !got.Equal(w) {
			t.Fatalf("wait %d until %s, want %s (check's time)", i, got, w)
		}
		c := testkit.Recv(t, rec.calls, 10*time.Second, "the site's crawl")
		if !c.at.Equal(w) || !slices.Equal(c.sites, []string{"s"}) {
			t.Fatalf("crawl %d at %s of %v, want %s of [s]", i, c.at, c.sites, w)
		}
		testkit.Recv(t, rec.done, 10*time.Second, "the crawl's end")
		if !st.Active(c.at) {
			t.Fatalf("crawl at %s, outside the active hours", c.at)
		}
	}
	if !want[len(want)-1].After(kst(9, 9, 9, 0)) {
		t.Fatalf("the test does not reach through the burst: last %s", want[len(want)-1])
	}
}

// TestSiteScheduleSkipsRunningSite: a burst tick that comes while the site's crawl still runs
// starts no second crawl (skipped, counted); the next tick after it ends does. A site on the global
// schedule due at the same moment as another is crawled in the same call.
func TestSiteScheduleSkipsRunningSite(t *testing.T) {
	t.Parallel()
	sites, err := site.ParseSites([]byte(minimalSite + burstKeys + "  - name: g\n    start_urls: [\"https://golf.example.kr/g\"]\n" +
		"    row: \"tr.row\"\n    fields:\n      course: {selector: \"td.c\"}\n      round_date: {selector: \"td.d\"}\n      tee_time: {selector: \"td.t\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var times []*site.SiteTimes
	for _, s := range sites {
		st, err := s.Times("*/10 * * * *")
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, st)
	}
	clock := newFakeClock(kst(9, 8, 59, 0))
	rec := newSchedRecorder(clock, true)
	stop := runSiteSchedule(t, rec.schedule(t, sites, times))
	defer func() {
		close(rec.release)
		stop()
	}()

	clock.next(t) // 09:00:00: the burst's first tick and the global schedule's run, together
	if c := testkit.Recv(t, rec.calls, 10*time.Second, "the 09:00 crawl"); !slices.Equal(c.sites, []string{"s", "g"}) {
		t.Fatalf("09:00 crawled %v, want [s g] in one call", c.sites)
	}
	if at := clock.next(t); !at.Equal(kst(9, 9, 0, 30)) { // s still running: skipped
		t.Fatalf("next wait until %s, want 09:00:30", at)
	}
	if at := clock.next(t); !at.Equal(kst(9, 9, 1, 0)) { // the wait after the skip
		t.Fatalf("next wait until %s, want 09:01:00", at)
	}
	at := clock.peek(t) // the 09:01:00 tick is handled once the schedule waits again
	if n := rec.skipped.Load(); n != 2 {
		t.Errorf("%d skipped runs, want 2 (09:00:30, 09:01:00)", n)
	}
	select {
	case c := <-rec.calls:
		t.Fatalf("a second crawl started while the first ran: %+v", c)
	default:
	}
	rec.release <- struct{}{}
	testkit.Recv(t, rec.done, 10*time.Second, "the first crawl's end")
	clock.wakeAt(at) // 09:01:30
	if c := testkit.Recv(t, rec.calls, 10*time.Second, "the crawl after the skip"); !c.at.Equal(kst(9, 9, 1, 30)) || !slices.Equal(c.sites, []string{"s"}) {
		t.Fatalf("crawl %+v, want s at 09:01:30", c)
	}
	rec.release <- struct{}{}
}

// TestSiteScheduleRunAtStartKeepsActiveHours: at start-up only the sites inside their active
// hours are crawled.
func TestSiteScheduleRunAtStartKeepsActiveHours(t *testing.T) {
	t.Parallel()
	golfSite := timedSite(t, "    active_hours: \"05:00-23:00\"\n")
	st, err := golfSite.Times("0 * * * *")
	if err != nil {
		t.Fatal(err)
	}
	clock := newFakeClock(kst(9, 23, 30, 0))
	rec := newSchedRecorder(clock, false)
	s := rec.schedule(t, []*site.Site{golfSite}, []*site.SiteTimes{st})
	s.RunAtStart = true
	stop := runSiteSchedule(t, s)
	defer stop()
	if at := clock.next(t); !at.Equal(kst(10, 5, 0, 0)) {
		t.Fatalf("first wait until %s, want 05:00 the next day", at)
	}
	if c := testkit.Recv(t, rec.calls, 10*time.Second, "the 05:00 crawl"); !c.at.Equal(kst(10, 5, 0, 0)) {
		t.Fatalf("first crawl at %s, want 05:00 (none at start-up, at 23:30)", c.at)
	}
}

// TestSiteScheduleOverlapIsPerSite (review 4, F9): two sites on one schedule (@every 2s, due at
// the same ticks), the crawl of "s" blocking: "fast" is crawled at every tick while "s" still
// runs, and only the ticks of "s" are skipped. Before the fix the two were one group whose
// "running" flag stayed set until its slowest site ended, so fast was skipped at every tick.
func TestSiteScheduleOverlapIsPerSite(t *testing.T) {
	t.Parallel()
	sites, err := site.ParseSites([]byte(minimalSite + "    schedule: \"@every 2s\"\n" +
		"  - name: fast\n    start_urls: [\"https://golf.example.kr/f\"]\n    schedule: \"@every 2s\"\n" +
		"    row: \"tr.row\"\n    fields:\n      course: {selector: \"td.c\"}\n      round_date: {selector: \"td.d\"}\n      tee_time: {selector: \"td.t\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	var times []*site.SiteTimes
	for _, s := range sites {
		st, err := s.Times(DefaultSchedule)
		if err != nil {
			t.Fatal(err)
		}
		times = append(times, st)
	}
	clock := newFakeClock(kst(9, 9, 0, 1))
	release := make(chan struct{})
	fast := make(chan time.Time, 100)
	var skipped []string
	var skipMu sync.Mutex
	s := SiteSchedule{Sites: sites, Times: times, Logger: testkit.Logger(t, slog.LevelInfo), Clock: clock, ShutdownTimeout: time.Minute,
		OnSkip: func(site string) { skipMu.Lock(); skipped = append(skipped, site); skipMu.Unlock() },
		Crawl: perSiteCrawl(func(site string) {
			if site == "s" {
				<-release
				return
			}
			fast <- clock.Now()
		}),
	}
	stop := runSiteSchedule(t, s)
	defer func() {
		close(release)
		stop()
	}()
	const ticks = 5
	for i := range ticks {
		at := clock.next(t)
		select {
		case got := <-fast:
			if !got.Equal(at) {
				t.Fatalf("tick %d (%s): fast crawled at %s", i, at, got)
			}
		case <-time.After(10 * time.Second):
			skipMu.Lock()
			t.Fatalf("tick %d (%s): fast not crawled while s runs; skipped so far: %v", i, at, skipped)
		}
	}
	clock.peek(t) // the last tick handled
	skipMu.Lock()
	defer skipMu.Unlock()
	if want := slices.Repeat([]string{"s"}, ticks-1); !slices.Equal(skipped, want) {
		t.Errorf("skipped %v, want %v (the ticks of s after its first)", skipped, want)
	}
}

// perSiteCrawl is a SiteSchedule.Crawl that crawls each site of a call with crawl, all at once,
// reporting each as it ends, as the runner does.
func perSiteCrawl(crawl func(site string)) func(context.Context, []Job, func(int, SiteSummary)) {
	return func(_ context.Context, jobs []Job, done func(int, SiteSummary)) {
		var wg sync.WaitGroup
		for i, j := range jobs {
			wg.Go(func() {
				crawl(j.Site.Name)
				done(i, SiteSummary{Source: j.Site.Name})
			})
		}
		wg.Wait()
	}
}

// setsDemand is a Demand of a fixed list of page sets.
type setsDemand struct {
	mu   sync.Mutex
	sets []PageSet
}

func (d *setsDemand) Watched(_ string, p PageSet, _ time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Contains(d.sets, p)
}

func (d *setsDemand) set(sets ...PageSet) { d.mu.Lock(); d.sets = sets; d.mu.Unlock() }

// stepClock is a Clock for the demand tests: Wait blocks until the test advances the clock to or
// past its time, or its ctx ends; the test waits for the schedule to wait for an expected time.
type stepClock struct {
	mu      sync.Mutex
	now     time.Time
	pending *stepWait     // the Wait in progress
	changed chan struct{} // closed (and replaced) at every change of pending
}

type stepWait struct {
	until time.Time
	wake  chan struct{}
}

func newStepClock(now time.Time) *stepClock {
	return &stepClock{now: now, changed: make(chan struct{})}
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) signal() { close(c.changed); c.changed = make(chan struct{}) }

func (c *stepClock) Wait(ctx context.Context, until time.Time) error {
	c.mu.Lock()
	if !until.After(c.now) {
		c.mu.Unlock()
		return nil
	}
	w := &stepWait{until: until, wake: make(chan struct{})}
	c.pending = w
	c.signal()
	c.mu.Unlock()
	select {
	case <-w.wake:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		if c.pending == w {
			c.pending = nil
			c.signal()
		}
		c.mu.Unlock()
		return ctx.Err()
	}
}

// waitFor waits until the schedule waits for want, then moves the clock there.
func (c *stepClock) waitFor(t *testing.T, want time.Time) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		c.mu.Lock()
		p, ch := c.pending, c.changed
		if p != nil && p.until.Equal(want) {
			c.now = want
			close(p.wake)
			c.pending = nil
			c.signal()
			c.mu.Unlock()
			return
		}
		c.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			got := "nothing"
			if p != nil {
				got = p.until.Format("15:04:05")
			}
			t.Fatalf("the schedule waits for %s, want %s", got, want.Format("15:04:05"))
		}
	}
}

// demandCall is one Crawl call's job of the demand tests: its time and page sets (nil: all).
type demandCall struct {
	at   time.Time
	sets []PageSet
}

// demandSchedule runs a SiteSchedule over one club × 3 dates (schedule every 10 minutes,
// watched_every 1m, confirm_after 20s, watched_budget 20: the budget holds no crawl back) with
// demand d; each crawl reports at once, with the
// listings entered returns (and awaiting, when not nil, as the alerts waiting), then is sent on calls.
func demandSchedule(t *testing.T, clock *stepClock, d Demand, entered, awaiting func(demandCall) []events.Listing) (chan demandCall, []PageSet, func()) {
	t.Helper()
	st := recompiled(t, clubDateSite(t, "http://127.0.0.1:1", 1, 2), func(s *site.SiteSpec) {
		s.Schedule = "*/10 * * * *"
		ca := site.Duration(20 * time.Second)
		s.WatchedEvery, s.ConfirmAfter, s.WatchedBudget = site.Duration(time.Minute), &ca, 20
	})
	times, err := st.Times(DefaultSchedule)
	if err != nil {
		t.Fatal(err)
	}
	calls := make(chan demandCall, 100)
	s := SiteSchedule{Sites: []*site.Site{st}, Times: []*site.SiteTimes{times}, Logger: testkit.Logger(t, slog.LevelInfo), Clock: clock,
		ShutdownTimeout: time.Minute, Demand: d,
		Crawl: func(_ context.Context, jobs []Job, done func(int, SiteSummary)) {
			c := demandCall{at: clock.Now(), sets: jobs[0].Sets}
			sum := SiteSummary{Source: st.Name, At: c.at, Sets: c.sets, Entered: entered(c)}
			if awaiting != nil {
				sum.Awaiting = awaiting(c)
			}
			done(0, sum)
			calls <- c
		},
	}
	return calls, PageSets(st, clock.Now()), runSiteSchedule(t, s)
}

// expectCrawl moves the clock to at, once the schedule waits for it, and checks the crawl it
// starts there: of sets (nil: the whole site).
func expectCrawl(t *testing.T, clock *stepClock, calls chan demandCall, at time.Time, sets []PageSet) {
	t.Helper()
	clock.waitFor(t, at)
	c := testkit.Recv(t, calls, 10*time.Second, "the crawl at "+at.Format("15:04:05"))
	if !c.at.Equal(at) || !slices.Equal(c.sets, sets) || (c.sets == nil) != (sets == nil) {
		t.Fatalf("crawl at %s of %v, want at %s of %v", c.at.Format("15:04:05"), c.sets, at.Format("15:04:05"), sets)
	}
}

// TestSiteScheduleWatchedPageSets (#51 item 1): of a site's 3 page sets one is watched: it is
// crawled alone every minute from the first tick after the watch came (within a minute), the
// scheduled crawl at :10 fetches the other two only (the watched one was fetched within its
// minute), and once no watch asks for it the site is crawled on its schedule only.
func TestSiteScheduleWatchedPageSets(t *testing.T) {
	t.Parallel()
	clock := newStepClock(kst(9, 10, 0, 30))
	d := &setsDemand{}
	calls, sets, stop := demandSchedule(t, clock, d, func(demandCall) []events.Listing { return nil }, nil)
	defer stop()
	if len(sets) != 3 {
		t.Fatalf("page sets %v, want 3 (one club, 3 dates)", sets)
	}
	d.set(sets[1])
	for m := 1; m <= 9; m++ {
		expectCrawl(t, clock, calls, kst(9, 10, m, 30), []PageSet{sets[1]})
	}
	expectCrawl(t, clock, calls, kst(9, 10, 10, 0), []PageSet{sets[0], sets[2]})
	expectCrawl(t, clock, calls, kst(9, 10, 10, 30), []PageSet{sets[1]})
	d.set()
	for m := 11; m <= 19; m++ { // the loop looks for new watches every minute, crawling nothing
		clock.waitFor(t, kst(9, 10, m, 30))
	}
	expectCrawl(t, clock, calls, kst(9, 10, 20, 0), nil)
	select {
	case c := <-calls:
		t.Fatalf("an unexpected crawl %+v", c)
	default:
	}
}

// TestSiteScheduleConfirmCrawl (#51 item 3, the crawler's part): a watched page set whose crawl
// saw an opening is crawled again confirm_after (20 s) later, then on its minute again; an
// opening in an unwatched page set (seen by the scheduled crawl) makes no confirm crawl.
func TestSiteScheduleConfirmCrawl(t *testing.T) {
	t.Parallel()
	clock := newStepClock(kst(9, 10, 0, 30))
	d := &setsDemand{}
	var sets []PageSet
	var setsMu sync.Mutex
	opening := func(p PageSet) events.Listing {
		return events.Listing{Source: "sim-api-post", CourseName: p.Course, PlayDate: p.PlayDate, TeeTime: "07:00"}
	}
	calls, all, stop := demandSchedule(t, clock, d, func(c demandCall) []events.Listing {
		setsMu.Lock()
		defer setsMu.Unlock()
		switch {
		case c.at.Equal(kst(9, 10, 2, 30)): // the watched page set shows an opening
			return []events.Listing{opening(sets[1])}
		case c.at.Equal(kst(9, 10, 10, 0)): // so does an unwatched one, in the scheduled crawl
			return []events.Listing{opening(sets[0])}
		}
		return nil
	}, nil)
	defer stop()
	setsMu.Lock()
	sets = all
	setsMu.Unlock()
	d.set(sets[1])
	expectCrawl(t, clock, calls, kst(9, 10, 1, 30), []PageSet{sets[1]})
	expectCrawl(t, clock, calls, kst(9, 10, 2, 30), []PageSet{sets[1]})
	expectCrawl(t, clock, calls, kst(9, 10, 2, 50), []PageSet{sets[1]}) // the confirm crawl
	for _, at := range []time.Time{kst(9, 10, 3, 50), kst(9, 10, 4, 50), kst(9, 10, 5, 50), kst(9, 10, 6, 50), kst(9, 10, 7, 50),
		kst(9, 10, 8, 50), kst(9, 10, 9, 50)} {
		expectCrawl(t, clock, calls, at, []PageSet{sets[1]})
	}
	expectCrawl(t, clock, calls, kst(9, 10, 10, 0), []PageSet{sets[0], sets[2]})
	expectCrawl(t, clock, calls, kst(9, 10, 10, 50), []PageSet{sets[1]}) // no confirm of sets[0] at 10:10:20
}

// TestSiteScheduleConfirmsAwaitingAlerts (#51 item 3, gap: a watch that adds no demand): an alert
// waiting for its confirmation (SiteSummary.Awaiting, from the alerts hook) makes its page set's
// confirm crawl due confirm_after later though no watch makes the page set watched, again while
// it still waits, and no more once it does not.
func TestSiteScheduleConfirmsAwaitingAlerts(t *testing.T) {
	t.Parallel()
	clock := newStepClock(kst(9, 10, 0, 30))
	var sets []PageSet
	var setsMu sync.Mutex
	calls, all, stop := demandSchedule(t, clock, &setsDemand{}, func(demandCall) []events.Listing { return nil }, func(c demandCall) []events.Listing {
		setsMu.Lock()
		defer setsMu.Unlock()
		if c.at.Before(kst(9, 10, 10, 40)) { // the scheduled crawl claims it, its first confirm crawl misses it once
			return []events.Listing{{Source: "sim-api-post", CourseName: sets[0].Course, PlayDate: sets[0].PlayDate, TeeTime: "07:00"}}
		}
		return nil
	})
	defer stop()
	setsMu.Lock()
	sets = all
	setsMu.Unlock()
	for m := 1; m <= 9; m++ { // the loop looks for new watches every minute, crawling nothing
		clock.waitFor(t, kst(9, 10, m, 30))
	}
	expectCrawl(t, clock, calls, kst(9, 10, 10, 0), nil)
	expectCrawl(t, clock, calls, kst(9, 10, 10, 20), []PageSet{sets[0]})
	expectCrawl(t, clock, calls, kst(9, 10, 10, 40), []PageSet{sets[0]})
	for m := 11; m <= 19; m++ {
		clock.waitFor(t, kst(9, 10, m, 40))
	}
	expectCrawl(t, clock, calls, kst(9, 10, 20, 0), nil)
}
