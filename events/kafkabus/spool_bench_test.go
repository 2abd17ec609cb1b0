package kafkabus_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/events/spool"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// BenchmarkSpoolCatchUp measures how fast a backlog left in the spool by an outage reaches the
// stack's broker once it answers (a SpoolPublisher started on a spool of BENCH_SPOOL_BACKLOG
// events, default 200,000; 1,000,000 is the backlog), beside live publishing of as many
// events (the SpoolPublisher running while crawls of 1,600 events each append to the spool, as
// fast as they can). The backlog is written in appends of 20,000 events (one fsync each) so that
// a million take seconds, not the minutes of 625 crawl-sized appends. It reports the events/s of
// each, their ratio, and the seconds the backlog took to write.
//
//	go test -bench SpoolCatchUp -benchtime 1x -run '^$' ./events/kafkabus/
//	BENCH_SPOOL_BACKLOG=1000000 go test -bench SpoolCatchUp -benchtime 1x -run '^$' -timeout 30m ./events/kafkabus/
func BenchmarkSpoolCatchUp(b *testing.B) {
	n := testkit.EnvInt(b, "BENCH_SPOOL_BACKLOG", 200_000)
	addr := kafkatest.Bootstrap(b)
	quiet := slog.New(slog.DiscardHandler)
	evs := testEvents(n, 5000)
	var spoolRate, liveRate, writeSec []float64
	for b.Loop() {
		sp := openBenchSpool(b, quiet)
		t0 := time.Now()
		appendAll(b, sp, evs, 20_000)
		writeSec = append(writeSec, time.Since(t0).Seconds())
		t0 = time.Now()
		pub := kafkabus.NewSpoolPublisher(kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: kafkatest.Topic(b, addr, 3), Logger: quiet}, sp)
		closeBench(b, pub, sp)
		spoolRate = append(spoolRate, float64(n)/time.Since(t0).Seconds())

		sp = openBenchSpool(b, quiet)
		pub = kafkabus.NewSpoolPublisher(kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: kafkatest.Topic(b, addr, 3), Logger: quiet}, sp)
		t0 = time.Now()
		appendAll(b, sp, evs, 1600)
		closeBench(b, pub, sp)
		liveRate = append(liveRate, float64(n)/time.Since(t0).Seconds())
	}
	b.ReportMetric(median(spoolRate), "spool_catchup_events/s")
	b.ReportMetric(median(liveRate), "live_events/s")
	b.ReportMetric(median(spoolRate)/median(liveRate), "catchup_vs_live")
	b.ReportMetric(median(writeSec), "backlog_write_s")
	b.ReportMetric(float64(n), "backlog_events")
}

func openBenchSpool(b *testing.B, log *slog.Logger) *spool.Spool {
	sp, err := spool.Open(b.TempDir(), spool.Options{Retain: true, Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	return sp
}

// appendAll spools evs as committed batches of size events.
func appendAll(b *testing.B, sp *spool.Spool, evs []events.Event, size int) {
	for i := 0; i < len(evs); i += size {
		bt, err := sp.Prepare("bench", evs[i:min(i+size, len(evs))])
		if err != nil {
			b.Fatal(err)
		}
		if err := sp.Commit(bt); err != nil {
			b.Fatal(err)
		}
	}
}

// closeBench closes pub, which sends what is unsent first, and fails unless all was sent.
func closeBench(b *testing.B, pub *kafkabus.SpoolPublisher, sp *spool.Spool) {
	ctx, cancel := context.WithTimeout(b.Context(), 20*time.Minute)
	defer cancel()
	if err := pub.Close(ctx); err != nil {
		b.Fatal(err)
	}
	if st := sp.Stats(); st.Unsent != 0 {
		b.Fatalf("%d unsent after the catch-up", st.Unsent)
	}
	if err := sp.Close(); err != nil {
		b.Fatal(err)
	}
}

// median is the middle value of xs (the mean of the two middle ones for an even count).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
