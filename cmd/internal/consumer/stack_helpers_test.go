package consumer_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// testEvents returns n distinct valid events; prefix keeps sets from different calls apart.
func testEvents(n int, prefix string) []events.Event {
	return eventstest.Events(n, prefix, time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC))
}

// onStack is what a stack test starts from: the stack's broker, a topic of its own with the
// given number of partitions, and a database of its own.
func onStack(t *testing.T, partitions int) (addr, topic string, db *pgxpool.Pool) {
	t.Helper()
	addr = kafkatest.Bootstrap(t)
	return addr, kafkatest.Topic(t, addr, partitions), storetest.NewDB(t)
}

// checkedReader forwards to a Reader but first verifies, against the database, that every
// message it is asked to commit is stored (as an event or a dead letter): offsets never ahead of
// rows. It records the commits.
type checkedReader struct {
	t  *testing.T
	r  *kafkabus.GroupReader
	db *pgxpool.Pool // a direct pool, not the one under test

	mu        sync.Mutex
	commits   int
	committed int
	// beforeCommit, if set, runs first; a non-nil error is returned instead of committing.
	beforeCommit func(n int) error
}

// newChecked is a checkedReader over db around the production group reader of topic in group
// (consumertest.NewReader, closed when the test ends).
func newChecked(t *testing.T, addr, topic, group string, db *pgxpool.Pool) *checkedReader {
	t.Helper()
	return &checkedReader{t: t, r: consumertest.NewReader(t, addr, topic, group), db: db}
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

// deadLetter is a row of booking_events_dead: where its message was, the error, the value kept.
type deadLetter struct {
	offset int64
	err    string
	raw    []byte
}

// deadLetters reads every dead letter, in offset order.
func deadLetters(t *testing.T, db *pgxpool.Pool) []deadLetter {
	t.Helper()
	rows, err := db.Query(t.Context(), `select kafka_offset, error, coalesce(raw_value, '') from booking_events_dead order by kafka_offset`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []deadLetter
	for rows.Next() {
		var d deadLetter
		if err := rows.Scan(&d.offset, &d.err, &d.raw); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
