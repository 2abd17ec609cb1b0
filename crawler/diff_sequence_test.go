package crawler

// Diff over many crawls: one listing's life, determinism, and the invariants of random histories.

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
)

// TestDiffSequence walks one listing through open, miss, return, two misses (close) and re-listing.
func TestDiffSequence(t *testing.T) {
	t.Parallel()
	snap := emptySnap()
	var all []events.Event
	step := func(n int, cur []events.Listing, complete bool, want ...evSummary) {
		t.Helper()
		c := crawlAt(t, n, fmt.Sprintf("2026-11-20 %02d:00", n), complete)
		out, next, _ := Diff(snap, cur, c, DiffOptions{})
		if got := summarize(t, out); !reflect.DeepEqual(got, want) {
			t.Fatalf("crawl %d: events\n got %v\nwant %v", n, got, want)
		}
		all = append(all, out...)
		snap = next
	}
	k := a0700.Key()
	step(1, []events.Listing{a0700}, true, evSummary{events.ListingOpened, k, ""})
	step(2, nil, true)                                                    // first miss
	step(3, []events.Listing{a0700}, true)                                // back: no events, misses reset
	step(4, nil, true)                                                    // miss 1 again
	step(5, nil, false)                                                   // incomplete: no miss counted
	step(6, nil, true, evSummary{events.ListingClosed, k, events.Booked}) // miss 2
	step(7, nil, true)                                                    // gone stays gone
	step(8, []events.Listing{a0700}, true, evSummary{events.ListingOpened, k, ""})

	if all[0].EventID == all[2].EventID {
		t.Fatalf("re-opened listing reused the first opened event id %s", all[0].EventID)
	}
	ids := map[string]bool{}
	for _, e := range all {
		if ids[e.EventID.String()] {
			t.Fatalf("duplicate event id %s", e.EventID)
		}
		ids[e.EventID.String()] = true
	}
}

func TestDiffDeterministic(t *testing.T) {
	t.Parallel()
	prev := snapOf(seoulTime(t, "2026-11-20 08:00"), 1, a0700, b0800)
	cheaper := a0700
	cheaper.PriceKRW = pointerTo[int64](99000)
	cur := []events.Listing{a0730, cheaper, mkListing("Charlie", "2026-12-06", "06:10", 90000, 3)}
	c := crawlAt(t, 9, "2026-11-20 09:00", true)

	out1, next1, stats1 := Diff(prev, cur, c, DiffOptions{})
	slices.Reverse(cur) // input order must not matter either
	out2, next2, stats2 := Diff(prev, cur, c, DiffOptions{})
	if len(out1) != 4 {
		t.Fatalf("want 4 events, got %d", len(out1))
	}
	if !reflect.DeepEqual(out1, out2) || !reflect.DeepEqual(next1, next2) || !reflect.DeepEqual(stats1, stats2) {
		t.Fatalf("two identical runs differ:\n%+v\n%+v", out1, out2)
	}
	for i, e := range out1 {
		entry := next1.Listings[e.ListingKey]
		seq := events.Seq{Epoch: prev.CrawlID, Lifetime: 1}
		if e.EventType == events.ListingChanged {
			seq.Change = entry.Changes
		}
		want := events.TransitionID(e.ListingKey, e.EventType, seq, e.PriceKRW, e.Players)
		if e.EventID != want {
			t.Fatalf("event %d id %s, want the events package's %s", i, e.EventID, want)
		}
	}
}

// TestDiffLifecycle drives Diff with pseudo-random crawls (fixed seeds) of a small site whose
// listings appear, change, vanish and come back, some crawls incomplete, and checks the invariants
// every event stream must keep: events validate, ids never repeat, each listing's events follow
// opened (changed)* closed, nothing closes in an incomplete crawl, and the snapshot holds exactly
// the listings that are open.
func TestDiffLifecycle(t *testing.T) {
	t.Parallel()
	counts := map[string]int{}
	for seed := uint64(1); seed <= 20; seed++ {
		r := rand.New(rand.NewPCG(seed, 42))
		var pool []events.Listing
		for i := range 12 {
			pool = append(pool, mkListing(fmt.Sprintf("C%d", i%3), "2026-11-2"+fmt.Sprint(1+i%4), fmt.Sprintf("%02d:00", 6+i), 100000, 4))
		}
		snap := emptySnap()
		open := map[string]bool{}
		ids := map[string]bool{}
		start := seoulTime(t, "2026-11-20 06:00")
		for n := 1; n <= 60; n++ {
			c := Crawl{ID: fmt.Sprintf("s%d-c%d", seed, n), Source: coreTestSource, At: start.Add(time.Duration(n) * 2 * time.Hour), Complete: r.IntN(4) != 0}
			var cur []events.Listing
			for i := range pool {
				if r.IntN(10) == 0 {
					pool[i].PriceKRW = pointerTo(int64(90000 + 10000*r.IntN(4)))
				}
				if r.IntN(3) != 0 {
					cur = append(cur, pool[i])
				}
			}
			out, next, _ := Diff(snap, cur, c, DiffOptions{})
			for i, e := range out {
				if err := e.Validate(); err != nil {
					t.Fatalf("seed %d crawl %d: invalid event: %v", seed, n, err)
				}
				if ids[e.EventID.String()] {
					t.Fatalf("seed %d crawl %d: event id %s repeated", seed, n, e.EventID)
				}
				ids[e.EventID.String()] = true
				counts[string(e.EventType)+string(e.CloseReason)]++
				if i > 0 && out[i-1].ListingKey >= e.ListingKey {
					t.Fatalf("seed %d crawl %d: events not sorted by key or two for one key", seed, n)
				}
				switch e.EventType {
				case events.ListingOpened:
					if open[e.ListingKey] {
						t.Fatalf("seed %d crawl %d: %s opened twice", seed, n, e.ListingKey)
					}
					open[e.ListingKey] = true
					if pt, _ := e.PlayTime(site.Seoul()); !pt.After(c.At) {
						t.Fatalf("seed %d crawl %d: %s opened after its tee time", seed, n, e.ListingKey)
					}
				case events.ListingChanged:
					if !open[e.ListingKey] {
						t.Fatalf("seed %d crawl %d: %s changed while closed", seed, n, e.ListingKey)
					}
				case events.ListingClosed:
					if !c.Complete {
						t.Fatalf("seed %d crawl %d: close in an incomplete crawl", seed, n)
					}
					if !open[e.ListingKey] {
						t.Fatalf("seed %d crawl %d: %s closed while closed", seed, n, e.ListingKey)
					}
					delete(open, e.ListingKey)
				}
			}
			if next.OpenCount() != len(open) {
				t.Fatalf("seed %d crawl %d: snapshot holds %d open listings, %d are open", seed, n, next.OpenCount(), len(open))
			}
			for k := range open {
				if e, ok := next.Listings[k]; !ok || !e.Open() {
					t.Fatalf("seed %d crawl %d: open listing %s missing from the snapshot", seed, n, k)
				}
			}
			snap = next
		}
	}
	t.Logf("events: %v", counts)
	for _, k := range []string{"listing_opened", "listing_changed", "listing_closedbooked", "listing_closedexpired"} {
		if counts[k] == 0 {
			t.Errorf("the run produced no %s event: the test no longer exercises it", k)
		}
	}
}
