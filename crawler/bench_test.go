package crawler

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/events/spool"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// BenchmarkCrawlBlackholedVsNoBroker measures the wall time of one crawl of the simulated site
// (default sim: 4 courses, 7 parts, 16 tee times, 15 play dates, ~90 pages, ~1600 events, zero
// politeness delay) publishing three ways: as the product does with KAFKA_BOOTSTRAP set (the
// state dir's spool, sent by a SpoolPublisher) to the stack's healthy broker, the same to a
// broker that accepts connections and never answers, and with no broker (no spool, no
// publisher). The three kinds of crawl take turns inside one loop (in a rotating order), so
// drift on a shared machine hits all alike; each publisher is closed after its crawl, outside
// the time. It reports the median ms per crawl of each and two ratios of medians:
//
//	blackholed_vs_healthy   target ≤ 1.05: a dead broker must not slow the crawl
//	blackholed_vs_nobroker  what publishing costs at all: the spool append with its fsync per
//	                        site crawl (broker up or down)
//
// Every crawl starts from an empty snapshot, so every listing is an event.
//
//	go test -bench CrawlBlackholed -run '^$' ./crawler/
func BenchmarkCrawlBlackholedVsNoBroker(b *testing.B) {
	at := time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST)
	clock := newRunClock(at)
	_, srv := runnerSim(b, clock, 42, 14)
	st := runnerSite(b, srv.URL, 14)
	quiet := slog.New(slog.DiscardHandler)

	addr := kafkatest.Bootstrap(b)
	const nop, healthy, holed = 0, 1, 2
	pubs := []kafkabus.PublisherConfig{
		nop:     {},
		healthy: {Brokers: []string{addr}, Topic: kafkatest.Topic(b, addr, 3), Logger: quiet},
		holed:   {Brokers: []string{testkit.BlackHole(b)}, Topic: "booking-events", Logger: quiet},
	}
	flush := []time.Duration{nop: 0, healthy: 10 * time.Second, holed: 0} // the black hole never answers
	dir := b.TempDir()
	crawl := func(p int) time.Duration {
		state, err := os.MkdirTemp(dir, "state-")
		if err != nil {
			b.Fatal(err)
		}
		r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: state}, Logger: quiet, Now: clock.Now}
		if p != nop {
			defer kafkatest.SpoolRunner(b, r, pubs[p]).CloseWithin(flush[p])
		}
		t0 := time.Now()
		sum, err := r.Run(b.Context())
		d := time.Since(t0)
		if err != nil || sum.Events() == 0 {
			b.Fatalf("crawl: %v, %d events", err, sum.Events())
		}
		return d
	}
	for p := range pubs { // warm up the sim, the connection pool and the writers
		crawl(p)
	}
	var rounds [3][]float64 // ms of each crawl, by publisher
	i := 0
	for b.Loop() {
		for k := range pubs {
			p := (i + k) % len(pubs)
			rounds[p] = append(rounds[p], crawl(p).Seconds()*1000)
		}
		i++
	}
	// Medians: a crawl that a GC pause or the other core's work stretched moves a sum (and a
	// ratio of sums) by several percent on this 2-core machine, the median not.
	med := [3]float64{median(rounds[nop]), median(rounds[healthy]), median(rounds[holed])}
	b.ReportMetric(med[nop], "nobroker_ms/crawl")
	b.ReportMetric(med[healthy], "healthy_ms/crawl")
	b.ReportMetric(med[holed], "blackholed_ms/crawl")
	b.ReportMetric(med[holed]/med[healthy], "blackholed_vs_healthy")
	b.ReportMetric(med[holed]/med[nop], "blackholed_vs_nobroker")
}

// median is the middle value of xs (the mean of the two middle ones for an even count).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// cancelAfterSite is an Alerts hook that cancels a run once site's crawl reaches its claims, i.e.
// once it has collected and diffed (what is left, the save and the commit, does not wait on ctx).
type cancelAfterSite struct {
	site   string
	cancel context.CancelFunc
}

func (c cancelAfterSite) Claim(_ context.Context, a AlertCrawl) error {
	if a.Site == c.site {
		c.cancel()
	}
	return nil
}

// BenchmarkHealthySiteBesideDeadSite measures the crawl time of a healthy site (the simulated
// site, 15 play dates, zero politeness delay; its SiteSummary.Duration, what "site crawled" logs)
// alone and with a dead site listed before it in the same run: the dead site's server accepts
// connections and never answers (one attempt per page, 5-minute timeout, no deadline), so only
// the run's cancellation, as soon as the healthy site's crawl is done, ends it. The two
// kinds of run take turns inside one loop. It reports the median ms of each and their ratio:
//
//	beside_dead_vs_alone   target ≤ 1.1 (< 1 s of delay): a dead site must not delay a healthy one;
//	                       crawled one after the other, the healthy site waited for the dead one's
//	                       timeouts (~22 s a page at the default politeness)
//
//	go test -bench HealthySiteBesideDeadSite -run '^$' ./crawler/
func BenchmarkHealthySiteBesideDeadSite(b *testing.B) {
	sim := sitesim.New(sitesim.Config{Seed: 42, Now: time.Now, DaysAhead: 14})
	srv := httptest.NewServer(sim)
	b.Cleanup(srv.Close)
	healthy := recompiled(b, runnerSite(b, srv.URL, 14), func(s *site.SiteSpec) { s.Name = "healthy" })
	dead := deadSite(b, healthy, "dead", testkit.BlackHole(b))
	alone, beside := healthyBeside(b, healthy, dead)
	b.ReportMetric(alone, "alone_ms/crawl")
	b.ReportMetric(beside, "beside_dead_ms/crawl")
	b.ReportMetric(beside/alone, "beside_dead_vs_alone")
}

// healthyBeside crawls healthy (a site named "healthy") alone and listed after other, taking
// turns inside b.Loop, each run from an empty snapshot and cancelled once the healthy site's
// crawl is done, and returns the medians of the healthy site's crawl time, in ms.
func healthyBeside(b *testing.B, healthy, other *site.Site) (alone, beside float64) {
	quiet := slog.New(slog.DiscardHandler)
	dir := b.TempDir()
	crawl := func(sites []*site.Site) time.Duration {
		state, err := os.MkdirTemp(dir, "state-")
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(b.Context())
		defer cancel()
		r := &Runner{Sites: sites, State: StateDir{Dir: state}, Logger: quiet,
			Alerts: cancelAfterSite{site: "healthy", cancel: cancel}}
		sum, _ := r.Run(ctx)
		s := sum.Sites[len(sum.Sites)-1]
		if s.Source != "healthy" || !s.Complete || s.Opened == 0 {
			b.Fatalf("healthy site: %+v", s)
		}
		return s.Duration
	}
	runs := [][]*site.Site{{healthy}, {other, healthy}}
	for _, sites := range runs { // warm up the sim and the connection pool
		crawl(sites)
	}
	var ms [2][]float64 // alone, beside the other site
	i := 0
	for b.Loop() {
		for k := range runs {
			p := (i + k) % len(runs)
			ms[p] = append(ms[p], crawl(runs[p]).Seconds()*1000)
		}
		i++
	}
	return median(ms[0]), median(ms[1])
}

// BenchmarkHealthySiteBesideHangingSite measures the crawl time of the healthy simulated site
// (as BenchmarkHealthySiteBesideDeadSite: 15 play dates, zero politeness delay, its
// SiteSummary.Duration) alone and beside a site on the same host (the same server, so the same
// host limit) whose every request hangs until the run ends (3 retries, listed first), at
// parallelism 2 and at parallelism 1; the run is cancelled as soon as the healthy site's events
// are published. Alone and beside take turns inside one loop. Each sub-benchmark reports the
// median ms of each:
//
//	parallelism_2: beside_hanging_vs_alone  target ≈ 1 (before the fair share the hanging
//	               site took both slots, and the healthy one waited request_timeout × attempts);
//	               its request_timeout (5 s) is longer than the crawl, so only the share acts
//	parallelism_1: beside_hanging_ms ≤ alone_ms + two_timeouts_ms (2 × request_timeout, 1 s):
//	               the hanging site's request holds the one slot until it times out; it waits
//	               behind the healthy site's waiting requests, but takes the slot again when the
//	               healthy site is between two requests (robots.txt, then its first page), and
//	               stops after that second timeout in a row; so expect about alone + 2 × timeout
//
//	go test -bench HealthySiteBesideHangingSite -run '^$' ./crawler/
func BenchmarkHealthySiteBesideHangingSite(b *testing.B) {
	for _, c := range []struct {
		name    string
		par     int
		timeout time.Duration
	}{{"parallelism_2", 2, 5 * time.Second}, {"parallelism_1", 1, 500 * time.Millisecond}} {
		b.Run(c.name, func(b *testing.B) { benchHangingSite(b, c.par, c.timeout) })
	}
}

func benchHangingSite(b *testing.B, par int, timeout time.Duration) {
	sim := sitesim.New(sitesim.Config{Seed: 42, Now: time.Now, DaysAhead: 14})
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hang" {
			sim.ServeHTTP(w, r)
			return
		}
		select {
		case <-stop:
		case <-r.Context().Done():
		}
	}))
	b.Cleanup(srv.Close)
	b.Cleanup(func() { close(stop) })
	healthy := recompiled(b, runnerSite(b, srv.URL, 14), func(s *site.SiteSpec) {
		s.Name = "healthy"
		s.Politeness.Parallelism = par
	})
	hanging := recompiled(b, healthy, func(s *site.SiteSpec) {
		s.Name = "hanging"
		s.URLTemplate = srv.URL + "/hang?date={{.Date.Format \"20060102\"}}"
		s.Politeness.NoRetry, s.Politeness.Retries = false, 3
		s.Politeness.RequestTimeout = site.Duration(timeout)
	})
	alone, beside := healthyBeside(b, healthy, hanging)
	b.ReportMetric(alone, "alone_ms/crawl")
	b.ReportMetric(beside, "beside_hanging_ms/crawl")
	b.ReportMetric(beside/alone, "beside_hanging_vs_alone")
	b.ReportMetric(float64(2*timeout)/float64(time.Millisecond), "two_timeouts_ms")
}

// BenchmarkCrawlSpool measures the wall time of one crawl of the simulated site (as
// BenchmarkCrawlBlackholedVsNoBroker: ~1600 events, zero politeness delay, every crawl from an
// empty snapshot) by a crawler without Kafka (an empty KAFKA_BOOTSTRAP: its spool holds a batch
// only until it is committed) and by a Kafka crawler (one fsynced batch per site crawl, committed
// after the save, kept and sent in the background to the stack's broker by a SpoolPublisher). The
// two take turns inside one loop. It reports the median ms of each, their ratio (target ≤ 1.3),
// and the median ms of the spool append with its fsync alone (one batch of the crawl's size).
//
//	go test -bench CrawlSpool -run '^$' ./crawler/
func BenchmarkCrawlSpool(b *testing.B) {
	at := time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST)
	clock := newRunClock(at)
	_, srv := runnerSim(b, clock, 42, 14)
	st := runnerSite(b, srv.URL, 14)
	quiet := slog.New(slog.DiscardHandler)
	addr := kafkatest.Bootstrap(b)
	topic := kafkatest.Topic(b, addr, 3)
	dir := b.TempDir()
	var pubs []*kafkabus.SpoolPublisher
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(b.Context()), 10*time.Second)
		defer cancel()
		for _, p := range pubs {
			_ = p.Close(ctx)
		}
	})
	crawl := func(kafka bool) time.Duration {
		state, err := os.MkdirTemp(dir, "state-")
		if err != nil {
			b.Fatal(err)
		}
		r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: state}, Logger: quiet, Now: clock.Now}
		if err := r.Lock(); err != nil {
			b.Fatal(err)
		}
		defer r.Unlock()
		if kafka {
			sp, err := r.OpenSpool(spool.Options{Retain: true, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			defer sp.Close()
			pub := kafkabus.NewSpoolPublisher(kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic, Logger: quiet}, sp)
			pubs = append(pubs, pub)
		}
		t0 := time.Now()
		sum, err := r.Run(b.Context())
		d := time.Since(t0)
		if err != nil || sum.Events() == 0 {
			b.Fatalf("crawl: %v, %d events", err, sum.Events())
		}
		return d
	}
	crawl(false)
	crawl(true)
	evs := crawlEvents(b, st, clock.Now)
	var rounds [2][]float64
	i := 0
	for b.Loop() {
		for k := range 2 {
			s := (i + k) % 2
			rounds[s] = append(rounds[s], crawl(s == 1).Seconds()*1000)
		}
		i++
	}
	reportSpoolVsNone(b, rounds, evs)
}
