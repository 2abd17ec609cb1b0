package consumer_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/internal/consumer"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// testEvents returns n distinct valid events; prefix keeps sets from different calls apart.
func testEvents(n int, prefix string) []events.Event {
	return testkit.Events(n, prefix, time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))
}

// newReader is the consumer's Reader config, with a shorter session for tests.
func newReader(t *testing.T, addr, topic, group string) *kafka.Reader {
	t.Helper()
	logger := testkit.Logger(t, slog.LevelInfo)
	return kafka.NewReader(kafkabus.GroupReaderConfig(kafkabus.GroupReaderOptions{
		Brokers: []string{addr}, Group: group, Topic: topic, QueueCapacity: 1000, Logger: logger,
	}))
}

func closeReader(t *testing.T, r *kafka.Reader) {
	done := make(chan error, 1)
	go func() { done <- r.Close() }()
	select {
	case err := <-done:
		_ = err // a close error after the test is not what it checks
	case <-time.After(10 * time.Second):
		t.Error("reader.Close took more than 10s")
	}
}

// counters is an consumer.Metrics that the test reads.
type counters struct {
	consumed, inserted, duplicates, dead, retries, batches atomic.Int64
}

func (c *counters) Batch(size int, r store.Result, _ time.Duration) {
	c.consumed.Add(int64(size))
	c.inserted.Add(int64(r.Inserted))
	c.duplicates.Add(int64(r.Duplicates))
	c.dead.Add(int64(r.DeadLettered))
	c.batches.Add(1)
}
func (c *counters) Retry()                 { c.retries.Add(1) }
func (c *counters) Lag(string, int, int64) {}

// checkedReader forwards to a Reader but first verifies, against the database, that every
// message it is asked to commit is stored (as an event or a dead letter): offsets never ahead of
// rows. It records the commits.
type checkedReader struct {
	t *testing.T
	r interface {
		FetchMessage(context.Context) (kafka.Message, error)
		CommitMessages(context.Context, ...kafka.Message) error
	}
	db *pgxpool.Pool // a direct pool, not the one under test

	mu        sync.Mutex
	commits   int
	committed int
	// beforeCommit, if set, runs first; a non-nil error is returned instead of committing.
	beforeCommit func(n int) error
}

func (c *checkedReader) FetchMessage(ctx context.Context) (kafka.Message, error) {
	return c.r.FetchMessage(ctx)
}

func (c *checkedReader) CommitMessages(ctx context.Context, msgs ...kafka.Message) error {
	c.mu.Lock()
	c.commits++
	n := c.commits
	hook := c.beforeCommit
	c.mu.Unlock()
	if missing := unstored(ctx, c.t, c.db, msgs); missing != 0 {
		c.t.Errorf("commit %d of %d messages: %d of them are not in the database", n, len(msgs), missing)
	}
	if hook != nil {
		if err := hook(n); err != nil {
			return err
		}
	}
	err := c.r.CommitMessages(ctx, msgs...)
	if err == nil {
		c.mu.Lock()
		c.committed += len(msgs)
		c.mu.Unlock()
	}
	return err
}

func (c *checkedReader) stats() (commits, committed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.commits, c.committed
}

// unstored counts msgs that are neither a stored event nor a dead letter at their position (a
// message that decodes can still be dead-lettered, when PostgreSQL rejects its row).
func unstored(ctx context.Context, t *testing.T, db *pgxpool.Pool, msgs []kafka.Message) int {
	ids := make([]*uuid.UUID, len(msgs))
	topics, parts, offs := make([]string, len(msgs)), make([]int32, len(msgs)), make([]int64, len(msgs))
	for i, m := range msgs {
		if e, err := events.Decode(m.Value); err == nil {
			ids[i] = &e.EventID
		}
		topics[i], parts[i], offs[i] = m.Topic, int32(m.Partition), m.Offset
	}
	var missing int
	err := db.QueryRow(ctx, `select count(*) from unnest($1::uuid[], $2::text[], $3::int[], $4::bigint[]) as m(id, t, p, o)
		where not exists (select 1 from booking_events e where e.event_id = m.id)
		  and not exists (select 1 from booking_events_dead d
		                  where d.kafka_topic = m.t and d.kafka_partition = m.p and d.kafka_offset = m.o)`,
		ids, topics, parts, offs).Scan(&missing)
	if err != nil {
		t.Errorf("check committed messages: %v", err)
		return 0
	}
	return missing
}

func countRows(t *testing.T, db *pgxpool.Pool, table string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(t.Context(), "select count(*) from "+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// runningConsumer runs consumer.Run in the background.
type runningConsumer struct {
	cancel context.CancelFunc
	done   chan error
}

type ingester interface {
	Ingest(context.Context, []store.Message) (store.Result, error)
}

func startConsumer(t *testing.T, r *checkedReader, s ingester, m *counters, batchSize int) *runningConsumer {
	return startConsumerCtx(t.Context(), t, r, s, m, batchSize)
}

func startConsumerCtx(ctx context.Context, t *testing.T, r *checkedReader, s ingester, m *counters, batchSize int) *runningConsumer {
	ctx, cancel := context.WithCancel(ctx)
	c := &runningConsumer{cancel: cancel, done: make(chan error, 1)}
	cfg := consumer.Config{BatchSize: batchSize, BatchWait: 50 * time.Millisecond,
		Backoff: consumer.Backoff{Base: 20 * time.Millisecond, Max: 200 * time.Millisecond},
		Logger:  testkit.Logger(t, slog.LevelInfo), Metrics: m}
	go func() { c.done <- consumer.Run(ctx, r, s, cfg) }()
	return c
}

func (c *runningConsumer) stop(t *testing.T) {
	t.Helper()
	c.cancel()
	select {
	case err := <-c.done:
		if err != nil {
			t.Errorf("consumer.Run: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("consumer.Run did not return within 15s of cancellation")
	}
}
