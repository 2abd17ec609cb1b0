package consumer_test

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/consumer"
	"github.com/golfcrawler/golf-crawler/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// oversizeKeyEvent returns a valid-looking event whose listing_key is over 4,000 bytes of
// incompressible text: more than a btree index entry can hold (SQLSTATE 54000).
func oversizeKeyEvent(t *testing.T, prefix string) kafka.Message {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 8))
	name := make([]byte, 4000)
	for i := range name {
		name[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[r.IntN(36)]
	}
	e := testEvents(1, prefix)[0]
	l := events.Listing{Source: e.Source, CourseName: string(name), RoundDate: e.RoundDate, PlayDate: e.PlayDate,
		TeeTime: e.TeeTime, PriceKRW: e.PriceKRW, Players: e.Players}
	return kafkatest.Encode(t, []events.Event{events.Opened(l, "crawl-"+prefix, e.OccurredAt)})[0]
}

// A valid-looking event with an oversize listing_key in the middle of a stream: the events around it are all stored, it alone is dead-lettered, and the committed offsets
// reach the end of the partition. Before the fix the batch was retried forever.
func TestOversizeListingKeyIsDeadLetteredAndTheStreamGoesOn(t *testing.T) {
	t.Parallel()
	addr, topic, db := onStack(t, 1)

	valid := kafkatest.Encode(t, testEvents(40, "longkey"))
	msgs := append(append(append([]kafka.Message{}, valid[:20]...), oversizeKeyEvent(t, "longkey-poison")), valid[20:]...)
	kafkatest.Produce(t, addr, topic, msgs)

	r := newChecked(t, addr, topic, kafkatest.Name(t, "g"), db)
	c := consumertest.Start(t, t.Context(), r, store.New(db), consumer.Config{BatchSize: 8}) // batches mixing valid events and the poison
	testkit.WaitFor(t, 30*time.Second, "every offset committed", func() bool { _, n := r.stats(); return n == len(msgs) })
	c.Stop(t)

	if n := countRows(t, db, "booking_events"); n != 40 {
		t.Errorf("booking_events = %d rows, want the 40 valid events", n)
	}
	dead := deadLetters(t, db)
	if len(dead) != 1 || dead[0].offset != 20 {
		t.Fatalf("dead letters %+v; want exactly one, at offset 20", dead)
	}
	t.Logf("dead letter: %s", dead[0].err)
}

// levelCounter is a slog.Handler that counts records by level and forwards them.
type levelCounter struct {
	slog.Handler
	errors *atomic.Int64
}

func (h levelCounter) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.errors.Add(1)
	}
	return h.Handler.Handle(ctx, r)
}

func (h levelCounter) WithAttrs(a []slog.Attr) slog.Handler {
	return levelCounter{h.Handler.WithAttrs(a), h.errors}
}

func (h levelCounter) WithGroup(n string) slog.Handler {
	return levelCounter{h.Handler.WithGroup(n), h.errors}
}

// stuckCounters is consumertest.Counters plus the stuck gauge.
type stuckCounters struct {
	consumertest.Counters
	mu    sync.Mutex
	stuck map[string]int
}

func (c *stuckCounters) Stuck(reason string, delta int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stuck == nil {
		c.stuck = map[string]int{}
	}
	c.stuck[reason] += delta
}

func (c *stuckCounters) CommitFailed() {}

func (c *stuckCounters) get(reason string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stuck[reason]
}

// An error that no row can be blamed for (a renamed column) never dead-letters anything: the batch
// is retried without committing, with an ERROR log on every attempt, and after AlarmAfter attempts
// the consumer reports itself stuck (Health, the stuck gauge) until the schema is fixed; then
// everything is stored and the alarm clears.
func TestUnattributableErrorRetriesLoudlyUntilFixed(t *testing.T) {
	t.Parallel()
	addr, topic, db := onStack(t, 2)
	if _, err := db.Exec(t.Context(), "alter table booking_events rename column crawl_id to crawl_id_gone"); err != nil {
		t.Fatal(err)
	}
	msgs := kafkatest.Encode(t, testEvents(100, "stuck"))
	kafkatest.Produce(t, addr, topic, msgs)

	r := newChecked(t, addr, topic, kafkatest.Name(t, "g"), db)
	m := &stuckCounters{}
	health := &consumer.Health{}
	var errorLogs atomic.Int64
	logger := slog.New(levelCounter{slog.NewTextHandler(t.Output(), nil), &errorLogs})
	c := consumertest.Start(t, t.Context(), r, store.New(db), consumer.Config{BatchSize: 50,
		Backoff:    consumer.Backoff{Base: 5 * time.Millisecond, Max: 20 * time.Millisecond},
		AlarmAfter: 4, Health: health, Logger: logger, Metrics: m})

	testkit.WaitFor(t, 30*time.Second, "the consumer to report itself stuck", func() bool { return health.String() != "" })
	testkit.WaitFor(t, 30*time.Second, "8 retries", func() bool { return m.Retries.Load() >= 8 })
	if got := health.String(); !strings.Contains(got, "stuck") || !strings.Contains(got, "sqlstate 42703") {
		t.Errorf("health = %q, want a stuck report naming sqlstate 42703", got)
	}
	if m.get("sqlstate 42703") < 1 {
		t.Errorf("stuck gauge for sqlstate 42703 = %d, want >= 1", m.get("sqlstate 42703"))
	}
	if n := errorLogs.Load(); n < 8 {
		t.Errorf("%d ERROR log lines after %d retries; want one per attempt", n, m.Retries.Load())
	}
	if commits, _ := r.stats(); commits != 0 || countRows(t, db, "booking_events_dead") != 0 {
		t.Errorf("%d commits, %d dead letters while the schema was broken; want none", commits,
			countRows(t, db, "booking_events_dead"))
	}

	if _, err := db.Exec(t.Context(), "alter table booking_events rename column crawl_id_gone to crawl_id"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "every offset committed", func() bool { _, n := r.stats(); return n == len(msgs) })
	c.Stop(t)
	if n := countRows(t, db, "booking_events"); n != 100 {
		t.Errorf("booking_events = %d, want 100", n)
	}
	if got := health.String(); got != "" || m.get("sqlstate 42703") != 0 {
		t.Errorf("after the fix: health %q, stuck gauge %d; want healthy and 0", got, m.get("sqlstate 42703"))
	}
}
