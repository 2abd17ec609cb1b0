package consumerbench_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// drainClock wraps a Reader and records when the first message was fetched and when the
// committed count reached want: the drain time excludes the group join, for every contender alike.
type drainClock struct {
	r    *kafkabus.GroupReader
	want int64

	committed  atomic.Int64
	mu         sync.Mutex
	first, end time.Time
	done       chan struct{}
}

func newDrainClock(r *kafkabus.GroupReader, want int) *drainClock {
	return &drainClock{r: r, want: int64(want), done: make(chan struct{})}
}

func (d *drainClock) FetchMessage(ctx context.Context) (kafka.Message, error) {
	m, err := d.r.FetchMessage(ctx)
	if err == nil {
		d.mu.Lock()
		if d.first.IsZero() {
			d.first = time.Now()
		}
		d.mu.Unlock()
	}
	return m, err
}

func (d *drainClock) CommitMessages(ctx context.Context, msgs ...kafka.Message) error {
	err := d.r.CommitMessages(ctx, msgs...)
	if err == nil && d.committed.Add(int64(len(msgs))) >= d.want {
		d.mu.Lock()
		if d.end.IsZero() {
			d.end = time.Now()
			close(d.done)
		}
		d.mu.Unlock()
	}
	return err
}

// wait blocks until want messages were committed (or fails after timeout) and returns the drain
// time, first fetch to last commit.
func (d *drainClock) wait(b testing.TB, timeout time.Duration) time.Duration {
	b.Helper()
	select {
	case <-d.done:
	case <-time.After(timeout):
		b.Fatalf("only %d of %d messages committed after %v", d.committed.Load(), d.want, timeout)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.end.Sub(d.first)
}

// consumeWithIngest drains want messages of topic with consumer.Run (the production loop, default
// batch size) into pool under a new group, and returns the drain time.
func consumeWithIngest(b testing.TB, addr, topic, group string, pool *pgxpool.Pool, want, inflight int) time.Duration {
	b.Helper()
	r := consumertest.NewReader(b, addr, topic, group)
	clock := newDrainClock(r, want)
	run := consumertest.Start(b, b.Context(), clock, store.New(pool), consumertest.Production(consumer.Config{Inflight: inflight}))
	d := clock.wait(b, 10*time.Minute)
	run.Stop(b)
	consumertest.Close(b, r)
	return d
}

// consumeNaive drains want messages one at a time: FetchMessage, decode, one autocommit INSERT,
// CommitMessages of that message. It returns the drain time.
func consumeNaive(b testing.TB, addr, topic, group string, pool *pgxpool.Pool, want int) time.Duration {
	b.Helper()
	r := consumertest.NewReader(b, addr, topic, group)
	defer consumertest.Close(b, r)
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
	defer cancel()
	var start time.Time
	for i := range want {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			b.Fatalf("naive fetch %d: %v", i, err)
		}
		if i == 0 {
			start = time.Now()
		}
		if err := consumertest.NaiveStore(ctx, r, pool, m); err != nil {
			b.Fatalf("naive message %d: %v", i, err)
		}
	}
	return time.Since(start)
}

// copyRows COPYs the messages' rows into booking_events and returns how long it took.
func copyRows(b testing.TB, pool *pgxpool.Pool, topic string, msgs []kafka.Message) time.Duration {
	b.Helper()
	rows := make([][]any, len(msgs))
	for i, m := range msgs {
		e, err := events.Decode(m.Value)
		if err != nil {
			b.Fatal(err)
		}
		rows[i] = storetest.Row(e, topic, i%3, int64(i), m.Value)
	}
	start := time.Now()
	if _, err := pool.CopyFrom(b.Context(), pgx.Identifier{"booking_events"}, storetest.Columns, pgx.CopyFromRows(rows)); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// count returns the number of rows in table.
func count(b testing.TB, pool *pgxpool.Pool, table string) int {
	b.Helper()
	var n int
	if err := pool.QueryRow(b.Context(), "select count(*) from "+table).Scan(&n); err != nil {
		b.Fatalf("count %s: %v", table, err)
	}
	return n
}
