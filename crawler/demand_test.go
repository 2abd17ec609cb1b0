package crawler

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// demandSets are n page sets of one club, one per date from 2026-03-10.
func demandSets(n int) []PageSet {
	out := make([]PageSet, n)
	for i := range out {
		out[i] = PageSet{PlayDate: fmt.Sprintf("2026-03-%02d", 10+i), Course: "club"}
	}
	return out
}

func testDemand(every, confirm time.Duration, budget float64, interval time.Duration) *siteDemand {
	return &siteDemand{every: every, confirmAfter: confirm, budget: budget, interval: interval,
		fetched: map[PageSet]time.Time{}, watchedSince: map[PageSet]time.Time{}, confirm: map[PageSet]time.Time{}}
}

// TestSiteDemandWatchedEvery: 2 watched page sets of 10 are due every minute, the scheduled crawl
// fetches every page set but the watched ones fetched within their minute, and a scheduled crawl
// that finds every watched page set stale is a full crawl.
func TestSiteDemandWatchedEvery(t *testing.T) {
	t.Parallel()
	sets := demandSets(10)
	watched := make([]bool, len(sets))
	watched[2], watched[5] = true, true
	d := testDemand(time.Minute, 0, 10, 20*time.Minute)
	t0 := kst(9, 10, 0, 0)

	got, full := d.plan(t0, sets, watched, false) // both due at once
	if full || !slices.Equal(got, []PageSet{sets[2], sets[5]}) {
		t.Fatalf("first plan %v (full %v), want the two watched page sets", got, full)
	}
	d.done(t0, got, false, sets, nil, nil)
	if next := d.next(); !next.Equal(t0.Add(time.Minute)) {
		t.Fatalf("next watched crawl %s, want a minute later", next)
	}
	if got, _ := d.plan(t0.Add(30*time.Second), sets, watched, false); len(got) != 0 {
		t.Fatalf("30 s later: %v, want nothing", got)
	}
	got, full = d.plan(t0.Add(40*time.Second), sets, watched, true)
	if full || len(got) != 8 || slices.Contains(got, sets[2]) || slices.Contains(got, sets[5]) {
		t.Fatalf("the scheduled crawl 40 s later fetches %v (full %v), want the 8 unwatched page sets", got, full)
	}
	d.done(t0.Add(40*time.Second), got, false, sets, nil, nil)
	if got, full := d.plan(t0.Add(2*time.Minute), sets, watched, true); !full || got != nil {
		t.Fatalf("a scheduled crawl with both watched page sets due: %v (full %v), want a full crawl", got, full)
	}
	if old := d.oldest(); !old.Equal(t0) {
		t.Errorf("oldest watched fetch %s, want %s", old, t0)
	}
}

// TestSiteDemandBudget: 6 watched page sets every minute on a site of 20 page sets scheduled every
// 20 minutes, watched_budget 1 (one scheduled crawl's fetches: 60 an hour): the watched crawls
// fetch at most the budget, the stalest first, and the next is due once a token is back.
func TestSiteDemandBudget(t *testing.T) {
	t.Parallel()
	sets := demandSets(20)
	watched := make([]bool, len(sets))
	for i := range 6 {
		watched[i*3] = true
	}
	d := testDemand(time.Minute, 0, 1, 20*time.Minute)
	t0 := kst(9, 10, 0, 0)
	now, fetched := t0, 0
	last := map[PageSet]time.Time{}
	for range 120 { // an hour of ticks every 30 s
		got, _ := d.plan(now, sets, watched, false)
		for _, p := range got {
			if at, ok := last[p]; ok {
				for q, qa := range last { // the stalest first: none left older than the one taken
					if watched[slices.Index(sets, q)] && !slices.Contains(got, q) && qa.Before(at) {
						t.Fatalf("%s: fetched %v (last %s) while %v waited since %s", now, p, at, q, qa)
					}
				}
			}
			last[p] = now
		}
		fetched += len(got)
		d.done(now, got, false, sets, nil, nil)
		now = now.Add(30 * time.Second)
	}
	if limit := 60 + 1; fetched > limit { // 20 page sets × 3 an hour, plus the first minute's burst
		t.Fatalf("%d watched fetches in an hour, want at most %d", fetched, limit)
	}
	if fetched < 50 {
		t.Fatalf("%d watched fetches in an hour: the budget is not spent", fetched)
	}
	if next := d.next(); !next.After(now.Add(-30 * time.Second)) {
		t.Errorf("next due %s, at or before the last tick: the loop would spin", next)
	}
}

// TestSiteDemandConfirm: a watched page set that showed an opening is due again confirm_after
// after the crawl that saw it, before its watched interval ends; an unwatched one is not.
func TestSiteDemandConfirm(t *testing.T) {
	t.Parallel()
	sets := demandSets(4)
	watched := []bool{true, false, false, false}
	d := testDemand(time.Minute, 20*time.Second, 10, 20*time.Minute)
	t0 := kst(9, 10, 0, 0)
	got, _ := d.plan(t0, sets, watched, false)
	d.done(t0, got, false, sets, []PageSet{sets[0], sets[1]}, nil)
	if next := d.next(); !next.Equal(t0.Add(20 * time.Second)) {
		t.Fatalf("next %s, want the confirm crawl 20 s later", next)
	}
	if got, _ := d.plan(t0.Add(20*time.Second), sets, watched, false); !slices.Equal(got, []PageSet{sets[0]}) {
		t.Fatalf("confirm plan %v, want the watched page set only", got)
	}
	d.done(t0.Add(20*time.Second), []PageSet{sets[0]}, false, sets, nil, nil)
	if next := d.next(); !next.Equal(t0.Add(80 * time.Second)) {
		t.Fatalf("after the confirm crawl, next %s, want its watched interval's end", next)
	}
}
