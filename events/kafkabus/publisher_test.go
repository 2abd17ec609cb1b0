package kafkabus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// testEvents returns n valid events over listings distinct listings (n/listings events each).
func testEvents(n, listings int) []events.Event {
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	evs := make([]events.Event, n)
	for i := range evs {
		price := int64(100_000 + i)
		players := 4
		l := events.Listing{
			Source: "test", CourseName: fmt.Sprintf("Course %d", i%listings), RoundDate: "2026-12-01",
			PlayDate: "2026-12-01", TeeTime: "07:30", Values: events.Values{PriceKRW: &price, Players: &players},
		}
		evs[i] = events.Opened(l, fmt.Sprintf("crawl-%d", i), at)
	}
	return evs
}

// logBuffer collects JSON log lines from concurrent goroutines.
type logBuffer struct{ testkit.SyncBuffer }

// records returns the log records that carry an event_id, keyed by it.
func (b *logBuffer) records(t *testing.T) map[string][]map[string]any {
	t.Helper()
	out := map[string][]map[string]any{}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if line == "" {
			continue
		}
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", line, err)
		}
		if id, ok := r["event_id"].(string); ok {
			out[id] = append(out[id], r)
		}
	}
	return out
}

func newLogger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

type stats interface {
	Stats() kafkabus.PublisherStats
}

// countingMetrics is a PublisherMetrics that adds up what it is told.
type countingMetrics struct{ sent, failed, dropped, depth atomic.Int64 }

func (m *countingMetrics) Sent(n int)       { m.sent.Add(int64(n)) }
func (m *countingMetrics) Failed(n int)     { m.failed.Add(int64(n)) }
func (m *countingMetrics) Dropped(n int)    { m.dropped.Add(int64(n)) }
func (m *countingMetrics) QueueDepth(n int) { m.depth.Store(int64(n)) }

func statsOf(t *testing.T, p kafkabus.Publisher) kafkabus.PublisherStats {
	t.Helper()
	s, ok := p.(stats)
	if !ok {
		t.Fatalf("%T has no Stats method", p)
	}
	return s.Stats()
}

// publishAll publishes evs and returns the slowest Publish call.
func publishAll(p kafkabus.Publisher, evs []events.Event) (maxLat time.Duration) {
	for _, e := range evs {
		start := time.Now()
		p.Publish(e)
		maxLat = max(maxLat, time.Since(start))
	}
	return maxLat
}

// checkLossLogged asserts that every event in evs was logged with its event_id, listing_key and a
// reason, and returns the reasons seen.
func checkLossLogged(t *testing.T, logs *logBuffer, evs []events.Event) map[string]int {
	t.Helper()
	recs := logs.records(t)
	reasons := map[string]int{}
	for _, e := range evs {
		rs := recs[e.EventID.String()]
		if len(rs) != 1 {
			t.Fatalf("event %s logged %d times, want once: %v", e.EventID, len(rs), rs)
		}
		if rs[0]["listing_key"] != e.ListingKey || rs[0]["reason"] == nil {
			t.Fatalf("loss record of %s lacks listing_key or reason: %v", e.EventID, rs[0])
		}
		reasons[rs[0]["reason"].(string)]++
	}
	return reasons
}

// TestNopPublisher: a blank KAFKA_BOOTSTRAP gives the no-op publisher, which never connects;
// the same listener named in KAFKA_BOOTSTRAP does get connections (the control case).
func TestNopPublisher(t *testing.T) {
	t.Parallel()
	bh, accepts := testkit.CountingBlackHole(t)
	evs := testEvents(10, 5)
	for _, bootstrap := range []string{"", " ", ",,", " , ,"} {
		log, logs := newLogger()
		cfg, err := kafkabus.PublisherConfigFromEnv(func(k string) string {
			return map[string]string{"KAFKA_BOOTSTRAP": bootstrap}[k]
		})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Logger = log
		p := kafkabus.NewPublisher(cfg)
		if _, ok := p.(kafkabus.NopPublisher); !ok {
			t.Fatalf("KAFKA_BOOTSTRAP=%q gave %T, want NopPublisher", bootstrap, p)
		}
		publishAll(p, evs)
		if err := p.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if s := statsOf(t, p); s != (kafkabus.PublisherStats{}) {
			t.Fatalf("no-op stats %+v", s)
		}
		if n := strings.Count(logs.String(), "\n"); n != 1 {
			t.Fatalf("no-op publisher logged %d lines, want 1: %s", n, logs.String())
		}
	}
	time.Sleep(100 * time.Millisecond)
	if n := accepts.Load(); n != 0 {
		t.Fatalf("no-op publishers connected %d times", n)
	}

	p := kafkabus.NewPublisher(kafkabus.PublisherConfig{Brokers: []string{bh}})
	publishAll(p, evs)
	testkit.WaitFor(t, 5*time.Second, "a connection to the listener", func() bool { return accepts.Load() > 0 })
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	_ = p.Close(ctx)
}

// TestPublisherRealBroker publishes 500 events to the dev stack's broker and reads them back.
func TestPublisherRealBroker(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	log, _ := newLogger()
	m := &countingMetrics{}
	p := kafkabus.NewPublisher(kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic, Logger: log, Metrics: m})
	evs := testEvents(500, 50)
	maxLat := publishAll(p, evs)
	testkit.WaitFor(t, 30*time.Second, "500 published", func() bool { return statsOf(t, p).Published == 500 })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	t.Logf("max Publish %v, Close %v", maxLat, time.Since(start))
	if s := statsOf(t, p); s != (kafkabus.PublisherStats{Published: 500}) {
		t.Fatalf("stats %+v, want 500 published and nothing else", s)
	}
	if m.sent.Load() != 500 || m.failed.Load()+m.dropped.Load() != 0 {
		t.Fatalf("metrics sent %d failed %d dropped %d", m.sent.Load(), m.failed.Load(), m.dropped.Load())
	}

	want := map[string]events.Event{}
	for _, e := range evs {
		want[e.EventID.String()] = e
	}
	seen := map[string]int{}
	partitionOf := map[string]int{}
	for part := range 3 {
		for _, m := range readPartition(t, addr, topic, part) {
			e, err := events.Decode(m.Value)
			if err != nil {
				t.Fatalf("partition %d offset %d: %v", part, m.Offset, err)
			}
			id := e.EventID.String()
			seen[id]++
			if string(m.Key) != e.ListingKey {
				t.Fatalf("event %s key %q, want listing_key %q", id, m.Key, e.ListingKey)
			}
			if got, want := fmt.Sprintf("%q", m.Headers), fmt.Sprintf("%q", kafkabus.Headers(e)); got != want {
				t.Fatalf("event %s headers %s, want %s (event_id and the CloudEvents ones)", id, got, want)
			}
			if p, ok := partitionOf[e.ListingKey]; ok && p != part {
				t.Fatalf("listing %s on partitions %d and %d", e.ListingKey, p, part)
			}
			partitionOf[e.ListingKey] = part
		}
	}
	for id := range want {
		if seen[id] != 1 {
			t.Fatalf("event %s read %d times, want once", id, seen[id])
		}
	}
	if len(seen) != len(want) {
		t.Fatalf("read %d distinct events, want %d", len(seen), len(want))
	}
}

// readPartition reads every message of one partition with a kafka-go Reader.
func readPartition(t *testing.T, addr, topic string, part int) []kafka.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	conn, err := kafka.DialLeader(ctx, "tcp", addr, topic, part)
	if err != nil {
		t.Fatalf("dial leader of partition %d: %v", part, err)
	}
	last, err := conn.ReadLastOffset()
	_ = conn.Close()
	if err != nil {
		t.Fatal(err)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: part, MinBytes: 1, MaxBytes: 10 << 20, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	var out []kafka.Message
	for int64(len(out)) < last {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("read partition %d after %d of %d messages: %v", part, len(out), last, err)
		}
		out = append(out, m)
	}
	return out
}

// TestPublisherRefused: nothing listens on the broker port. Publish returns at once, every event
// fails after the retry window and is logged with its event_id.
func TestPublisherRefused(t *testing.T) {
	t.Parallel()
	log, logs := newLogger()
	p := kafkabus.NewPublisher(kafkabus.PublisherConfig{Brokers: []string{testkit.FreeAddr(t)}, RetryWindow: 300 * time.Millisecond, Logger: log})
	evs := testEvents(2000, 100)
	start := time.Now()
	maxLat := publishAll(p, evs)
	t.Logf("refused: 2000 Publish calls in %v, max %v", time.Since(start), maxLat)
	testkit.WaitFor(t, 15*time.Second, "all 2000 lost", func() bool {
		s := statsOf(t, p)
		return s.Failed+s.Dropped == 2000
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s := statsOf(t, p)
	t.Logf("refused: stats %+v", s)
	if s.Published != 0 || s.Queued != 0 || s.Failed+s.Dropped != 2000 || s.Failed == 0 {
		t.Fatalf("stats %+v", s)
	}
	reasons := checkLossLogged(t, logs, evs)
	if int64(reasons[kafkabus.ReasonRetryWindow]) != s.Failed || int64(reasons[kafkabus.ReasonQueueFull]) != s.Dropped {
		t.Fatalf("reasons %v do not match stats %+v", reasons, s)
	}
}

// TestPublisherBlackholed: the broker accepts connections and never answers. Publish returns at
// once, Close returns by its deadline, every event is counted and logged as lost.
func TestPublisherBlackholed(t *testing.T) {
	t.Parallel()
	bh, accepts := testkit.CountingBlackHole(t)
	log, logs := newLogger()
	p := kafkabus.NewPublisher(kafkabus.PublisherConfig{Brokers: []string{bh}, Logger: log})
	evs := testEvents(2000, 100)
	start := time.Now()
	maxLat := publishAll(p, evs)
	t.Logf("black-holed: 2000 Publish calls in %v, max %v", time.Since(start), maxLat)

	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	start = time.Now()
	closed := make(chan error, 1)
	go func() { closed <- p.Close(ctx) }()
	select {
	case err := <-closed:
		t.Logf("black-holed: Close took %v: %v", time.Since(start), err)
		if err == nil {
			t.Fatal("Close drained a black-holed broker without error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close(ctx with 1s deadline) still blocked after 10s")
	}
	s := statsOf(t, p)
	t.Logf("black-holed: stats %+v, connections %d", s, accepts.Load())
	if s.Published != 0 || s.Queued != 0 || s.Failed+s.Dropped != 2000 {
		t.Fatalf("stats %+v", s)
	}
	checkLossLogged(t, logs, evs)
}

// TestPublisherQueueFull: with a queue of 10 and a stuck broker, almost every event is dropped at
// Publish, and each drop is logged.
func TestPublisherQueueFull(t *testing.T) {
	t.Parallel()
	bh := testkit.BlackHole(t)
	log, logs := newLogger()
	m := &countingMetrics{}
	p := kafkabus.NewPublisher(kafkabus.PublisherConfig{Brokers: []string{bh}, QueueSize: 10, Logger: log, Metrics: m})
	evs := testEvents(1000, 100)
	maxLat := publishAll(p, evs)
	s := statsOf(t, p)
	t.Logf("queue full: max Publish %v, stats after publishing %+v", maxLat, s)
	if s.Dropped < 900 || s.Dropped+s.Queued != 1000 {
		t.Fatalf("stats %+v, want ≥ 900 dropped and the rest queued", s)
	}
	dropped := s.Dropped
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_ = p.Close(ctx)
	s = statsOf(t, p)
	if s.Dropped+s.Failed != 1000 || s.Queued != 0 {
		t.Fatalf("after Close: stats %+v", s)
	}
	if m.dropped.Load()+m.failed.Load() != 1000 || m.sent.Load() != 0 {
		t.Fatalf("metrics sent %d failed %d dropped %d", m.sent.Load(), m.failed.Load(), m.dropped.Load())
	}
	reasons := checkLossLogged(t, logs, evs)
	if int64(reasons[kafkabus.ReasonQueueFull]) != dropped {
		t.Fatalf("reasons %v, want %d queue_full", reasons, dropped)
	}
	if reasons[kafkabus.ReasonQueueFull]+reasons[kafkabus.ReasonClosed]+reasons[kafkabus.ReasonRetryWindow] != 1000 {
		t.Fatalf("reasons %v", reasons)
	}
}

// TestPublishAfterClose: events published after Close are dropped and logged, never queued.
func TestPublishAfterClose(t *testing.T) {
	t.Parallel()
	log, logs := newLogger()
	p := kafkabus.NewPublisher(kafkabus.PublisherConfig{Brokers: []string{testkit.FreeAddr(t)}, Logger: log})
	if err := p.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	evs := testEvents(5, 5)
	publishAll(p, evs)
	if s := statsOf(t, p); s != (kafkabus.PublisherStats{Dropped: 5}) {
		t.Fatalf("stats %+v", s)
	}
	if r := checkLossLogged(t, logs, evs); r[kafkabus.ReasonClosed] != 5 {
		t.Fatalf("reasons %v", r)
	}
}

// The crawler's wiring: configuration from the environment, a publisher that never blocks the
// crawl, and a bounded Close at shutdown.
func ExampleNewPublisher() {
	cfg, err := kafkabus.PublisherConfigFromEnv(func(string) string { return "" }) // os.Getenv in main
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg.Logger = slog.New(slog.DiscardHandler)
	p := kafkabus.NewPublisher(cfg) // KAFKA_BOOTSTRAP unset: a NopPublisher
	p.Publish(testEvents(1, 1)[0])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fmt.Printf("%T %v\n", p, p.Close(ctx))
	// Output: kafkabus.NopPublisher <nil>
}
