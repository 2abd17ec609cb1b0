package kafkabus_test

import (
	"context"
	"encoding/json"
	"errors"
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
type countingMetrics struct{ sent, failed atomic.Int64 }

func (m *countingMetrics) Sent(n int)   { m.sent.Add(int64(n)) }
func (m *countingMetrics) Failed(n int) { m.failed.Add(int64(n)) }

func statsOf(t *testing.T, p stats) kafkabus.PublisherStats {
	t.Helper()
	return p.Stats()
}

// publishAll spools evs as batches of at most 100 (a crawl's site crawls) and returns the slowest
// append (with its fsync), the call on the crawl's goroutine.
func publishAll(p *kafkatest.Spooled, evs []events.Event) (maxLat time.Duration) {
	for i := 0; i < len(evs); i += 100 {
		start := time.Now()
		p.PublishAll(evs[i:min(i+100, len(evs))])
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

// TestPublisherRealBroker spools 500 events, sent by the SpoolPublisher to the dev stack's broker,
// and reads them back: each once, keyed by listing, with its headers.
func TestPublisherRealBroker(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	log, _ := newLogger()
	m := &countingMetrics{}
	p := kafkatest.NewSpooled(t, kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic, Logger: log, Metrics: m})
	evs := testEvents(500, 50)
	maxLat := publishAll(p, evs)
	testkit.WaitFor(t, 30*time.Second, "500 published", func() bool { return statsOf(t, p).Published == 500 })
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	t.Logf("max spool append %v, Close %v", maxLat, time.Since(start))
	if s := statsOf(t, p); s != (kafkabus.PublisherStats{Published: 500}) {
		t.Fatalf("stats %+v, want 500 published and nothing else", s)
	}
	if m.sent.Load() != 500 || m.failed.Load() != 0 {
		t.Fatalf("metrics sent %d failed %d", m.sent.Load(), m.failed.Load())
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

// TestPublisherBlackholed: the broker accepts connections and never answers. Spooling returns at
// once, Close returns by its deadline with an error, and every event stays in the spool, unsent
// and not given up (the next run sends it).
func TestPublisherBlackholed(t *testing.T) {
	t.Parallel()
	bh, accepts := testkit.CountingBlackHole(t)
	log, logs := newLogger()
	p := kafkatest.NewSpooled(t, kafkabus.PublisherConfig{Brokers: []string{bh}, Logger: log})
	evs := testEvents(2000, 100)
	start := time.Now()
	maxLat := publishAll(p, evs)
	t.Logf("black-holed: 20 appends of 100 events in %v, max %v", time.Since(start), maxLat)
	testkit.WaitFor(t, 10*time.Second, "a connection to the black hole", func() bool { return accepts.Load() > 0 })

	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	start = time.Now()
	closed := make(chan error, 1)
	go func() { closed <- p.SpoolPublisher.Close(ctx) }()
	select {
	case err := <-closed:
		t.Logf("black-holed: Close took %v: %v", time.Since(start), err)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "2000 events stay in the spool") {
			t.Fatalf("Close = %v, want the deadline and 2000 events left in the spool", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close(ctx with 1s deadline) still blocked after 10s")
	}
	if s := statsOf(t, p); s != (kafkabus.PublisherStats{Queued: 2000}) {
		t.Fatalf("stats %+v, want all 2000 kept unsent, none sent or given up", s)
	}
	if r := logs.records(t); len(r) != 0 {
		t.Fatalf("%d events logged as lost with the broker only silent", len(r))
	}
}
