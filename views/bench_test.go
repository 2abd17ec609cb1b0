package views_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// benchEventsSQL generates 1,000,000 events over 100,000 listings (10 each) straight into
// booking_events: 50 courses x 90 play dates x 23 tee times; every listing opens, changes price;
// a third are booked and reopened halfway; at the end half are booked, a quarter expire and a
// quarter stay open. Arrival order does not matter to the view, so one INSERT ... SELECT is a
// faithful stand-in for the consumer's path (store.Ingest writes the same columns).
const benchEventsSQL = `
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

// The measured queries: an aggregate over a 7-day play-date window (about 7,800 listings), one
// listing, and an aggregate over the whole view.
const (
	windowAggSQL = `select status, count(*), avg(extract(epoch from lifetime)), sum(change_count), sum(reopen_count)
		from booking_lifetimes where play_date between $1 and $2 group by status`
	oneListingSQL = `select * from booking_lifetimes where listing_key = $1`
	wholeViewSQL  = `select status, count(*), avg(extract(epoch from lifetime)) from booking_lifetimes group by status`

	// naiveWindowAggSQL is the first formulation anyone writes: DISTINCT ON for the latest event
	// and correlated subqueries for the rest, filtered after the fact. Same answer for listings
	// that never reopen; shown only for the speed ratio.
	naiveWindowAggSQL = `select status, count(*), avg(extract(epoch from lifetime)), sum(change_count), sum(reopen_count)
		from (
		  select l.*, coalesce(l.closed_at, now()) - l.opened_at as lifetime from (
		    select distinct on (e.listing_key) e.listing_key, e.play_date,
		      case when e.event_type = 'listing_closed' then e.close_reason else 'open' end as status,
		      case when e.event_type = 'listing_closed' then e.occurred_at end as closed_at,
		      (select max(o.occurred_at) from booking_events o
		         where o.listing_key = e.listing_key and o.event_type = 'listing_opened') as opened_at,
		      (select count(*) from booking_events c
		         where c.listing_key = e.listing_key and c.event_type = 'listing_changed') as change_count,
		      (select count(*) - 1 from booking_events r
		         where r.listing_key = e.listing_key and r.event_type = 'listing_opened') as reopen_count
		    from booking_events e
		    order by e.listing_key, e.occurred_at desc, e.event_id desc) l) x
		where play_date between $1 and $2 group by status`
)

// BenchmarkBookingLifetimes loads 1M events / 100k listings into a database of its own (about a
// minute on the shared dev machine) and reports, in one run: window_ms (7-day play-date
// aggregate, target < 300), listing_ms (one listing, target < 5), whole_view_ms, naive_window_ms
// and naive/view (how much faster the view is than the naive formulation).
//
//	go test ./views/ -run '^$' -bench BookingLifetimes -benchtime 10x -v
func BenchmarkBookingLifetimes(b *testing.B) {
	pool := storetest.NewDB(b)
	ctx := b.Context()
	load(b, pool)

	from, to := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 7, 0, 0, 0, 0, time.UTC)
	key := "teeup|Course 7||2026-06-10|06:10"

	plan := explain(b, pool, windowAggSQL, from, to)
	b.Logf("EXPLAIN window aggregate:\n%s", plan)
	if strings.Contains(plan, "Seq Scan on booking_events") {
		b.Fatal("the play_date filter is not pushed down to the index")
	}
	b.Logf("EXPLAIN one listing:\n%s", explain(b, pool, oneListingSQL, key))

	var n int
	for b.Loop() {
		rows, err := pool.Query(ctx, windowAggSQL, from, to)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
			n++
		}
		if rows.Err() != nil {
			b.Fatal(rows.Err())
		}
	}
	if n == 0 {
		b.Fatal("window aggregate returned no rows")
	}

	window := timeQuery(b, pool, 5, windowAggSQL, from, to)
	naive := timeQuery(b, pool, 1, naiveWindowAggSQL, from, to)
	b.ReportMetric(ms(window), "window_ms")
	b.ReportMetric(ms(timeQuery(b, pool, 20, oneListingSQL, key)), "listing_ms")
	b.ReportMetric(ms(timeQuery(b, pool, 3, wholeViewSQL)), "whole_view_ms")
	b.ReportMetric(ms(naive), "naive_window_ms")
	b.ReportMetric(float64(naive)/float64(window), "naive/view")
}

// load fills booking_events with benchEventsSQL, dropping its secondary indexes during the load
// and re-creating them from their own definitions afterwards (3x faster than maintaining them).
func load(b *testing.B, pool *pgxpool.Pool) {
	ctx := b.Context()
	start := time.Now()
	rows, err := pool.Query(ctx, `select indexname, indexdef from pg_indexes
		where tablename = 'booking_events' and indexname <> 'booking_events_pkey'`)
	if err != nil {
		b.Fatal(err)
	}
	var names, defs []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			b.Fatal(err)
		}
		names, defs = append(names, name), append(defs, def)
	}
	for _, name := range names {
		mustExec(b, pool, "drop index "+name)
	}
	mustExec(b, pool, benchEventsSQL)
	for _, def := range defs {
		mustExec(b, pool, def)
	}
	mustExec(b, pool, "vacuum analyze booking_events")
	var events, listings int
	if err := pool.QueryRow(ctx, "select count(*), count(distinct listing_key) from booking_events").Scan(&events, &listings); err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d events / %d listings in %v", events, listings, time.Since(start).Round(time.Millisecond))
	if events != 1_000_000 || listings != 100_000 {
		b.Fatalf("loaded %d events / %d listings, want 1M / 100k", events, listings)
	}
}

func mustExec(b *testing.B, pool *pgxpool.Pool, sql string, args ...any) {
	b.Helper()
	if _, err := pool.Exec(b.Context(), sql, args...); err != nil {
		b.Fatalf("%.60s...: %v", sql, err)
	}
}

func explain(b *testing.B, pool *pgxpool.Pool, sql string, args ...any) string {
	b.Helper()
	rows, err := pool.Query(b.Context(), "explain (analyze, buffers, costs off) "+sql, args...)
	if err != nil {
		b.Fatal(err)
	}
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			b.Fatal(err)
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// timeQuery returns the median wall time of n runs of sql, rows read to the end.
func timeQuery(b *testing.B, pool *pgxpool.Pool, n int, sql string, args ...any) time.Duration {
	b.Helper()
	var ds []time.Duration
	for range n {
		start := time.Now()
		rows, err := pool.Query(b.Context(), sql, args...)
		if err != nil {
			b.Fatal(err)
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
