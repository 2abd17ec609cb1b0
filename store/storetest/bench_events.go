package storetest

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// BenchEventsSQL generates 1,000,000 events over 100,000 listings (10 each) straight into
// booking_events: 50 courses x 90 play dates (2026-05-01 on) x 23 tee times; every listing opens
// and changes price; a third are booked and reopened halfway; at the end half are booked, a quarter
// expire and a quarter stay open. The events occur between 2026-04-01 and 2026-04-02 (UTC). It is
// the data of views/bench_test.go's benchmarks, shared here for the dashboard's.
const BenchEventsSQL = `
insert into booking_events (event_id, event_type, source, listing_key, course_name, course_part,
    play_date, tee_time, price_krw, players, close_reason, occurred_at, crawl_id, payload)
select md5(i || '-' || j)::uuid, typ, 'teeup',
       'teeup|Course ' || (i % 50) || '||' || pd || '|' || to_char(tt, 'HH24:MI'),
       'Course ' || (i % 50), '', pd, tt, 100000 + j * 1000, 4, reason,
       timestamptz '2026-04-01 00:00+00' + i * interval '1 second' + j * interval '10 minutes',
       'crawl-' || j,
       jsonb_build_object('event_id', md5(i || '-' || j)::uuid, 'event_type', typ, 'schema_version', 1,
           'source', 'teeup', 'course_name', 'Course ' || (i % 50), 'play_date', pd, 'tee_time', to_char(tt, 'HH24:MI'),
           'price_krw', 100000 + j * 1000, 'players', 4, 'crawl_id', 'crawl-' || j)
from generate_series(0, 99999) i
cross join generate_series(1, 10) j
cross join lateral (select date '2026-05-01' + (i / 50) % 90 as pd,
                           time '05:00' + (i / 4500) * interval '7 minutes' as tt) k
cross join lateral (select case
        when j = 1 then 'listing_opened'
        when j = 5 and i % 3 = 0 then 'listing_closed'
        when j = 6 and i % 3 = 0 then 'listing_opened'
        when j = 10 and i % 4 <> 3 then 'listing_closed'
        else 'listing_changed' end as typ) t
cross join lateral (select case
        when typ <> 'listing_closed' then null
        when j = 10 and i % 4 = 1 then 'expired'
        else 'booked' end as reason) r`

// LoadBenchEvents fills booking_events with BenchEventsSQL, dropping its secondary indexes during
// the load and re-creating them afterwards (3x faster than maintaining them), and analyzes it. The
// projection's triggers are disabled during the load, as for a restore, so listing_lifetimes is
// left stale: call store.RebuildProjection after it.
func LoadBenchEvents(tb testing.TB, pool *pgxpool.Pool) {
	tb.Helper()
	ctx := tb.Context()
	start := time.Now()
	exec := func(sql string) {
		tb.Helper()
		if _, err := pool.Exec(ctx, sql); err != nil {
			tb.Fatalf("%.60s...: %v", sql, err)
		}
	}
	rows, err := pool.Query(ctx, `select indexname, indexdef from pg_indexes
		where tablename = 'booking_events' and indexname <> 'booking_events_pkey'`)
	if err != nil {
		tb.Fatal(err)
	}
	var names, defs []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			tb.Fatal(err)
		}
		names, defs = append(names, name), append(defs, def)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	for _, name := range names {
		exec("drop index " + name)
	}
	ProjectionTriggers(tb, pool, false)
	exec(BenchEventsSQL)
	ProjectionTriggers(tb, pool, true)
	for _, def := range defs {
		exec(def)
	}
	exec("vacuum analyze booking_events")
	var events, listings int
	if err := pool.QueryRow(ctx, "select count(*), count(distinct listing_key) from booking_events").Scan(&events, &listings); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("loaded %d events / %d listings in %v", events, listings, time.Since(start).Round(time.Millisecond))
	if events != 1_000_000 || listings != 100_000 {
		tb.Fatalf("loaded %d events / %d listings, want 1M / 100k", events, listings)
	}
}

// ProjectionTriggers enables or disables the triggers on booking_events that keep the
// listing_lifetimes projection (migration 007): off is the benchmarks' baseline, the same table
// without the projection.
func ProjectionTriggers(tb testing.TB, pool *pgxpool.Pool, on bool) {
	tb.Helper()
	verb := "disable"
	if on {
		verb = "enable"
	}
	for _, t := range []string{"insert", "update", "delete", "truncate"} {
		if _, err := pool.Exec(tb.Context(), "alter table booking_events "+verb+" trigger booking_events_projection_"+t); err != nil {
			tb.Fatal(err)
		}
	}
}
