//go:build chaos

package chaos_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// TestPostgresRestart stops the private PostgreSQL twice while consumer.Run (the consumer's loop,
// with the consumer's Reader settings) drains CHAOS_PG_EVENTS events: once with pg_ctl -m fast,
// once with -m immediate (a crash: no shutdown checkpoint), each time for 3 s. Every offset commit
// is first checked against the database (retrying while it is down): never an offset ahead of
// its rows. At the end: rows == events (no loss), distinct ids == rows (no duplicates),
// committed offsets at the end of every partition.
func TestPostgresRestart(t *testing.T) {
	st := stack(t)
	n := testkit.EnvInt(t, "CHAOS_PG_EVENTS", 50_000)
	d := newDrain(t, "pg")
	check, err := pgxpool.New(t.Context(), d.dbURL) // the checker's own pool
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	kafkatest.Produce(t, d.addr, d.topic, kafkatest.Encode(t, eventstest.CrawlEvents(0, n, "pgrestart")))

	r := consumertest.NewReader(t, d.addr, d.topic, d.group)
	cr := &commitChecker{t: t, r: r, db: check}
	logs := &testkit.SyncBuffer{}
	cons := consumertest.Start(t, t.Context(), cr, store.New(d.db), consumer.Config{
		BatchSize: 500, // smaller batches: more commits to check, more chances to be cut
		BatchWait: consumer.DefaultBatchWait,
		Backoff:   consumer.Backoff{Base: 100 * time.Millisecond, Max: 2 * time.Second},
		Logger:    slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	})

	for i, mode := range []string{"fast", "immediate"} {
		target := n * (i + 1) / 3
		testkit.WaitFor(t, 5*time.Minute, "progress before the restart", func() bool { return cr.committed.Load() >= int64(target) })
		st.stopPostgres(t, mode)
		atStop := cr.committed.Load()
		t.Logf("postgres stopped (%s) with %d of %d committed", mode, atStop, n)
		time.Sleep(3 * time.Second)
		st.up(t)
		t.Logf("postgres started again; %d committed meanwhile (batches in flight at the cut)", cr.committed.Load()-atStop)
	}
	testkit.WaitFor(t, 5*time.Minute, "every message committed", func() bool { return cr.committed.Load() >= int64(n) })
	cons.Stop(t)
	consumertest.Close(t, r)

	rows := count(t, check, "booking_events")
	var distinct int
	if err := check.QueryRow(context.WithoutCancel(t.Context()), "select count(distinct event_id) from booking_events").Scan(&distinct); err != nil {
		t.Fatal(err)
	}
	retries := len(logs.Lines("insert failed; retrying the same batch"))
	t.Logf("%d events: %d rows, %d distinct, %d commits checked (%d messages), %d insert retries logged",
		n, rows, distinct, cr.commits.Load(), cr.committed.Load(), retries)
	if rows != n || distinct != n {
		t.Errorf("rows = %d, distinct = %d; want %d (no loss, no duplicates)", rows, distinct, n)
	}
	if retries == 0 {
		t.Error("no insert was retried: the restarts did not hit the consumer")
	}
	if cr.committed.Load() != int64(n) {
		t.Errorf("committed %d messages, want exactly %d (a batch committed twice or skipped)", cr.committed.Load(), n)
	}
}

// commitChecker checks, before forwarding each CommitMessages, that every message of the batch
// is stored (retrying the check while PostgreSQL is down).
type commitChecker struct {
	t  *testing.T
	r  *kafkabus.GroupReader
	db *pgxpool.Pool

	commits, committed atomic.Int64
}

func (c *commitChecker) FetchMessage(ctx context.Context) (kafka.Message, error) {
	return c.r.FetchMessage(ctx)
}

func (c *commitChecker) CommitMessages(ctx context.Context, msgs ...kafka.Message) error {
	parts, offs := make([]int32, len(msgs)), make([]int64, len(msgs))
	for i, m := range msgs {
		parts[i], offs[i] = int32(m.Partition), m.Offset
	}
	var stored int
	err := retryDB(c.t, func(ctx context.Context) error {
		return c.db.QueryRow(ctx, `select count(*) from booking_events e
			join unnest($1::int[], $2::bigint[]) as m(p, o) on e.kafka_partition = m.p and e.kafka_offset = m.o
			where e.kafka_topic = $3`, parts, offs, msgs[0].Topic).Scan(&stored)
	})
	if err != nil {
		c.t.Errorf("check commit of %d messages: %v", len(msgs), err)
	} else if stored != len(msgs) {
		c.t.Errorf("commit of %d messages: only %d are stored: an offset ahead of its rows", len(msgs), stored)
	}
	if err := c.r.CommitMessages(ctx, msgs...); err != nil {
		return err
	}
	c.commits.Add(1)
	c.committed.Add(int64(len(msgs)))
	return nil
}
