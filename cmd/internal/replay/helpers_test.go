package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/crawler/practice"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// The practice set is generated once per test binary (5-15 s) and shared read-only.
var (
	practiceOnce sync.Once
	practiceSet  []byte
	practiceErr  error
)

// practiceBytes returns the default practice set (practice.Generate with zero Options).
func practiceBytes(tb testing.TB) []byte {
	tb.Helper()
	practiceOnce.Do(func() {
		var buf bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		_, practiceErr = practice.Generate(ctx, &buf, practice.Options{})
		practiceSet = buf.Bytes()
	})
	if practiceErr != nil {
		tb.Fatalf("generate the practice set: %v", practiceErr)
	}
	return practiceSet
}

// decodeAll decodes every line of b (all must be valid).
func decodeAll(tb testing.TB, b []byte) []events.Event {
	tb.Helper()
	return eventstest.DecodeEvents(tb, bytes.NewReader(b))
}

func distinctIDs(evs []events.Event) int {
	m := map[uuid.UUID]bool{}
	for _, e := range evs {
		m[e.EventID] = true
	}
	return len(m)
}

// firstLines returns the first n lines of b.
func firstLines(b []byte, n int) []byte {
	i := 0
	for ; n > 0 && i < len(b); n-- {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return b
		}
		i += j + 1
	}
	return b[:i]
}

func newWriter(tb testing.TB, addr, topic string) *kafkabus.SyncWriter {
	tb.Helper()
	w := kafkabus.NewSyncWriter(kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic, Logger: testkit.Logger(tb, slog.LevelWarn)})
	tb.Cleanup(func() { _ = w.Close() })
	return w
}

func endOffsets(tb testing.TB, addr, topic string) int64 {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n, err := kafkatest.EndOffsets(ctx, addr, topic)
	if err != nil {
		tb.Fatalf("end offsets of %s: %v", topic, err)
	}
	return n
}

// replayPipeline is the stack a replay test writes into: a fresh 3-partition topic, a fresh
// database, a consumer draining the one into the other in its own group, and a writer to the topic.
func replayPipeline(tb testing.TB) (addr, topic string, db *pgxpool.Pool, c *consumertest.Running, w *kafkabus.SyncWriter) {
	tb.Helper()
	addr = kafkatest.Bootstrap(tb)
	topic = kafkatest.Topic(tb, addr, 3)
	db = storetest.NewDB(tb)
	c = startConsumer(tb, addr, topic, kafkatest.Name(tb, "g"), db)
	w = newWriter(tb, addr, topic)
	return addr, topic, db, c, w
}

// startConsumer is the real booking-consumer loop (consumer.Run over the production group
// Reader) from topic into db, in group, until the test ends; its Metrics count what it stored.
func startConsumer(tb testing.TB, addr, topic, group string, db *pgxpool.Pool) *consumertest.Running {
	tb.Helper()
	r := consumertest.NewReader(tb, addr, topic, group)
	return consumertest.Start(tb, context.Background(), r, store.New(db),
		consumer.Config{BatchSize: 1000, BatchWait: 20 * time.Millisecond})
}

func countRows(tb testing.TB, db *pgxpool.Pool) int64 {
	tb.Helper()
	return storetest.CountEvents(tb, db)
}

// lifetimes renders booking_lifetimes with a fixed column list, leaving out lifetime (now() for
// open listings), ordered by listing_key: equal strings mean an identical view.
func lifetimes(tb testing.TB, db *pgxpool.Pool) string {
	tb.Helper()
	rows, err := db.Query(context.Background(), `select listing_key, source, course_name, course_part,
		play_date::text, tee_time::text, status, opened_at, closed_at, last_event_type, last_event_at,
		open_price_krw, last_price_krw, change_count, reopen_count
		from booking_lifetimes order by listing_key`)
	if err != nil {
		tb.Fatalf("query booking_lifetimes: %v", err)
	}
	defer rows.Close()
	var b strings.Builder
	n := 0
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintln(&b, vals...)
		n++
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	if n == 0 {
		tb.Fatal("booking_lifetimes is empty")
	}
	return b.String()
}

// atomicInt is a counter whose load method can be handed out as a func() int64.
type atomicInt struct{ v atomic.Int64 }

func (a *atomicInt) add(n int64) { a.v.Add(n) }
func (a *atomicInt) load() int64 { return a.v.Load() }
