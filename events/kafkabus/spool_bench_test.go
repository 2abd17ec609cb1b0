package kafkabus_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/events/spool"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// BenchmarkSpoolCatchUp measures how fast a backlog left in the spool by an outage reaches the
// stack's broker once it answers (a SpoolPublisher started on a spool of BENCH_SPOOL_BACKLOG
// events, default 200,000, in batches of 1,600 like a crawl's), beside live publishing of as many
// events through the in-memory KafkaPublisher. It reports the events/s of each and their ratio.
//
//	go test -bench SpoolCatchUp -benchtime 1x -run '^$' ./events/kafkabus/
func BenchmarkSpoolCatchUp(b *testing.B) {
	n := testkit.EnvInt(b, "BENCH_SPOOL_BACKLOG", 200_000)
	addr := kafkatest.Bootstrap(b)
	quiet := slog.New(slog.DiscardHandler)
	evs := testEvents(n, 5000)
	var spoolRate, liveRate []float64
	for b.Loop() {
		sp, err := spool.Open(b.TempDir(), spool.Options{Retain: true, Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < n; i += 1600 {
			bt, err := sp.Prepare("bench", evs[i:min(i+1600, n)])
			if err != nil {
				b.Fatal(err)
			}
			if err := sp.Commit(bt); err != nil {
				b.Fatal(err)
			}
		}
		topic := kafkatest.Topic(b, addr, 3)
		t0 := time.Now()
		pub := kafkabus.NewSpoolPublisher(kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic, Logger: quiet}, sp)
		ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
		if err := pub.Close(ctx); err != nil { // Close sends what is unsent, then returns
			b.Fatal(err)
		}
		cancel()
		spoolRate = append(spoolRate, float64(n)/time.Since(t0).Seconds())
		if st := sp.Stats(); st.Unsent != 0 {
			b.Fatalf("%d unsent after the catch-up", st.Unsent)
		}
		sp.Close()

		live := kafkabus.NewPublisher(kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: kafkatest.Topic(b, addr, 3), Logger: quiet, QueueSize: n})
		t0 = time.Now()
		for _, e := range evs {
			live.Publish(e)
		}
		ctx, cancel = context.WithTimeout(b.Context(), 10*time.Minute)
		if err := live.Close(ctx); err != nil {
			b.Fatal(err)
		}
		cancel()
		liveRate = append(liveRate, float64(n)/time.Since(t0).Seconds())
	}
	b.ReportMetric(median(spoolRate), "spool_catchup_events/s")
	b.ReportMetric(median(liveRate), "live_events/s")
	b.ReportMetric(median(spoolRate)/median(liveRate), "catchup_vs_live")
	b.ReportMetric(float64(n), "backlog_events")
}

// median is the middle value of xs (the mean of the two middle ones for an even count).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
