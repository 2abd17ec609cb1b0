package crawler

import (
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/events/spool"
)

// BenchmarkCrawlSpoolPolite is BenchmarkCrawlSpool at the default politeness (1 s between a slot's
// requests plus up to 500 ms of jitter, 2 slots), the way a real club is crawled: the wall time
// of one crawl of the simulated site (2 play dates, every crawl from an empty snapshot) by a
// crawler without Kafka (no KAFKA_BOOTSTRAP, no --events-out: its spool holds a batch only until
// it is committed) and by a Kafka crawler (the state dir's spool kept until the stack's broker
// acknowledges it, sent by a SpoolPublisher, as crawler run does). The two take turns inside one
// loop. It reports the median ms of each, their ratio (target ≤ 1.05), and the median ms of the
// spool append with its fsync (a batch of the crawl's size, 20 times on a spool in the same file
// system), which is what the spool adds to the crawl's path either way.
//
//	go test -bench CrawlSpoolPolite -benchtime 3x -run '^$' ./crawler/
func BenchmarkCrawlSpoolPolite(b *testing.B) {
	clock := newRunClock(time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST))
	_, srv := runnerSim(b, clock, 42, 2)
	st := recompiled(b, runnerSite(b, srv.URL, 2), func(s *site.SiteSpec) {
		s.Politeness.NoDelay = false
		s.Politeness.Delay, s.Politeness.RandomDelay = 0, 0 // the defaults
	})
	if st.Politeness.Delay.D() != site.DefaultDelay || st.Politeness.RandomDelay.D() != site.DefaultRandomDelay {
		b.Fatalf("politeness %+v, want the defaults", st.Politeness)
	}
	quiet := slog.New(slog.DiscardHandler)
	addr := kafkatest.Bootstrap(b)
	cfg := kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: kafkatest.Topic(b, addr, 3), Logger: quiet}
	dir := b.TempDir()
	crawl := func(kafka bool) float64 {
		state, err := os.MkdirTemp(dir, "state-")
		if err != nil {
			b.Fatal(err)
		}
		r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: state}, Logger: quiet, Now: clock.Now}
		if kafka {
			defer kafkatest.SpoolRunner(b, r, cfg).CloseWithin(10 * time.Second)
		}
		t0 := time.Now()
		sum, err := r.Run(b.Context())
		d := time.Since(t0)
		if err != nil || sum.Events() == 0 {
			b.Fatalf("crawl: %v, %d events", err, sum.Events())
		}
		return d.Seconds() * 1000
	}
	crawl(false) // warm up the sim and the connection pool
	evs := crawlEvents(b, st, clock.Now)
	var rounds [2][]float64
	i := 0
	for b.Loop() {
		for k := range 2 {
			s := (i + k) % 2
			rounds[s] = append(rounds[s], crawl(s == 1))
		}
		i++
	}
	reportSpoolVsNone(b, rounds, evs)
}

// crawlEvents is one crawl's events of st from an empty snapshot (its events file's lines).
func crawlEvents(b *testing.B, st *site.Site, now func() time.Time) []events.Event {
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: b.TempDir()}, Logger: slog.New(slog.DiscardHandler), Now: now}
	written := eventsOut(b, r)
	if _, err := r.Run(b.Context()); err != nil {
		b.Fatal(err)
	}
	return written()
}

// reportSpoolVsNone reports the median ms per crawl without and with Kafka (rounds[0],
// rounds[1]), their ratio, and the median ms of appending evs (a crawl's events) to a spool as
// one batch with its fsync, 20 times.
func reportSpoolVsNone(b *testing.B, rounds [2][]float64, evs []events.Event) {
	sp, err := spool.Open(b.TempDir(), spool.Options{Retain: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	defer sp.Close()
	var appends []float64
	for range 20 {
		t0 := time.Now()
		if _, err := sp.Prepare("bench", evs); err != nil {
			b.Fatal(err)
		}
		appends = append(appends, time.Since(t0).Seconds()*1000)
	}
	without, with := median(rounds[0]), median(rounds[1])
	b.ReportMetric(without, "nokafka_ms/crawl")
	b.ReportMetric(with, "kafka_ms/crawl")
	b.ReportMetric(with/without, "kafka_vs_nokafka")
	b.ReportMetric(median(appends), "append_fsync_ms/batch")
	b.ReportMetric(float64(len(evs)), "events/crawl")
}
