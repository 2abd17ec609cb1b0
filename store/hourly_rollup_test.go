package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestHourlyRollupFollowsEveryWritePath: the dashboard's totals ("N events stored", "last
// ingest") and its events-per-hour chart come from booking_events_hourly, which must say what
// booking_events holds after every write path, not only after INSERTs: an UPDATE moving events to
// another hour and type, a DELETE, a MERGE that deletes and inserts, a writable CTE, TRUNCATE (in a
// transaction that is rolled back, then for real). VerifyHourly (lifetimes --verify) agrees.
func TestHourlyRollupFollowsEveryWritePath(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	s := store.New(pool)
	ctx := t.Context()
	psql(t, pool, nil, `insert into booking_events (event_id, event_type, source, listing_key, course_name,
		play_date, tee_time, price_krw, occurred_at, crawl_id, payload)
		select gen_random_uuid(), 'listing_opened', 'roll', 'roll|' || i, 'C', '2099-05-10', '07:00', 100000,
		timestamptz '2099-05-01 00:00Z' + (i % 10) * interval '1 hour', 'roll', '{}' from generate_series(1, 1000) i`)

	check := func(step string) {
		t.Helper()
		var stored int64
		var last *time.Time
		if err := pool.QueryRow(ctx, "select count(*), max(ingested_at) from booking_events").Scan(&stored, &last); err != nil {
			t.Fatal(err)
		}
		var want []store.HourCount
		rows, err := pool.Query(ctx, `select date_trunc('hour', occurred_at, 'UTC'), event_type, count(*)
			from booking_events group by 1, 2 order by 1, 2`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var h store.HourCount
			if err := rows.Scan(&h.Hour, &h.EventType, &h.Events); err != nil {
				t.Fatal(err)
			}
			want = append(want, h)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		var total int64
		var lastIngest *time.Time
		var got []store.HourCount
		if err := s.ReadOnly(ctx, store.ReadOptions{}, func(r *store.Reader) error {
			var err error
			if total, lastIngest, err = r.IngestTotals(ctx); err != nil {
				return err
			}
			got, err = r.EventsPerHour(ctx, time.Unix(0, 0), time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if total != stored {
			t.Errorf("%s: the dashboard says %d events stored, booking_events holds %d", step, total, stored)
		}
		if (last == nil) != (lastIngest == nil) || (last != nil && lastIngest.Before(*last)) {
			t.Errorf("%s: last ingest %v, the newest stored event was ingested at %v", step, lastIngest, last)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: events per hour\n got %v\nwant %v", step, got, want)
		}
		diffs, err := s.VerifyHourly(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(diffs) != 0 {
			t.Errorf("%s: VerifyHourly found %d differences: %v", step, len(diffs), diffs)
		}
	}
	check("after the insert")
	psql(t, pool, nil, `update booking_events set occurred_at = occurred_at + interval '30 hours'
		where listing_key in (select 'roll|' || i from generate_series(1, 100) i)`)
	check("after an UPDATE of occurred_at")
	psql(t, pool, nil, `update booking_events set event_type = 'listing_closed', close_reason = 'booked'
		where listing_key in (select 'roll|' || i from generate_series(101, 150) i)`)
	check("after an UPDATE of event_type")
	psql(t, pool, nil, `delete from booking_events where listing_key in (select 'roll|' || i from generate_series(151, 250) i)`)
	check("after a DELETE")
	psql(t, pool, nil, `merge into booking_events e
		using (select 'roll|' || i as k from generate_series(251, 270) i) m on e.listing_key = m.k
		when matched then delete`)
	check("after a MERGE delete")
	psql(t, pool, nil, `with gone as (delete from booking_events where listing_key in (select 'roll|' || i from generate_series(271, 300) i)
		returning *)
		insert into booking_events (event_id, event_type, source, listing_key, course_name, play_date, tee_time,
		price_krw, occurred_at, crawl_id, payload)
		select gen_random_uuid(), event_type, source, listing_key || '|again', course_name, play_date, tee_time,
		price_krw, occurred_at + interval '2 days', crawl_id, payload from gone`)
	check("after a writable CTE deleting and inserting")

	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "truncate booking_events"); err != nil {
		t.Fatal(err)
	}
	var rollup int64
	if err := tx.QueryRow(ctx, "select coalesce(sum(events), 0) from booking_events_hourly").Scan(&rollup); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if rollup != 0 {
		t.Errorf("inside the TRUNCATE's transaction the rollup sums to %d events, want 0", rollup)
	}
	check("after a rolled-back TRUNCATE")
	psql(t, pool, nil, "truncate booking_events")
	check("after TRUNCATE")
}
