package crawler

import (
	"context"
	"log/slog"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// BenchmarkCrawlBlackholedVsNoBroker measures the wall time of one crawl of the simulated site
// (default sim: 4 courses, 7 parts, 16 tee times, 15 play dates, ~90 pages, ~1600 events, zero
// politeness delay) with events going to three publishers: one to the stack's healthy broker, one
// whose broker accepts connections and never answers, and the no-op publisher of an empty
// KAFKA_BOOTSTRAP. The three kinds of crawl take turns inside one loop (in a rotating order), so
// drift on a shared machine hits all alike. It reports the median ms per crawl of each and two
// ratios of medians:
//
//	blackholed_vs_healthy   target ≤ 1.05: a dead broker must not slow the crawl
//	blackholed_vs_nobroker  what publishing costs at all: Publish encodes every event and hands
//	                        it to the writer's queue (about a microsecond each, broker up or down)
//
// Every crawl starts from an empty snapshot, so every listing is an event.
//
//	go test -bench CrawlBlackholed -run '^$' ./crawler/
func BenchmarkCrawlBlackholedVsNoBroker(b *testing.B) {
	at := time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST)
	clock := newRunClock(at)
	_, srv := runnerSim(b, clock, 42, 14)
	site := runnerSite(b, srv.URL, 14)
	quiet := slog.New(slog.DiscardHandler)

	addr := kafkatest.Bootstrap(b)
	pubs := []kafkabus.Publisher{
		kafkabus.NewPublisher(kafkabus.PublisherConfig{Logger: quiet}),
		kafkabus.NewPublisher(kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: kafkatest.Topic(b, addr, 3), Logger: quiet}),
		kafkabus.NewPublisher(kafkabus.PublisherConfig{Brokers: []string{testkit.BlackHole(b)}, Topic: "booking-events", Logger: quiet}),
	}
	const nop, healthy, holed = 0, 1, 2
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(b.Context()), 5*time.Second)
		defer cancel()
		for _, p := range pubs[1:] {
			_ = p.Close(ctx) // the black-holed one drops what is queued: its broker never answers
		}
	})
	dir := b.TempDir()
	crawl := func(pub kafkabus.Publisher) time.Duration {
		state, err := os.MkdirTemp(dir, "state-")
		if err != nil {
			b.Fatal(err)
		}
		r := &Runner{Sites: []Site{site}, State: StateDir{Dir: state}, Logger: quiet, Publisher: pub, Now: clock.Now}
		t0 := time.Now()
		sum, err := r.Run(b.Context())
		d := time.Since(t0)
		if err != nil || sum.Events() == 0 {
			b.Fatalf("crawl: %v, %d events", err, sum.Events())
		}
		return d
	}
	for _, p := range pubs { // warm up the sim, the connection pool and the writers
		crawl(p)
	}
	var rounds [3][]float64 // ms of each crawl, by publisher
	i := 0
	for b.Loop() {
		for k := range pubs {
			p := (i + k) % len(pubs)
			rounds[p] = append(rounds[p], crawl(pubs[p]).Seconds()*1000)
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
