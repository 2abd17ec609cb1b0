package crawler

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// runClock is the simulated time shared by the sim and the runner in the runner tests.
type runClock struct{ ns atomic.Int64 }

func newRunClock(t time.Time) *runClock { c := &runClock{}; c.Set(t); return c }
func (c *runClock) Now() time.Time      { return time.Unix(0, c.ns.Load()).In(sitesim.KST) }
func (c *runClock) Set(t time.Time)     { c.ns.Store(t.UnixNano()) }
func (c *runClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

// runLogger logs warnings and errors of the code under test to the test's output.
func runLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// runnerSite is the shipped compose/dev/sites.yaml site pointed at base, looking days days ahead,
// with no politeness delay and millisecond backoffs.
func runnerSite(t testing.TB, base string, days int) *site.Site {
	t.Helper()
	return simSite(t, base, days)
}

// runnerSim serves a sim over clock with seed and days of listings ahead.
func runnerSim(t testing.TB, clock *runClock, seed int64, days int) (*sitesim.Site, *httptest.Server) {
	t.Helper()
	sim := sitesim.New(sitesim.Config{Seed: seed, Now: clock.Now, DaysAhead: days, TeeTimesPerDay: 8})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return sim, srv
}

// openEventLog opens dir/events.jsonl, closed when the test ends.
func openEventLog(t testing.TB, dir string) *EventLog {
	t.Helper()
	out, err := OpenEventLog(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
	return out
}

// TestRunnerNoBroker: with KAFKA_BOOTSTRAP empty there is no publisher; the events still go to the
// JSONL file, the summary, the metrics and the snapshot agree, and a second crawl diffs against
// the first one's snapshot.
func TestRunnerNoBroker(t *testing.T) {
	t.Parallel()
	clock := newRunClock(time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST))
	sim, srv := runnerSim(t, clock, 7, 2)
	dir := t.TempDir()
	out := openEventLog(t, dir)
	m := newTestMetrics(clock.Now)
	r := &Runner{Sites: []*site.Site{runnerSite(t, srv.URL, 2)}, State: StateDir{Dir: filepath.Join(dir, "state")},
		Logger: runLogger(t), EventsOut: out, Metrics: m, Now: clock.Now}

	sum1, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s := sum1.Sites[0]
	if wantID := "sim-golf@2025-12-01T10:00:00.000000+09:00"; s.CrawlID != wantID {
		t.Errorf("crawl id %q, want %q", s.CrawlID, wantID)
	}
	wellFormed := 0
	for _, tr := range sim.Visible(clock.Now()) {
		if !tr.Malformed {
			wellFormed++
		}
	}
	if !s.Complete || s.Opened != wellFormed || s.Changed+s.Closed != 0 {
		t.Fatalf("first crawl: %+v; want complete, %d opened and nothing else", s, wellFormed)
	}

	clock.Add(6 * time.Hour) // bookings happen: a first miss each
	sum2, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(10 * time.Minute) // the second miss closes them
	sum3, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if sum3.Sites[0].Closed == 0 {
		t.Errorf("no listing closed over 6 h of bookings: %+v then %+v", sum2.Sites[0], sum3.Sites[0])
	}
	evs := eventstest.ReadEvents(t, out.Path())
	if len(evs) != sum1.Events()+sum2.Events()+sum3.Events() {
		t.Fatalf("events file has %d events, summaries say %d + %d + %d", len(evs), sum1.Events(), sum2.Events(), sum3.Events())
	}
	byType := map[events.Type]int{}
	for _, e := range evs {
		byType[e.EventType]++
	}
	for _, typ := range []events.Type{events.ListingOpened, events.ListingChanged, events.ListingClosed} {
		if got := metricSum(t, m, "crawler_events_total", map[string]string{"type": string(typ)}); got != float64(byType[typ]) {
			t.Errorf("crawler_events_total{type=%s} = %v, events file has %d", typ, got, byType[typ])
		}
	}
	if got := metricSum(t, m, "crawler_runs_total", map[string]string{"outcome": OutcomeOK}); got != 3 {
		t.Errorf("crawler_runs_total{outcome=ok} = %v, want 3", got)
	}
	snap, err := r.State.Load("sim-golf")
	if err != nil {
		t.Fatal(err)
	}
	if snap.CrawlID != sum3.Sites[0].CrawlID {
		t.Errorf("snapshot is of crawl %q, want the last one %q", snap.CrawlID, sum3.Sites[0].CrawlID)
	}
}

// TestRunnerKafka publishes as the product does (the state dir's spool, sent by the
// SpoolPublisher) to the real broker: every event of the crawl reaches the topic, once, and the
// publisher's counters reach the metrics.
func TestRunnerKafka(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	clock := newRunClock(time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST))
	_, srv := runnerSim(t, clock, 11, 2)
	m := newTestMetrics(clock.Now)
	r := &Runner{Sites: []*site.Site{runnerSite(t, srv.URL, 2)}, State: StateDir{Dir: t.TempDir()},
		Logger: runLogger(t), Metrics: m, Now: clock.Now}
	pub := kafkatest.SpoolRunner(t, r, kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic, Logger: runLogger(t), Metrics: m})
	sum, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := pub.Close(ctx); err != nil {
		t.Fatalf("publisher did not drain to a healthy broker: %v", err)
	}
	n, err := kafkatest.EndOffsets(ctx, addr, topic)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Events() == 0 || n != int64(sum.Events()) {
		t.Fatalf("topic holds %d messages, the crawl emitted %d events", n, sum.Events())
	}
	if got := metricSum(t, m, "crawler_publish_sent_total", nil); got != float64(n) {
		t.Errorf("crawler_publish_sent_total = %v, want %d", got, n)
	}
	if got := metricSum(t, m, "crawler_publish_failed_total", nil); got != 0 {
		t.Errorf("failed = %v, want 0", got)
	}
}

// TestRunnerBlackholedBroker: a broker that accepts connections and never answers does not slow
// the crawl (it completes: it only appends to the spool), and nothing is given up: when the
// publisher is closed every event is still in the spool, unsent, for the next run.
func TestRunnerBlackholedBroker(t *testing.T) {
	t.Parallel()
	clock := newRunClock(time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST))
	_, srv := runnerSim(t, clock, 13, 1)
	m := newTestMetrics(clock.Now)
	r := &Runner{Sites: []*site.Site{runnerSite(t, srv.URL, 1)}, State: StateDir{Dir: t.TempDir()},
		Logger: runLogger(t), Metrics: m, Now: clock.Now}
	pub := kafkatest.SpoolRunner(t, r, kafkabus.PublisherConfig{Brokers: []string{testkit.BlackHole(t)}, Topic: "booking-events",
		Logger: slog.New(slog.DiscardHandler), Metrics: m})
	sum, err := r.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Sites[0].Complete || sum.Events() == 0 {
		t.Fatalf("crawl with a black-holed broker: %+v", sum.Sites[0])
	}
	st := pub.CloseWithin(time.Second)
	if st != (kafkabus.PublisherStats{Queued: int64(sum.Events())}) {
		t.Fatalf("publisher %+v; want all %d events kept unsent, none sent or given up", st, sum.Events())
	}
	if got := metricSum(t, m, "crawler_publish_sent_total", nil) + metricSum(t, m, "crawler_publish_failed_total", nil); got != 0 {
		t.Fatalf("sent + failed = %v, want 0", got)
	}
}

// TestRunnerIncompleteAndFailingSites: a site that is down errors without stopping the next one;
// a crawl with a failed page is incomplete, says so in the summary and metrics, and closes
// nothing; the run's error wraps ErrCrawlFailed.
func TestRunnerIncompleteAndFailingSites(t *testing.T) {
	t.Parallel()
	clock := newRunClock(time.Date(2025, 12, 5, 10, 0, 0, 0, sitesim.KST))
	sim, srv := runnerSim(t, clock, 17, 1)
	down := httptest.NewServer(nil)
	downURL := down.URL
	down.Close()
	dead := recompiled(t, runnerSite(t, downURL, 0), func(dead *site.SiteSpec) {
		dead.Name = "dead-golf"
		dead.AllowedDomains = nil
		dead.Politeness.NoRetry, dead.Politeness.Retries = true, 0
	})
	m := newTestMetrics(clock.Now)
	dir := t.TempDir()
	r := &Runner{Sites: []*site.Site{dead, runnerSite(t, srv.URL, 1)}, State: StateDir{Dir: dir},
		Logger: runLogger(t), Metrics: m, Now: clock.Now}

	sum, err := r.Run(t.Context())
	if !errors.Is(err, ErrCrawlFailed) {
		t.Fatalf("run with a dead site: err %v, want ErrCrawlFailed", err)
	}
	if d, ok := sum.Sites[0], sum.Sites[1]; d.Complete || d.Incomplete != IncompleteFailedPages || !ok.Complete || ok.Opened == 0 {
		t.Fatalf("dead site %+v, live site %+v", d, ok)
	}

	// Two hours on, with one page failing for good: listings booked meanwhile must not close.
	clock.Add(2 * time.Hour)
	day := clock.Now().Format("20060102")
	sim.InjectFaults(sitesim.Faults{FailPages: []string{"/tee?date=" + day + "&page=1"}})
	r.Sites = r.Sites[1:]
	sum, err = r.Run(t.Context())
	if !errors.Is(err, ErrCrawlFailed) {
		t.Fatalf("run with a failed page: err %v, want ErrCrawlFailed", err)
	}
	if s := sum.Sites[0]; s.Complete || s.Incomplete != IncompleteFailedPages || s.Closed != 0 {
		t.Fatalf("crawl with a failed page: %+v; want incomplete, no closes", s)
	}
	if got := metricSum(t, m, "crawler_incomplete_crawls_total", map[string]string{"source": "sim-golf"}); got != 1 {
		t.Errorf("crawler_incomplete_crawls_total{source=sim-golf} = %v, want 1", got)
	}
	if got := metricSum(t, m, "crawler_runs_total", map[string]string{"outcome": OutcomeFailed}); got != 2 {
		t.Errorf("crawler_runs_total{outcome=failed} = %v, want 2", got)
	}
}

// TestRunJobsReportsEachSiteAsItEnds (review 4, F9): of two sites crawled in one call, the one
// that ends first is reported to done while the other still waits for its server; the call
// returns once both are reported.
func TestRunJobsReportsEachSiteAsItEnds(t *testing.T) {
	t.Parallel()
	clock := newRunClock(time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST))
	_, srv := runnerSim(t, clock, 7, 0)
	release := make(chan struct{})
	slowSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(slowSrv.Close)
	fastSite := runnerSite(t, srv.URL, 0)
	slowSite := recompiled(t, runnerSite(t, slowSrv.URL, 0), func(s *site.SiteSpec) { s.Name = "slow" })
	r := &Runner{Sites: []*site.Site{slowSite, fastSite}, State: StateDir{Dir: t.TempDir()}, Logger: runLogger(t), Now: clock.Now}
	reported := make(chan string, 2)
	ran := make(chan error, 1)
	go func() {
		_, err := r.RunJobs(t.Context(), Jobs(r.Sites), func(i int, s SiteSummary) { reported <- s.Source })
		ran <- err
	}()
	if got := testkit.Recv(t, reported, 30*time.Second, "the fast site's report"); got != fastSite.Name {
		t.Fatalf("first report %q, want %q (the slow one still waits)", got, fastSite.Name)
	}
	select {
	case err := <-ran:
		t.Fatalf("RunJobs returned (%v) while the slow site still crawls", err)
	default:
	}
	close(release)
	if got := testkit.Recv(t, reported, 30*time.Second, "the slow site's report"); got != "slow" {
		t.Fatalf("second report %q, want slow", got)
	}
	if err := testkit.Recv(t, ran, 30*time.Second, "RunJobs"); err != nil {
		t.Fatal(err)
	}
}
