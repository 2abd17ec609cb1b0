package views_test

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// extraBatch is batch k of the events ingested beside the rebuild: 100 new listings ("Extra"
// courses, so never one of load's), 10 events each, back to back.
func extraBatch(b *testing.B, k int) []store.Message {
	var out []store.Message
	for i := k * 100; i < (k+1)*100; i++ {
		price := int64(100000)
		l := events.Listing{Source: "teeup", CourseName: fmt.Sprintf("Extra %d", i%50),
			PlayDate: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i/50%90).Format(events.DateLayout),
			TeeTime:  time.Date(0, 1, 1, 5, 0, 0, 0, time.UTC).Add(time.Duration(i/4500*7) * time.Minute).Format("15:04"),
			Values:   events.Values{PriceKRW: &price, Players: ptr(4)}}
		l.RoundDate = l.PlayDate
		at := t0.Add(time.Duration(i) * time.Second)
		for j := range 10 {
			var e events.Event
			next := l
			next.PriceKRW = ptr(price + int64(j*1000))
			switch j {
			case 0:
				e = events.Opened(l, "x0", at)
			case 9:
				e = events.Closed(l, "x9", at, events.Booked)
			default:
				e = events.Changed(l, next, fmt.Sprint("x", j), at)
				l = next
			}
			at = at.Add(10 * time.Minute)
			v, err := events.Encode(e)
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, store.Message{Topic: "extra", Offset: int64(len(out)), Value: v, Event: &e})
		}
	}
	return out
}

// rebuildResult is what rebuildBesideIngest measured: the rebuild's stats, the batches ingested
// while it ran and how long they took, and the time of as many batches ingested after it, alone.
type rebuildResult struct {
	st            store.RebuildStats
	batches       int
	during, alone time.Duration
}

// rebuildBesideIngest runs RebuildProjection while store.Ingest keeps storing extraBatch batches,
// one at a time, until the rebuild is done; then ingests as many batches again, alone.
func rebuildBesideIngest(b *testing.B, s *store.Store) rebuildResult {
	ctx := b.Context()
	var stop atomic.Bool
	type result struct {
		batches int
		took    time.Duration
		err     error
	}
	during := make(chan result)
	go func() {
		start := time.Now()
		k := 0
		for ; !stop.Load(); k++ {
			if _, err := s.Ingest(ctx, extraBatch(b, k)); err != nil {
				during <- result{err: err}
				return
			}
		}
		during <- result{batches: k, took: time.Since(start)}
	}()
	st, err := s.RebuildProjection(ctx)
	stop.Store(true)
	d := <-during
	if err != nil || d.err != nil || d.batches == 0 {
		b.Fatalf("rebuild: %v; ingest beside it: %v (%d batches)", err, d.err, d.batches)
	}
	b.Logf("rebuild: %d listings in %v (build %v, swap %v, %d caught up); %d batches ingested meanwhile",
		st.Listings, st.Total, st.Build, st.Swap, st.CaughtUp, d.batches)
	start := time.Now()
	for k := d.batches; k < 2*d.batches; k++ {
		if _, err := s.Ingest(ctx, extraBatch(b, k)); err != nil {
			b.Fatal(err)
		}
	}
	return rebuildResult{st: st, batches: d.batches, during: d.took, alone: time.Since(start)}
}

// BenchmarkLifetimesProjection loads benchEventsSQL's 1M events / 100k listings (play dates over
// 90 days) straight into booking_events, rebuilds the projection from them while store.Ingest
// keeps ingesting new listings (batches of 1000), then reports side by side:
//
//	rebuild_s                      --rebuild of the 1M events (build, catch-up, swap)
//	ingest_during_rebuild_events/s Ingest throughput while the rebuild ran
//	ingest_alone_events/s          the same Ingest after it, for as many batches
//	fast_window_ms                 14-day play_date aggregate on booking_lifetimes, the served view (target <= 50)
//	view_window_ms                 the same over the definition booking_lifetimes_from_events; view/fast (target >= 10)
//	fast_listing_ms                one listing from booking_lifetimes (target <= 1)
//	summary_ms                     store.LifetimeSummary over everything: lifetimes --summary (target <= 250)
//	summary_before_ms              the summary it replaced (counts by status, booked-only medians: two scans);
//	                               summary/before (target <= 1.5)
//	verify_ms                      store.VerifyProjection over everything (it must find nothing)
//
//	go test ./views/ -run '^$' -bench LifetimesProjection -benchtime 1x -v
func BenchmarkLifetimesProjection(b *testing.B) {
	pool := storetest.NewDB(b)
	ctx := b.Context()
	storetest.LoadBenchEvents(b, pool)
	s := store.New(pool)

	r := rebuildBesideIngest(b, s)
	mustExec(b, pool, "analyze listing_lifetimes")

	start := time.Now()
	diffs, err := s.VerifyProjection(ctx)
	verify := time.Since(start)
	if err != nil || len(diffs) > 0 {
		b.Fatalf("verify after the rebuild: %v, %d differences: %v", err, len(diffs), diffs[:min(3, len(diffs))])
	}

	// The window aggregate of BenchmarkBookingLifetimes over 14 days, on the served
	// booking_lifetimes and on the definition, and one listing from booking_lifetimes.
	fastWindowAggSQL, fastOneListingSQL := windowAggSQL("booking_lifetimes"), oneListingSQL("booking_lifetimes")
	from, to := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 6, 14, 0, 0, 0, 0, time.UTC)
	explainPlans(b, pool, "booking_lifetimes", "listing_lifetimes", from, to)

	for b.Loop() {
		timeQuery(b, pool, 1, fastWindowAggSQL, from, to)
	}
	fast := timeQuery(b, pool, 5, fastWindowAggSQL, from, to)
	view := timeQuery(b, pool, 3, windowAggSQL("booking_lifetimes_from_events"), from, to)
	// The summary, interleaved with the booked-only one it replaced, three times each.
	var sums, befores []time.Duration
	for range 3 {
		start := time.Now()
		if _, err := s.LifetimeSummary(ctx, store.LifetimeFilter{}); err != nil {
			b.Fatal(err)
		}
		sums = append(sums, time.Since(start))
		start = time.Now()
		for _, q := range summaryBeforeSQL {
			mustExec(b, pool, q, nil, nil, "", "", "")
		}
		befores = append(befores, time.Since(start))
	}
	rate := func(batches int, d time.Duration) float64 { return float64(batches*1000) / d.Seconds() }

	b.ReportMetric(r.st.Total.Seconds(), "rebuild_s")
	b.ReportMetric(float64(r.batches*1000), "ingested_during_rebuild")
	b.ReportMetric(rate(r.batches, r.during), "ingest_during_rebuild_events/s")
	b.ReportMetric(rate(r.batches, r.alone), "ingest_alone_events/s")
	b.ReportMetric(ms(fast), "fast_window_ms")
	b.ReportMetric(ms(view), "view_window_ms")
	b.ReportMetric(float64(view)/float64(fast), "view/fast")
	b.ReportMetric(ms(timeQuery(b, pool, 20, fastOneListingSQL, benchListingKey)), "fast_listing_ms")
	b.ReportMetric(ms(median(sums)), "summary_ms")
	b.ReportMetric(ms(median(befores)), "summary_before_ms")
	b.ReportMetric(float64(median(sums))/float64(median(befores)), "summary/before")
	b.ReportMetric(ms(verify), "verify_ms")
}

// summaryBeforeSQL is the lifetimes --summary that the cumulative incidence replaced: counts by
// status and the median lifetime of the booked listings by course and weekday, two whole-table
// scans. Kept here as the benchmark's baseline.
var summaryBeforeSQL = []string{
	`select status, count(*)::int
	 from booking_lifetimes
	 where play_date between coalesce($1::date, '-infinity'::date) and coalesce($2::date, 'infinity'::date)
	   and ($3::text = '' or source = $3) and ($4::text = '' or course_name = $4) and ($5::text = '' or status = $5)
	 group by status order by status`,
	`select course_name, extract(dow from play_date)::int as weekday, count(*)::int,
	        (extract(epoch from percentile_cont(0.5) within group (order by lifetime)) * 1000000)::bigint
	 from booking_lifetimes
	 where status = 'booked'
	   and play_date between coalesce($1::date, '-infinity'::date) and coalesce($2::date, 'infinity'::date)
	   and ($3::text = '' or source = $3) and ($4::text = '' or course_name = $4) and ($5::text = '' or true)
	 group by course_name, weekday order by course_name, weekday`,
}

func median(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}
