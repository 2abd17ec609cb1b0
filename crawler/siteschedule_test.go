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
		Crawl: func(ctx context.Context, sites []*site.Site) {
			c := schedCall{at: r.clock.Now()}
			for _, s := range sites {
				c.sites = append(c.sites, s.Name)
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
