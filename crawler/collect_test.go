package crawler

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// t0 is the crawl time of most tests: Monday 2025-12-01 10:00 in Seoul.
var t0 = time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST)

// recorder is the test's Metrics and Sleep: it counts and records instead of waiting.
type recorder struct {
	mu       sync.Mutex
	sleeps   []time.Duration
	statuses map[int]int
	rejected map[string]int
	failed   map[string]int // failed pages by reason
	retries  int
}

func newRecorder() *recorder {
	return &recorder{statuses: map[int]int{}, rejected: map[string]int{}, failed: map[string]int{}}
}

func (r *recorder) PageFetched(_ string, status int) {
	r.mu.Lock()
	r.statuses[status]++
	r.mu.Unlock()
}
func (r *recorder) RowRejected(_, reason string) { r.mu.Lock(); r.rejected[reason]++; r.mu.Unlock() }
func (r *recorder) Retry(string)                 { r.mu.Lock(); r.retries++; r.mu.Unlock() }
func (r *recorder) PageFailed(_, reason string)  { r.mu.Lock(); r.failed[reason]++; r.mu.Unlock() }
func (r *recorder) Sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.sleeps = append(r.sleeps, d)
	r.mu.Unlock()
	return ctx.Err()
}

func (r *recorder) deps(t *testing.T) CollectDeps {
	return CollectDeps{Logger: testkit.Logger(t, slog.LevelWarn), Metrics: r, Sleep: r.Sleep}
}

// fast makes a site test-fast: no politeness delay, millisecond backoff.
func fast(t testing.TB, st *site.Site) *site.Site {
	t.Helper()
	return recompiled(t, st, func(s *site.SiteSpec) {
		s.Politeness.NoDelay = true
		s.Politeness.Delay, s.Politeness.RandomDelay = 0, 0
		s.Politeness.BackoffBase = site.Duration(time.Millisecond)
		s.Politeness.BackoffCap = site.Duration(4 * time.Millisecond)
		s.Politeness.RequestTimeout = site.Duration(5 * time.Second)
	})
}

// simSite is the site of compose/dev/sites.yaml pointed at base instead of the default address,
// so the tests exercise the shipped selectors.
func simSite(t testing.TB, base string, daysAhead int) *site.Site {
	t.Helper()
	sites, err := site.LoadSites(filepath.Join("..", "compose", "dev", "sites.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return fast(t, recompiled(t, sites[0], func(s *site.SiteSpec) {
		s.URLTemplate = strings.Replace(s.URLTemplate, "http://"+sitesim.DefaultAddr, base, 1)
		s.DaysAhead = daysAhead
	}))
}

func startSim(t *testing.T, seed int64) (*sitesim.Site, *httptest.Server) {
	t.Helper()
	sim := sitesim.New(sitesim.Config{Seed: seed, Now: func() time.Time { return t0 }})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return sim, srv
}

// faultRun is one crawl of a seed-1 sim under injected faults (collectUnderFaults).
type faultRun struct {
	sim  *sitesim.Site
	srv  *httptest.Server
	site *site.Site
	res  Result
	rec  *recorder
}

// collectUnderFaults crawls daysAhead days of a seed-1 sim serving faults with simSite, first
// changed by edit when edit is not nil.
func collectUnderFaults(t *testing.T, faults sitesim.Faults, daysAhead int, edit func(*site.SiteSpec)) faultRun {
	t.Helper()
	sim, srv := startSim(t, 1)
	sim.InjectFaults(faults)
	run := faultRun{sim: sim, srv: srv, site: simSite(t, srv.URL, daysAhead), rec: newRecorder()}
	if edit != nil {
		run.site = recompiled(t, run.site, edit)
	}
	res, err := Collect(t.Context(), run.site, t0, run.rec.deps(t))
	if err != nil {
		t.Fatal(err)
	}
	run.res = res
	return run
}

// expectedPages is the number of pages the sim shows for dates t0..t0+days.
func expectedPages(sim *sitesim.Site, days int) int {
	perDate := map[string]int{}
	for _, tr := range sim.Visible(t0) {
		perDate[tr.PlayDate]++
	}
	n := 0
	for i := 0; i <= days; i++ {
		rows := perDate[t0.AddDate(0, 0, i).Format("2006-01-02")]
		n += max(1, (rows+19)/20)
	}
	return n
}

// TestCollectSim crawls the simulated site and compares with its ground truth: every well-formed
// visible listing exactly, every malformed one rejected.
func TestCollectSim(t *testing.T) {
	t.Parallel()
	sim, srv := startSim(t, 42)
	rec := newRecorder()
	res, err := Collect(t.Context(), simSite(t, srv.URL, 14), t0, rec.deps(t))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]events.Listing{}
	malformed := 0
	visible := sim.Visible(t0)
	for _, tr := range visible {
		if tr.Malformed {
			malformed++
			continue
		}
		price, players := tr.StateAt(t0)
		want[events.ListingKey("sim-golf", tr.Course, tr.Part, tr.PlayDate, tr.TeeTime)] = events.Listing{
			Values: events.Values{PriceKRW: price, Players: &players}, RoundDate: tr.RoundDate}
	}
	if malformed == 0 {
		t.Fatal("seed 42 has no malformed rows at t0; pick a seed that does")
	}
	for _, l := range res.Listings {
		w, ok := want[l.Key()]
		if !ok {
			t.Errorf("crawled %s, not in the ground truth", l.Key())
			continue
		}
		delete(want, l.Key())
		if fmt.Sprint(deref(l.PriceKRW), deref(l.Players), l.RoundDate) != fmt.Sprint(deref(w.PriceKRW), deref(w.Players), w.RoundDate) {
			t.Errorf("%s: price %v players %v round_date %q; ground truth %v %v %q", l.Key(),
				deref(l.PriceKRW), deref(l.Players), l.RoundDate, deref(w.PriceKRW), deref(w.Players), w.RoundDate)
		}
		if !strings.HasPrefix(l.URL, srv.URL+"/tee?date=") {
			t.Errorf("%s: URL %q is not a listing page of the site", l.Key(), l.URL)
		}
	}
	for k := range want {
		t.Errorf("ground truth listing %s was not crawled", k)
	}
	if res.Rows != len(visible) || res.Rejected != malformed || !res.Complete || len(res.FailedPages) != 0 {
		t.Errorf("rows %d rejected %d complete %v failed %v; want rows %d rejected %d complete",
			res.Rows, res.Rejected, res.Complete, res.FailedPages, len(visible), malformed)
	}
	if want := expectedPages(sim, 14); res.Pages != want {
		t.Errorf("pages %d, want %d", res.Pages, want)
	}
	if rec.rejected[site.RejectBadRoundDate]+rec.rejected[site.RejectBadTeeTime] != malformed {
		t.Errorf("rejections by reason %v, want %d bad dates and times", rec.rejected, malformed)
	}
	t.Logf("%d pages, %d rows, %d listings, %d rejected", res.Pages, res.Rows, len(res.Listings), res.Rejected)
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestCollectRetriesThenSucceeds(t *testing.T) {
	t.Parallel()
	run := collectUnderFaults(t, sitesim.Faults{FailFirst: 2}, 2, nil)
	res, rec, site := run.res, run.rec, run.site
	pages := expectedPages(run.sim, 2)
	if !res.Complete || res.Pages != pages || res.Retries != 2*pages || rec.retries != 2*pages {
		t.Errorf("complete %v pages %d retries %d (metric %d); want complete, %d pages, %d retries",
			res.Complete, res.Pages, res.Retries, rec.retries, pages, 2*pages)
	}
	if rec.statuses[500] != 2*pages || rec.statuses[200] != pages {
		t.Errorf("statuses %v, want %d×500 and %d×200", rec.statuses, 2*pages, pages)
	}
	for _, d := range rec.sleeps {
		if d <= 0 || d > site.Politeness.BackoffCap.D() {
			t.Errorf("backoff %s outside (0, %s]", d, site.Politeness.BackoffCap.D())
		}
	}
}

func TestCollectPageAlwaysFails(t *testing.T) {
	t.Parallel()
	bad := "/tee?date=20251202&page=1"
	run := collectUnderFaults(t, sitesim.Faults{FailPages: []string{bad}}, 2, nil)
	res, site := run.res, run.site
	if res.Complete || len(res.FailedPages) != 1 || res.FailedPages[0] != run.srv.URL+bad {
		t.Errorf("complete %v failed %v; want incomplete with only %s failed", res.Complete, res.FailedPages, bad)
	}
	if got := run.sim.Requests()[bad]; got != 1+site.Politeness.Retries {
		t.Errorf("%s requested %d times, want 1 + %d retries", bad, got, site.Politeness.Retries)
	}
	dates := map[string]bool{}
	for _, l := range res.Listings {
		dates[l.PlayDate] = true
	}
	if !dates["2025-12-01"] || !dates["2025-12-03"] || dates["2025-12-02"] {
		t.Errorf("listings on dates %v; want the other dates crawled and none from the failed one", dates)
	}
}

func TestCollectHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	run := collectUnderFaults(t, sitesim.Faults{ThrottleFirst: 1, RetryAfter: 3 * time.Second}, 1, nil)
	res, rec := run.res, run.rec
	pages := expectedPages(run.sim, 1)
	if !res.Complete || rec.statuses[429] != pages || len(rec.sleeps) != pages {
		t.Errorf("complete %v statuses %v sleeps %v; want complete with %d 429s each waited out", res.Complete,
			rec.statuses, rec.sleeps, pages)
	}
	for _, d := range rec.sleeps {
		if d != 3*time.Second {
			t.Errorf("waited %s after a 429 with Retry-After: 3, want 3s", d)
		}
	}
}

func TestCollectTimeoutRetried(t *testing.T) {
	t.Parallel()
	run := collectUnderFaults(t, sitesim.Faults{SlowFirst: 1, SlowDelay: 10 * time.Second}, 0, func(st *site.SiteSpec) {
		st.Politeness.RequestTimeout = site.Duration(150 * time.Millisecond)
	})
	res, rec := run.res, run.rec
	if pages := expectedPages(run.sim, 0); !res.Complete || res.Retries != pages || rec.statuses[0] != pages {
		t.Errorf("complete %v retries %d statuses %v; want complete after %d timeouts", res.Complete, res.Retries,
			rec.statuses, pages)
	}
}

func TestCollectCancelled(t *testing.T) {
	t.Parallel()
	_, srv := startSim(t, 1)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	res, err := Collect(ctx, simSite(t, srv.URL, 1), t0, newRecorder().deps(t))
	if err == nil || res.Complete {
		t.Errorf("cancelled crawl: err %v complete %v; want an error and incomplete", err, res.Complete)
	}
}
