package crawler

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// deadSite is a copy of healthy pointed at addr (a black hole: it accepts and never answers),
// named name, with one attempt per page and the longest request timeout, so that only the run's
// cancellation or the site's deadline can end its crawl.
func deadSite(t testing.TB, healthy *site.Site, name, addr string) *site.Site {
	t.Helper()
	return recompiled(t, healthy, func(s *site.SiteSpec) {
		s.Name = name
		s.URLTemplate = "http://" + addr + "/tee?date={{.Date.Format \"20060102\"}}&page=1"
		s.AllowedDomains = nil
		s.Politeness.NoRetry, s.Politeness.Retries = true, 0
		s.Politeness.RequestTimeout = site.Duration(5 * time.Minute)
	})
}

// eventLines reads an events file: every line must be one whole event (testkit.ReadEvents fails
// the test otherwise), the last one ended.
func eventLines(t testing.TB, path string) []events.Event {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("%s does not end with a whole line", path)
	}
	return eventstest.ReadEvents(t, path)
}

// TestRunnerDeadSiteDoesNotDelayHealthy: a site whose server accepts connections and never answers
// is listed before a healthy one. The healthy site's crawl ends, and its events are in the events
// file, while the dead site's only request is still in flight (it can only end by the run's
// cancellation: one attempt, 5-minute timeout, no deadline). Crawled one after the other, the
// healthy site would not start until then.
func TestRunnerDeadSiteDoesNotDelayHealthy(t *testing.T) {
	t.Parallel()
	sim := sitesim.New(sitesim.Config{Seed: 3, Now: time.Now, DaysAhead: 1, TeeTimesPerDay: 8})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	healthy := recompiled(t, runnerSite(t, srv.URL, 1), func(s *site.SiteSpec) { s.Name = "healthy" })
	holeAddr, accepts := testkit.CountingBlackHole(t)
	dead := recompiled(t, deadSite(t, healthy, "dead", holeAddr), func(s *site.SiteSpec) { s.DaysAhead = 0 })

	dir := t.TempDir()
	out := openEventLog(t, dir)
	logs := &testkit.SyncBuffer{}
	m := newTestMetrics(time.Now)
	r := &Runner{Sites: []*site.Site{dead, healthy}, State: StateDir{Dir: filepath.Join(dir, "state")},
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), EventsOut: out, Metrics: m, Now: time.Now}

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan RunSummary, 1)
	go func() {
		sum, _ := r.Run(ctx)
		done <- sum
	}()
	testkit.WaitForf(t, 30*time.Second, func() string {
		return "the healthy site crawled while the dead one is in flight; log so far:\n" + logs.String()
	}, func() bool { return siteCrawledLine(logs.String(), "healthy") != nil })
	select {
	case <-done:
		t.Fatal("the run ended before it was cancelled: the dead site was not in flight")
	default:
	}
	if accepts.Load() == 0 {
		t.Fatal("the black hole accepted no connection: the dead site was never tried")
	}
	evs := eventLines(t, out.Path())
	if len(evs) == 0 {
		t.Fatal("the healthy site's events are not in the events file while the dead site is in flight")
	}
	for _, e := range evs {
		if e.Source != "healthy" {
			t.Fatalf("event of source %q in the file; want only the healthy site's", e.Source)
		}
	}
	line := siteCrawledLine(logs.String(), "healthy")
	cancel()
	sum := <-done
	t.Logf("healthy site: logged duration %v, %d events written while the dead site was in flight (%d connections to the black hole)",
		time.Duration(line["duration"].(float64)), len(evs), accepts.Load())
	for _, s := range sum.Sites {
		t.Logf("site %s: complete=%v incomplete=%q err=%v duration=%v", s.Source, s.Complete, s.Incomplete, s.Err, s.Duration)
	}
	if got := sum.Sites[1]; got.Source != "healthy" || !got.Complete || got.Opened == 0 {
		t.Errorf("summary of the healthy site: %+v; want complete with openings, in the sites' order", got)
	}
}

// siteCrawledLine is the JSON log line "site crawled" of site, nil when there is none yet.
func siteCrawledLine(logs, site string) map[string]any {
	for _, l := range strings.Split(logs, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(l), &rec) == nil && rec["msg"] == "site crawled" && rec["site"] == site {
			return rec
		}
	}
	return nil
}

// deadlineSitesYAML is one site at base whose crawl may last deadline.
func deadlineSitesYAML(base, deadline string) string {
	return fmt.Sprintf(`sites:
  - name: club
    start_urls: ["%s/tee"]
    row: "tr.slot"
    fields:
      course: {selector: "td.course"}
      round_date: {selector: "td.date"}
      tee_time: {selector: "td.time"}
    politeness: {no_delay: true, no_retry: true, request_timeout: 5m, ignore_robots_txt: true}
    deadline: %s
`, base, deadline)
}

// TestRunnerSiteDeadline: a site crawled once completely, then hanging (the server accepts the
// request and never answers; one attempt, 5-minute timeout), ends at its sites-file deadline as
// incomplete with reason deadline: not an error, nothing closed (with misses_to_close 1 a
// complete crawl would close both listings), the snapshot keeps them open, the metric counts it
// under the reason and /healthz shows the incomplete run.
func TestRunnerSiteDeadline(t *testing.T) {
	t.Parallel()
	var hang atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang.Load() {
			<-r.Context().Done()
			return
		}
		fmt.Fprint(w, `<html><body><table>
<tr class="slot"><td class="course">레이크 CC</td><td class="date">2025-12-02</td><td class="time">07:00</td></tr>
<tr class="slot"><td class="course">파인 CC</td><td class="date">2025-12-02</td><td class="time">07:10</td></tr>
</table></body></html>`)
	}))
	t.Cleanup(srv.Close)
	sites, err := site.ParseSites([]byte(deadlineSitesYAML(srv.URL, "300ms")))
	if err != nil {
		t.Fatal(err)
	}
	clock := newRunClock(t0)
	dir := t.TempDir()
	logs := &testkit.SyncBuffer{}
	m := newTestMetrics(clock.Now)
	state := StateDir{Dir: filepath.Join(dir, "state")}
	r := &Runner{Sites: sites, State: state, Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		EventsOut: openEventLog(t, dir), Metrics: m, Now: clock.Now, Diff: DiffOptions{MissesToClose: 1}}
	if sum, err := r.Run(t.Context()); err != nil || sum.Sites[0].Opened != 2 {
		t.Fatalf("first crawl: %v, %+v; want complete with 2 openings", err, sum.Sites)
	}

	hang.Store(true)
	clock.Add(10 * time.Minute)
	sum, err := r.Run(t.Context())
	s := sum.Sites[0]
	t.Logf("second crawl: complete=%v incomplete=%q err=%v closed=%d failed_pages=%d (run error: %v)",
		s.Complete, s.Incomplete, s.Err, s.Closed, len(s.FailedPages), err)
	if s.Err != nil || s.Complete || s.Incomplete != IncompleteDeadline || s.Closed != 0 {
		t.Errorf("second crawl: err=%v complete=%v incomplete=%q closed=%d; want incomplete with reason %q, no error, nothing closed",
			s.Err, s.Complete, s.Incomplete, s.Closed, IncompleteDeadline)
	}
	snap, lerr := state.Load("club")
	if lerr != nil || snap.OpenCount() != 2 {
		t.Errorf("snapshot after the deadline: %d open (%v); want both listings still open", snap.OpenCount(), lerr)
	}
	if n := metricSum(t, m, "crawler_incomplete_crawls_total", map[string]string{"source": "club", "reason": IncompleteDeadline}); n != 1 {
		t.Errorf("crawler_incomplete_crawls_total{source=club,reason=deadline} = %v, want 1", n)
	}
	if !strings.Contains(logs.String(), `"reason":"deadline"`) {
		t.Errorf("no log line with reason deadline:\n%s", logs.String())
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
	if !strings.Contains(rec.Body.String(), `"club":{"last_complete_at"`) || !strings.Contains(rec.Body.String(), `"incomplete_runs":1`) {
		t.Errorf("/healthz: %s; want site club with 1 incomplete run", rec.Body.String())
	}
}

// TestRunnerParallelEventsFile: the five shipped sites, all on one simulator (one host), crawled
// in one run into one events file: every line is one whole event, and the file holds exactly the
// run's events.
func TestRunnerParallelEventsFile(t *testing.T) {
	t.Parallel()
	clock := newRunClock(t0)
	sim := sitesim.New(sitesim.Config{Seed: 11, Now: clock.Now, DaysAhead: 2, TeeTimesPerDay: 8, LoginPassword: "pw"})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	var sites []*site.Site
	for _, name := range []string{"sim-golf", "sim-api-get", "sim-api-post", "sim-club-login", "sim-club-page"} {
		if name == "sim-golf" {
			sites = append(sites, runnerSite(t, srv.URL, 2))
			continue
		}
		sites = append(sites, shippedSite(t, name, srv.URL, 2))
	}
	dir := t.TempDir()
	out := openEventLog(t, dir)
	r := &Runner{Sites: sites, State: StateDir{Dir: filepath.Join(dir, "state")}, Logger: runLogger(t),
		EventsOut: out, Now: clock.Now, Getenv: func(k string) string {
			return map[string]string{"SIM_CLUB_USER": sitesim.DefaultUser, "SIM_CLUB_PASSWORD": "pw"}[k]
		}}
	sum, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	evs := eventLines(t, out.Path())
	bySource := map[string]int{}
	for _, e := range evs {
		bySource[e.Source]++
	}
	t.Logf("%d events in the file, by source %v", len(evs), bySource)
	if len(evs) != sum.Events() {
		t.Errorf("%d events in the file, the run emitted %d", len(evs), sum.Events())
	}
	for _, s := range sum.Sites {
		if bySource[s.Source] != s.Opened || s.Opened == 0 {
			t.Errorf("site %s: %d events in the file, %d opened", s.Source, bySource[s.Source], s.Opened)
		}
	}
}

// sharedHostSitesYAML is three sites on one host, one page each, no delay: a and b with
// parallelism 2, c with 1.
func sharedHostSitesYAML(base string) string {
	var b strings.Builder
	b.WriteString("sites:\n")
	for _, site := range []struct {
		name string
		par  int
	}{{"a", 2}, {"b", 2}, {"c", 1}} {
		fmt.Fprintf(&b, `  - name: %[1]s
    start_urls: ["%[2]s/%[1]s"]
    row: "tr.slot"
    fields:
      course: {selector: "td.course"}
      round_date: {selector: "td.date"}
      tee_time: {selector: "td.time"}
    politeness: {no_delay: true, no_retry: true, parallelism: %[3]d, ignore_robots_txt: true}
`, site.name, base, site.par)
	}
	return b.String()
}

// TestRunnerSharesPolitenessPerHost: three sites on one host, crawled in parallel, share the
// strictest parallelism of the three (1), not each their own (2 + 2 + 1). The server holds every
// request until another one waits for the host's slot, or is in flight beside it (a violation),
// or none is left, so what it counts in flight is exact, not a race: never more than 1.
func TestRunnerSharesPolitenessPerHost(t *testing.T) {
	t.Parallel()
	const parallelism, pages = 1, 3
	var (
		hl                       *hostLimits
		inflight, maxIn, arrived atomic.Int64
		host                     string
	)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inflight.Add(1)
		defer inflight.Add(-1)
		for m := maxIn.Load(); n > m && !maxIn.CompareAndSwap(m, n); m = maxIn.Load() {
		}
		arrived.Add(1)
		for hl.waiting(host) == 0 && inflight.Load() <= parallelism && arrived.Load() < pages {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(time.Millisecond): // poll until another request reaches the host
			}
		}
		fmt.Fprintf(w, `<table><tr class="slot"><td class="course">%s CC</td><td class="date">2025-12-02</td><td class="time">07:00</td></tr></table>`,
			strings.Trim(r.URL.Path, "/"))
	}))
	srv.Start()
	t.Cleanup(srv.Close)
	host = strings.TrimPrefix(srv.URL, "http://")
	sites, err := site.ParseSites([]byte(sharedHostSitesYAML(srv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	hl = newHostLimits(sites)
	r := &Runner{Sites: sites, State: StateDir{Dir: t.TempDir()}, Logger: runLogger(t), Now: newRunClock(t0).Now}
	r.hosts = hl
	sum, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d requests, at most %d in flight at the server (host parallelism %d)", arrived.Load(), maxIn.Load(), parallelism)
	if got := maxIn.Load(); got > parallelism {
		t.Errorf("%d requests in flight at once on one host; the sites' shared parallelism is %d", got, parallelism)
	}
	for _, s := range sum.Sites {
		if !s.Complete || s.Opened != 1 {
			t.Errorf("site %s: complete=%v opened=%d; want complete with 1", s.Source, s.Complete, s.Opened)
		}
	}
}
