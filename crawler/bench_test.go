package crawler

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// BenchmarkCrawlBlackholedVsNoBroker measures the wall time of one crawl of the simulated site
// (default sim: 4 courses, 7 parts, 16 tee times, 15 play dates, ~90 pages, ~1600 events, zero
// politeness delay) with events going to a publisher whose broker accepts connections and never
// answers, and to the no-op publisher of an empty KAFKA_BOOTSTRAP. The two kinds of crawl
// alternate inside one loop, so drift on a shared machine hits both alike, and the benchmark
// reports ms per crawl of each and their ratio blackholed_vs_nobroker (target ≤ 1.05: a dead
// broker must not slow the crawl). Every crawl starts from an empty snapshot, so every listing
// is an event.
//
//	go test -bench CrawlBlackholed -run '^$' ./crawler/
func BenchmarkCrawlBlackholedVsNoBroker(b *testing.B) {
	at := time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST)
	clock := newRunClock(at)
	_, srv := runnerSim(b, clock, 42, 14)
	site := runnerSite(b, srv.URL, 14)
	quiet := slog.New(slog.DiscardHandler)

	nop := kafkabus.NewPublisher(kafkabus.PublisherConfig{Logger: quiet})
	holed := kafkabus.NewPublisher(kafkabus.PublisherConfig{Brokers: []string{testkit.BlackHole(b)}, Topic: "booking-events", Logger: quiet})
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(b.Context()), 100*time.Millisecond)
		defer cancel()
		_ = holed.Close(ctx) // drops what is queued: the broker never answers
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
	crawl(nop) // warm up the sim and the connection pool
	var nopTotal, holedTotal time.Duration
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			nopTotal += crawl(nop)
			holedTotal += crawl(holed)
		} else {
			holedTotal += crawl(holed)
			nopTotal += crawl(nop)
		}
		i++
	}
	b.ReportMetric(nopTotal.Seconds()*1000/float64(i), "nobroker_ms/crawl")
	b.ReportMetric(holedTotal.Seconds()*1000/float64(i), "blackholed_ms/crawl")
	b.ReportMetric(float64(holedTotal)/float64(nopTotal), "blackholed_vs_nobroker")
}
