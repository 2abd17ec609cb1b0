package views_test

import (
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// The measured queries, over rel: the definition booking_lifetimes_from_events, or the served
// booking_lifetimes over the projection (projection_bench_test.go). windowAggSQL is an aggregate over a play-date
// window (7 days: about 7,800 listings), oneListingSQL one listing.
func windowAggSQL(rel string) string {
	return `select status, count(*), avg(extract(epoch from lifetime)), sum(change_count), sum(reopen_count)
		from ` + rel + ` where play_date between $1 and $2 group by status`
}

func oneListingSQL(rel string) string { return `select * from ` + rel + ` where listing_key = $1` }

// wholeViewSQL aggregates the whole view.
const (
	wholeViewSQL = `select status, count(*), avg(extract(epoch from lifetime)) from booking_lifetimes_from_events group by status`

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

// BenchmarkBookingLifetimes measures the definition, booking_lifetimes_from_events. It loads 1M events / 100k listings into a database of its own (about a
// minute on the shared dev machine) and reports, in one run: window_ms (7-day play-date
// aggregate, target < 300), listing_ms (one listing, target < 5), whole_view_ms, naive_window_ms
// and naive/view (how much faster the view is than the naive formulation).
//
//	go test ./views/ -run '^$' -bench BookingLifetimes -benchtime 10x -v
func BenchmarkBookingLifetimes(b *testing.B) {
	const def = "booking_lifetimes_from_events"
	windowAggSQL, oneListingSQL := windowAggSQL(def), oneListingSQL(def)
	pool := storetest.NewDB(b)
	ctx := b.Context()
	storetest.LoadBenchEvents(b, pool) // 1M events / 100k listings, as the dashboard benchmarks

	from, to := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 7, 0, 0, 0, 0, time.UTC)
	explainPlans(b, pool, def, "booking_events", from, to)

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
	b.ReportMetric(ms(timeQuery(b, pool, 20, oneListingSQL, benchListingKey)), "listing_ms")
	b.ReportMetric(ms(timeQuery(b, pool, 3, wholeViewSQL)), "whole_view_ms")
	b.ReportMetric(ms(naive), "naive_window_ms")
	b.ReportMetric(float64(naive)/float64(window), "naive/view")
}

func mustExec(b *testing.B, pool *pgxpool.Pool, sql string, args ...any) {
	b.Helper()
	if _, err := pool.Exec(b.Context(), sql, args...); err != nil {
		b.Fatalf("%.60s...: %v", sql, err)
	}
}

// benchListingKey is a listing of storetest.LoadBenchEvents, the one the one-listing queries read.
const benchListingKey = "teeup|Course 7||2026-06-10|06:10"

// explainPlans logs the plans of rel's window aggregate (over from..to) and one-listing queries,
// and fails b when the window aggregate reads table, the relation under rel, by a sequential
// scan: the play_date filter must reach table's index.
func explainPlans(b *testing.B, pool *pgxpool.Pool, rel, table string, from, to time.Time) {
	b.Helper()
	plan := explain(b, pool, windowAggSQL(rel), from, to)
	b.Logf("EXPLAIN %s window aggregate:\n%s", rel, plan)
	if strings.Contains(plan, "Seq Scan on "+table) {
		b.Fatalf("the play_date filter does not reach the index of %s", table)
	}
	b.Logf("EXPLAIN %s one listing:\n%s", rel, explain(b, pool, oneListingSQL(rel), benchListingKey))
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
	return median(ds)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
