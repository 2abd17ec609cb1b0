package consumer_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// deadLetteredBetween produces valid[0], bad[0], valid[1], bad[1], … and then the rest of valid
// to a one-partition topic, one message per request (a large value must not share a produce
// batch), so that bad value i sits at offset 2i+1 between valid events. It runs the consumer in
// batches of batchSize until every offset is committed, wants every valid event stored and one
// dead letter per bad value, at its offset, and returns the dead letters (at most one per bad
// value) for the caller to check their contents.
func deadLetteredBetween(t *testing.T, valid, bad []kafka.Message, batchSize int, timeout time.Duration) []deadLetter {
	t.Helper()
	addr, topic, db := onStack(t, 1)
	var msgs []kafka.Message
	for i, m := range bad {
		msgs = append(msgs, valid[i], m)
	}
	msgs = append(msgs, valid[len(bad):]...)
	for _, m := range msgs {
		kafkatest.Produce(t, addr, topic, []kafka.Message{m})
	}

	r := newChecked(t, addr, topic, kafkatest.Name(t, "g"), db)
	c := consumertest.Start(t, t.Context(), r, store.New(db), consumer.Config{BatchSize: batchSize})
	testkit.WaitFor(t, timeout, "every offset committed", func() bool { _, n := r.stats(); return n == len(msgs) })
	c.Stop(t)

	if n := countRows(t, db, "booking_events"); n != int64(len(valid)) {
		t.Errorf("booking_events = %d rows, want the %d valid events", n, len(valid))
	}
	dead := deadLetters(t, db)
	for i, d := range dead {
		if i >= len(bad) {
			t.Errorf("unexpected dead letter at offset %d: %s", d.offset, d.err)
		} else if d.offset != int64(2*i+1) {
			t.Errorf("dead letter %d at offset %d (%s); want offset %d", i, d.offset, d.err, 2*i+1)
		}
	}
	if len(dead) != len(bad) {
		t.Errorf("%d dead letters, want %d", len(dead), len(bad))
	}
	return dead[:min(len(dead), len(bad))]
}

func TestPoisonMessagesAreDeadLetteredAndTheStreamGoesOn(t *testing.T) {
	t.Parallel()
	valid := kafkatest.Encode(t, testEvents(8, "poison"))
	mutate := func(f func(map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(valid[0].Value, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	poison := []struct {
		name, wantErr string
		value         []byte
	}{
		{"InvalidJSON", "not a JSON event", []byte(`{"event_id": "x",`)},
		{"MissingField", "missing field", mutate(func(m map[string]any) { delete(m, "crawl_id") })},
		{"WrongType", "not a JSON event", mutate(func(m map[string]any) { m["players"] = "four" })},
		{"UnknownEventType", "unknown event_type", mutate(func(m map[string]any) { m["event_type"] = "listing_exploded" })},
		{"OneMegabyte", "too large", []byte(`{"course_name":"` + strings.Repeat("a", 1_000_000) + `"}`)},
		{"InvalidUTF8", "invalid UTF-8", []byte(strings.Replace(string(valid[0].Value), "poison", "pois\xffon", 1))},
		{"February30", "bad play_date", mutate(func(m map[string]any) { m["play_date"] = "2026-02-30" })},
		{"Empty", "not a JSON event", []byte{}},
	}
	var bad []kafka.Message
	for _, p := range poison {
		bad = append(bad, kafka.Message{Key: []byte(p.name), Value: p.value})
	}

	dead := deadLetteredBetween(t, valid, bad, 5, 30*time.Second) // several batches, each mixing valid and poison
	for i, d := range dead {
		p := poison[i]
		wantSize := len(p.value)
		if wantSize > events.MaxEventBytes { // kept as a prefix since the memory bound
			wantSize = consumer.DeadValuePrefix
		}
		if !strings.Contains(d.err, p.wantErr) || len(d.raw) != wantSize {
			t.Errorf("%s: dead letter at offset %d (%d bytes): %q; want %d bytes, error containing %q",
				p.name, d.offset, len(d.raw), d.err, wantSize, p.wantErr)
		}
	}
}

// Values over the 64 KiB event limit are never held or stored whole: each
// dead letter keeps the first 4 KiB as raw_value, and its error gives the full length and the
// SHA-256 of the whole value; the valid events around them are stored.
func TestOversizeValuesAreDeadLetteredAsABoundedPrefix(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	var junk []kafka.Message
	for i := range 5 {
		v := make([]byte, 900<<10)
		for j := range v {
			v[j] = byte(r.UintN(256))
		}
		junk = append(junk, kafka.Message{Key: []byte(fmt.Sprint("junk-", i)), Value: v})
	}

	dead := deadLetteredBetween(t, kafkatest.Encode(t, testEvents(6, "oversize")), junk, 100, 60*time.Second)
	for i, d := range dead {
		want := junk[i].Value
		sum := fmt.Sprintf("%x", sha256.Sum256(want))
		if len(d.raw) != 4096 || string(d.raw) != string(want[:4096]) ||
			!strings.Contains(d.err, fmt.Sprint(len(want), " bytes")) || !strings.Contains(d.err, sum) {
			t.Errorf("dead letter at offset %d: %d bytes kept, error %q; want the first 4096 bytes, "+
				"the length %d and sha256 %s", d.offset, len(d.raw), d.err, len(want), sum)
		}
	}
}

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
		TeeTime: e.TeeTime, Values: events.Values{PriceKRW: e.PriceKRW, Players: e.Players}}
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
