package crawler

import (
	"fmt"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// burstCrawls are the crawl times of a site with a 30 s burst of 10 minutes at Monday 09:00 on
// the */10 schedule, from 08:45 to 09:45.
func burstCrawls(t *testing.T) []time.Time {
	t.Helper()
	st := timesOf(t, burstKeys, "*/10 * * * *")
	var out []time.Time
	for at := st.Next(kst(9, 8, 45, 0)); !at.After(kst(9, 9, 45, 0)); at = st.Next(at) {
		out = append(out, at)
	}
	return out
}

// closesAt walks a0700 through Diff at the crawl times, absent at the crawls absent says, and
// returns the time of the crawl that closed it (zero: none).
func closesAt(times []time.Time, absent func(int) bool, opt DiffOptions) time.Time {
	snap := emptySnap()
	for i, at := range times {
		var cur []events.Listing
		if !absent(i) {
			cur = []events.Listing{a0700}
		}
		out, next, _ := Diff(snap, cur, Crawl{ID: fmt.Sprintf("crawl-%d", i), Source: coreTestSource, At: at, Complete: true}, opt)
		for _, e := range out {
			if e.EventType == events.ListingClosed {
				return at
			}
		}
		snap = next
	}
	return time.Time{}
}

// TestBurstNeverClosesFasterThanTheSchedule: with misses counted at most once per 10 minutes (the
// global schedule's interval), a listing missing from burst crawls spanning less than 10 minutes
// never closes, and one gone for good closes at the first crawl at least 10 minutes after its
// first miss, as two crawls of the global schedule would need. Without the bound, 30 s apart, a
// 30 s disappearance closes it (what the bound is for).
func TestBurstNeverClosesFasterThanTheSchedule(t *testing.T) {
	t.Parallel()
	times := burstCrawls(t)
	bounded := DiffOptions{MissesMinInterval: 10 * time.Minute}
	for first := 1; first < len(times); first++ {
		for last := first; last < len(times)-1 && times[last].Sub(times[first]) < 10*time.Minute; last++ {
			if at := closesAt(times, func(i int) bool { return i >= first && i <= last }, bounded); !at.IsZero() {
				t.Fatalf("missing from %s to %s (%s), it closed at %s", times[first].Format(time.TimeOnly),
					times[last].Format(time.TimeOnly), times[last].Sub(times[first]), at.Format(time.TimeOnly))
			}
		}
		at := closesAt(times, func(i int) bool { return i >= first }, bounded)
		if at.IsZero() && times[len(times)-1].Sub(times[first]) >= 10*time.Minute {
			t.Fatalf("gone for good from %s, it never closed", times[first].Format(time.TimeOnly))
		}
		if !at.IsZero() && at.Sub(times[first]) < 10*time.Minute {
			t.Fatalf("gone from %s, it closed %s later", times[first].Format(time.TimeOnly), at.Sub(times[first]))
		}
	}
	// Without the bound two burst crawls 30 s apart close it.
	burst := 0
	for i, at := range times {
		if at.Equal(kst(9, 9, 3, 0)) {
			burst = i
		}
	}
	if at := closesAt(times, func(i int) bool { return i == burst || i == burst+1 }, DiffOptions{}); !at.Equal(kst(9, 9, 3, 30)) {
		t.Fatalf("unbounded: closed at %s, want 09:03:30 (the test's premise)", at)
	}
}
