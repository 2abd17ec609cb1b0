package consumer_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// TestManyStatementsOfOneTransactionSwitchToTheExclusiveLock: the projection's per-listing
// advisory locks live until the transaction ends, so they are counted per transaction. Three
// statements of 900 new listings each, in one transaction beside a running consumer: the first two
// take one listing lock each (1,800), the third would pass 2,000 and takes the rebuild's (1319, 0)
// lock exclusive instead (the shared one it held is upgraded). The consumer's next batch waits for
// that lock, stores everything once the transaction commits, and the projection equals the
// definition.
func TestManyStatementsOfOneTransactionSwitchToTheExclusiveLock(t *testing.T) {
	t.Parallel()
	addr, topic, db := onStack(t, 1)
	ctx := t.Context()
	c := consumertest.Start(t, ctx, newChecked(t, addr, topic, kafkatest.Name(t, "g"), db), store.New(db), consumer.Config{BatchSize: 50})
	kafkatest.Produce(t, addr, topic, kafkatest.Encode(t, testEvents(50, "before")))
	testkit.WaitFor(t, 30*time.Second, "the first 50 events stored", func() bool { return c.Metrics.Inserted.Load() >= 50 })

	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after the commit: a no-op
	var pid int
	if err := tx.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	// locks: the transaction's listing locks, and whether it holds (1319, 0) exclusive.
	locks := func() (listing int, exclusive bool) {
		t.Helper()
		if err := db.QueryRow(ctx, `select count(*) filter (where classid = 1320),
			coalesce(bool_or(classid = 1319 and objid = 0 and mode = 'ExclusiveLock' and granted), false)
			from pg_locks where locktype = 'advisory' and pid = $1`, pid).Scan(&listing, &exclusive); err != nil {
			t.Fatal(err)
		}
		return listing, exclusive
	}
	for s := range 3 {
		if _, err := tx.Exec(ctx, `insert into booking_events (event_id, event_type, source, listing_key, course_name,
			play_date, tee_time, price_krw, occurred_at, crawl_id, payload)
			select gen_random_uuid(), 'listing_opened', 'bulk', 'bulk|' || $1::int || '_' || i, 'C', '2099-05-10', '07:00',
			100000, now() - interval '1 hour', 'bulk', '{}' from generate_series(1, 900) i`, s); err != nil {
			t.Fatalf("statement %d: %v", s+1, err)
		}
		listing, exclusive := locks()
		t.Logf("after statement %d: %d listing locks, (1319, 0) exclusive %v", s+1, listing, exclusive)
	}
	if listing, exclusive := locks(); !exclusive || listing > 2000 {
		t.Fatalf("a transaction of 2,700 listings holds %d listing locks, (1319, 0) exclusive %v; want at most 2,000 and the exclusive lock",
			listing, exclusive)
	}

	kafkatest.Produce(t, addr, topic, kafkatest.Encode(t, testEvents(50, "during")))
	testkit.WaitFor(t, 30*time.Second, "the consumer's batch waiting for the exclusive lock", func() bool {
		var waiting bool
		err := db.QueryRow(ctx, `select exists (select from pg_locks where locktype = 'advisory' and classid = 1319
			and objid = 0 and not granted and pid <> $1)`, pid).Scan(&waiting)
		return err == nil && waiting
	})
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, "the events produced during the transaction stored", func() bool {
		return c.Metrics.Inserted.Load() >= 100
	})
	c.Stop(t)
	if n := countRows(t, db, "booking_events"); n != 100+2700 {
		t.Errorf("%d events stored, want %d", n, 100+2700)
	}
	diffs, err := store.New(db).VerifyProjection(ctx)
	if err != nil || len(diffs) != 0 {
		t.Fatalf("projection verify: %v, %d differences: %v", err, len(diffs), fmt.Sprint(diffs))
	}
}
