package consumerbench_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// BenchmarkLargeMessageRSS measures the booking-consumer binary's peak RSS (VmHWM) draining
// BENCH_LARGE (1,000) junk messages of 900 KB each (all dead-lettered) vs draining as many normal
// events, side by side, with its default flags. Memory is bounded in bytes (internal/consumer's package
// doc gives the formula), so large/normal should stay at or below 2: before that bound the consumer
// was measured at 727 MB for 200 such messages.
func BenchmarkLargeMessageRSS(b *testing.B) {
	n := testkit.EnvInt(b, "BENCH_LARGE", 1000)
	addr := kafkatest.Bootstrap(b)
	bin := buildConsumer(b)
	for b.Loop() {
		normal := largeTopic(b, addr)
		kafkatest.Produce(b, addr, normal, kafkatest.Encode(b, testkit.CrawlEvents(0, n, "rss-normal")))
		hwmNormal, dNormal := drainTopic(b, bin, addr, normal, "booking_events", n)

		large := largeTopic(b, addr)
		produceLarge(b, addr, large, n, 900<<10)
		hwmLarge, dLarge := drainTopic(b, bin, addr, large, "booking_events_dead", n)

		b.Logf("%d normal events: VmHWM %.1f MB, drained in %v", n, hwmNormal, dNormal)
		b.Logf("%d messages of 900 KB: VmHWM %.1f MB, drained in %v", n, hwmLarge, dLarge)
		b.ReportMetric(hwmNormal, "normal_peak_MB")
		b.ReportMetric(hwmLarge, "large_peak_MB")
		b.ReportMetric(hwmLarge/hwmNormal, "large/normal_peak")
	}
}

// largeTopic creates a 3-partition topic that accepts messages up to 1.1 MB (max.message.bytes),
// deleted when the benchmark ends.
func largeTopic(b testing.TB, addr string) string {
	b.Helper()
	topic := kafkatest.Name(b, "large")
	if err := kafkabus.CreateTopicOn(b.Context(), []string{addr}, topic, 3, map[string]string{"max.message.bytes": "1100000"}); err != nil {
		b.Fatalf("create topic %s: %v", topic, err)
	}
	b.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), addr, topic) })
	ctx, cancel := context.WithTimeout(b.Context(), 15*time.Second)
	defer cancel()
	if _, err := kafkabus.WaitForTopic(ctx, []string{addr}, topic, nil); err != nil {
		b.Fatal(err)
	}
	return topic
}

// produceLarge writes n distinct incompressible values of size bytes, one message per request.
func produceLarge(b testing.TB, addr, topic string, n, size int) {
	b.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, Balancer: &kafka.RoundRobin{}, RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, BatchSize: 1, BatchBytes: 1_100_000,
		Transport: &kafka.Transport{DialTimeout: 5 * time.Second}}
	defer w.Close()
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
	defer cancel()
	r := rand.New(rand.NewPCG(1, 2))
	value := make([]byte, size)
	for i := range value {
		value[i] = byte(r.UintN(256))
	}
	for i := range n {
		binary.BigEndian.PutUint64(value, uint64(i)) // distinct values
		if err := w.WriteMessages(ctx, kafka.Message{Key: []byte(fmt.Sprint("junk-", i)), Value: value}); err != nil {
			b.Fatalf("produce large message %d to %s: %.300v", i, topic, err)
		}
	}
}

// drainTopic runs the consumer binary (default flags) on topic into a fresh database until table
// holds want rows, and returns its VmHWM in MB and the time from the first stored row to the last
// (start-up and the group join left out).
func drainTopic(b testing.TB, bin, addr, topic, table string, want int, args ...string) (hwmMB float64, took time.Duration) {
	b.Helper()
	d := drain(b, bin, addr, topic, table, want, 1, 20*time.Minute, args...)
	return d.hwmMB, d.lastRow.Sub(d.firstRow)
}

// BenchmarkQueueCapacity drains BENCH_QUEUE_EVENTS (100,000) normal events with the binary at
// --queue-capacity 8 (the default) and 1000 (kafka-go's usual tuning), side by side: what the
// small, byte-safe queue costs in throughput.
func BenchmarkQueueCapacity(b *testing.B) {
	n := testkit.EnvInt(b, "BENCH_QUEUE_EVENTS", 100_000)
	addr := kafkatest.Bootstrap(b)
	bin := buildConsumer(b)
	topic := largeTopic(b, addr)
	kafkatest.Produce(b, addr, topic, kafkatest.Encode(b, testkit.CrawlEvents(0, n, "queue")))
	for b.Loop() {
		rates := map[string]float64{}
		for _, q := range []string{"8", "1000", "8", "1000"} { // interleaved: load drifts
			_, d := drainTopic(b, bin, addr, topic, "booking_events", n, "--queue-capacity", q)
			rate := float64(n) / d.Seconds()
			b.Logf("--queue-capacity %s: %d events in %v (%.0f events/s)", q, n, d, rate)
			rates[q] = max(rates[q], rate)
		}
		b.ReportMetric(rates["8"], "q8_events/s")
		b.ReportMetric(rates["1000"], "q1000_events/s")
		b.ReportMetric(rates["8"]/rates["1000"], "q8/q1000")
	}
}
