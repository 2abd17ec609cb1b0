package crawler

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

const coreTestSource = "sim-golf"

func mkListing(course, playDate, teeTime string, price int64, players int) events.Listing {
	return events.Listing{
		Source: coreTestSource, CourseName: course, CoursePart: "OUT", RoundDate: playDate[5:],
		PlayDate: playDate, TeeTime: teeTime, PriceKRW: &price, Players: &players,
		URL: "https://example.test/" + course,
	}
}

// crawlAt is crawl number n of coreTestSource at a Seoul wall-clock time.
func crawlAt(t testing.TB, n int, at string, complete bool) Crawl {
	t.Helper()
	return Crawl{ID: fmt.Sprintf("crawl-%d", n), Source: coreTestSource, At: seoulTime(t, at), Complete: complete}
}

func emptySnap() Snapshot {
	return Snapshot{Source: coreTestSource, Listings: map[string]SnapshotEntry{}}
}

func snapOf(at time.Time, misses int, ls ...events.Listing) Snapshot {
	s := Snapshot{Source: coreTestSource, CrawlID: "crawl-0", At: at, Listings: map[string]SnapshotEntry{}}
	for _, l := range ls {
		s.Listings[l.Key()] = SnapshotEntry{Listing: l, Misses: misses, FirstSeen: at}
	}
	return s
}

type evSummary struct {
	Type   events.Type
	Key    string
	Reason events.CloseReason
}

func summarize(t *testing.T, out []events.Event) []evSummary {
	t.Helper()
	var s []evSummary
	for _, e := range out {
		if err := e.Validate(); err != nil {
			t.Fatalf("Diff produced an invalid event %+v: %v", e, err)
		}
		s = append(s, evSummary{e.EventType, e.ListingKey, e.CloseReason})
	}
	return s
}

var (
	a0700 = mkListing("Alpha", "2026-12-05", "07:00", 150000, 4)
	a0730 = mkListing("Alpha", "2026-12-05", "07:30", 150000, 4)
	b0800 = mkListing("Bravo", "2026-12-05", "08:00", 120000, 4)
)

func TestDiff(t *testing.T) {
	t.Parallel()
	const now = "2026-11-20 09:00"
	prevAt := seoulTime(t, "2026-11-20 08:00")
	cheaper := a0700
	cheaper.PriceKRW = pointerTo[int64](130000)
	three := a0700
	three.Players = pointerTo(3)
	unknownPrice := a0700
	unknownPrice.PriceKRW = nil
	cosmetic := a0700
	cosmetic.URL, cosmetic.RoundDate = "https://example.test/other", "12.05(토)"
	past := mkListing("Alpha", "2026-11-20", "08:59", 150000, 4)
	exactlyNow := mkListing("Alpha", "2026-11-20", "09:00", 150000, 4)
	soon := mkListing("Alpha", "2026-11-20", "09:01", 150000, 4)

	tests := []struct {
		name       string
		prev       Snapshot
		cur        []events.Listing
		complete   bool
		opt        DiffOptions
		want       []evSummary
		wantMisses map[string]int // the entries of next, with their misses
	}{
		{
			name: "Opened", prev: emptySnap(), cur: []events.Listing{a0700}, complete: true,
			want:       []evSummary{{events.ListingOpened, a0700.Key(), ""}},
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "ChangedPrice", prev: snapOf(prevAt, 0, a0700), cur: []events.Listing{cheaper}, complete: true,
			want:       []evSummary{{events.ListingChanged, a0700.Key(), ""}},
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "ChangedPlayers", prev: snapOf(prevAt, 0, a0700), cur: []events.Listing{three}, complete: true,
			want:       []evSummary{{events.ListingChanged, a0700.Key(), ""}},
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "PriceBecameUnknown", prev: snapOf(prevAt, 0, a0700), cur: []events.Listing{unknownPrice}, complete: true,
			want:       []evSummary{{events.ListingChanged, a0700.Key(), ""}},
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "Unchanged", prev: snapOf(prevAt, 0, a0700), cur: []events.Listing{a0700}, complete: true,
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "CosmeticChangeIsNoEvent", prev: snapOf(prevAt, 0, a0700), cur: []events.Listing{cosmetic}, complete: true,
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "PastListingNotOpened", prev: emptySnap(), cur: []events.Listing{past, exactlyNow, soon}, complete: true,
			want:       []evSummary{{events.ListingOpened, soon.Key(), ""}},
			wantMisses: map[string]int{soon.Key(): 0},
		},
		{
			name: "PastListingStillOpenIsSeen", prev: snapOf(prevAt, 1, past), cur: []events.Listing{past}, complete: true,
			wantMisses: map[string]int{past.Key(): 0},
		},
		{
			name: "FirstMissKeeps", prev: snapOf(prevAt, 0, a0700), complete: true,
			wantMisses: map[string]int{a0700.Key(): 1},
		},
		{
			name: "SecondMissClosesBooked", prev: snapOf(prevAt, 1, a0700), complete: true,
			want:       []evSummary{{events.ListingClosed, a0700.Key(), events.Booked}},
			wantMisses: map[string]int{},
		},
		{
			name: "IncompleteCrawlNeverCloses", prev: snapOf(prevAt, 1, a0700, past), complete: false,
			wantMisses: map[string]int{a0700.Key(): 1, past.Key(): 1},
		},
		{
			name: "IncompleteCrawlStillOpensAndChanges", prev: snapOf(prevAt, 1, a0700, b0800),
			cur: []events.Listing{cheaper, a0730}, complete: false,
			want: []evSummary{
				{events.ListingChanged, a0700.Key(), ""},
				{events.ListingOpened, a0730.Key(), ""},
			},
			wantMisses: map[string]int{a0700.Key(): 0, a0730.Key(): 0, b0800.Key(): 1},
		},
		{
			name: "ReappearedAfterOneMiss", prev: snapOf(prevAt, 1, a0700), cur: []events.Listing{a0700}, complete: true,
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "PassedTeeTimeExpiresAtFirstMiss", prev: snapOf(prevAt, 0, past), complete: true,
			want:       []evSummary{{events.ListingClosed, past.Key(), events.Expired}},
			wantMisses: map[string]int{},
		},
		{
			name: "TeeTimeAtCrawlTimeExpires", prev: snapOf(prevAt, 0, exactlyNow), complete: true,
			want:       []evSummary{{events.ListingClosed, exactlyNow.Key(), events.Expired}},
			wantMisses: map[string]int{},
		},
		{
			name: "TeeTimeJustAheadWaitsForMisses", prev: snapOf(prevAt, 0, soon), complete: true,
			wantMisses: map[string]int{soon.Key(): 1},
		},
		{
			name: "TeeTimeJustAheadClosesBooked", prev: snapOf(prevAt, 1, soon), complete: true,
			want:       []evSummary{{events.ListingClosed, soon.Key(), events.Booked}},
			wantMisses: map[string]int{},
		},
		{
			name: "MissesToCloseOne", prev: snapOf(prevAt, 0, a0700), complete: true, opt: DiffOptions{MissesToClose: 1},
			want:       []evSummary{{events.ListingClosed, a0700.Key(), events.Booked}},
			wantMisses: map[string]int{},
		},
		{
			name: "MissesToCloseThree", prev: snapOf(prevAt, 1, a0700), complete: true, opt: DiffOptions{MissesToClose: 3},
			wantMisses: map[string]int{a0700.Key(): 2},
		},
		{
			name: "SortedByKeyThenType", prev: snapOf(prevAt, 1, b0800, a0700),
			cur: []events.Listing{a0730, cheaper}, complete: true,
			want: []evSummary{
				{events.ListingChanged, a0700.Key(), ""},
				{events.ListingOpened, a0730.Key(), ""},
				{events.ListingClosed, b0800.Key(), events.Booked},
			},
			wantMisses: map[string]int{a0700.Key(): 0, a0730.Key(): 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := crawlAt(t, 1, now, tc.complete)
			before := deepCopy(t, tc.prev)
			out, next, stats := Diff(tc.prev, tc.cur, c, tc.opt)
			if got := summarize(t, out); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("events\n got %v\nwant %v", got, tc.want)
			}
			got := map[string]int{}
			for k, e := range next.Listings {
				if !e.Open() {
					continue // a tombstone (TestTransitionIDsStayDistinct)
				}
				got[k] = e.Misses
				if k != e.Listing.Key() {
					t.Errorf("next entry %q holds %q", k, e.Listing.Key())
				}
			}
			if !reflect.DeepEqual(got, tc.wantMisses) {
				t.Fatalf("next misses\n got %v\nwant %v", got, tc.wantMisses)
			}
			if next.CrawlID != c.ID || !next.At.Equal(c.At) || next.Source != coreTestSource {
				t.Fatalf("next header = %q %v %q", next.CrawlID, next.At, next.Source)
			}
			if !reflect.DeepEqual(deepCopy(t, tc.prev), before) {
				t.Fatal("Diff modified prev")
			}
			if n := stats.Opened + stats.Changed + stats.Closed; n != len(out) {
				t.Fatalf("stats count %d events, Diff returned %d", n, len(out))
			}
			for _, e := range out {
				if e.CrawlID != c.ID || !e.OccurredAt.Equal(c.At) {
					t.Fatalf("event %s has crawl %q at %v", e.EventID, e.CrawlID, e.OccurredAt)
				}
			}
		})
	}
}

func deepCopy(t *testing.T, s Snapshot) Snapshot {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var c Snapshot
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDiffChangedCarriesPreviousValues(t *testing.T) {
	t.Parallel()
	cheaper := a0700
	cheaper.PriceKRW, cheaper.Players = pointerTo[int64](130000), pointerTo(3)
	out, next, _ := Diff(snapOf(seoulTime(t, "2026-11-20 08:00"), 0, a0700), []events.Listing{cheaper},
		crawlAt(t, 1, "2026-11-20 09:00", true), DiffOptions{})
	if len(out) != 1 || out[0].Previous == nil {
		t.Fatalf("want one changed event with previous values, got %+v", out)
	}
	e := out[0]
	if *e.Previous.PriceKRW != 150000 || *e.Previous.Players != 4 || *e.PriceKRW != 130000 || *e.Players != 3 {
		t.Fatalf("changed %d/%d -> %d/%d, want 150000/4 -> 130000/3",
			*e.Previous.PriceKRW, *e.Previous.Players, *e.PriceKRW, *e.Players)
	}
	if got := next.Listings[a0700.Key()]; *got.Listing.PriceKRW != 130000 || !got.FirstSeen.Equal(seoulTime(t, "2026-11-20 08:00")) {
		t.Fatalf("next entry %+v: want the new price and the original first_seen", got)
	}
}

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

func TestDiffDuplicatesAndInvalid(t *testing.T) {
	t.Parallel()
	dearer := a0700
	dearer.PriceKRW = pointerTo[int64](999000)
	noCourse := b0800
	noCourse.CourseName = ""
	badDate := b0800
	badDate.PlayDate = "2026-13-01"
	otherSource := a0730
	otherSource.Source = "elsewhere"
	badPriceSameKey := b0800
	badPriceSameKey.PriceKRW = pointerTo[int64](-1)

	prev := snapOf(seoulTime(t, "2026-11-20 08:00"), 1, b0800)
	cur := []events.Listing{a0700, dearer, a0700, noCourse, badDate, otherSource, badPriceSameKey}
	out, next, stats := Diff(prev, cur, crawlAt(t, 1, "2026-11-20 09:00", true), DiffOptions{})

	want := []evSummary{{events.ListingOpened, a0700.Key(), ""}}
	if got := summarize(t, out); !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
	if *out[0].PriceKRW != 150000 {
		t.Fatalf("the first listing of a key must win, got price %d", *out[0].PriceKRW)
	}
	if stats.Duplicates != 2 || !reflect.DeepEqual(stats.DuplicateKeys, []string{a0700.Key()}) {
		t.Fatalf("duplicates %d %v, want 2 of %q", stats.Duplicates, stats.DuplicateKeys, a0700.Key())
	}
	if len(stats.Invalid) != 4 {
		t.Fatalf("invalid %d, want 4: %+v", len(stats.Invalid), stats.Invalid)
	}
	// b0800 was open and showed up misparsed (negative price): kept, not missed, not changed.
	e, ok := next.Listings[b0800.Key()]
	if !ok || e.Misses != 0 || *e.Listing.PriceKRW != 120000 {
		t.Fatalf("misparsed open listing: next entry %+v, %v; want it kept with misses 0", e, ok)
	}
}

func TestDiffTeeTimeInSeoul(t *testing.T) {
	t.Parallel()
	// Tee time 2026-12-05 09:00 in Seoul is 00:00 UTC. At 00:30 UTC it has passed (expired); read
	// in UTC it would still be ahead (booked after two misses, none yet).
	l := mkListing("Alpha", "2026-12-05", "09:00", 150000, 4)
	at := time.Date(2026, 12, 5, 0, 30, 0, 0, time.UTC)
	c := Crawl{ID: "c", Source: coreTestSource, At: at, Complete: true}
	out, _, _ := Diff(snapOf(at.Add(-time.Hour), 0, l), nil, c, DiffOptions{})
	if got := summarize(t, out); len(got) != 1 || got[0].Reason != events.Expired {
		t.Fatalf("default location: got %v, want one expired close", got)
	}
	out, _, _ = Diff(snapOf(at.Add(-time.Hour), 0, l), nil, c, DiffOptions{Location: time.UTC})
	if len(out) != 0 {
		t.Fatalf("UTC location: got %v, want no close yet", summarize(t, out))
	}
}

func TestCollapsed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		prev, cur int
		want      bool
	}{
		{0, 0, false}, {1, 0, true}, {2, 1, false}, {9, 0, true}, {9, 4, true}, {10, 0, true}, {10, 4, true}, {10, 5, false},
		{11, 5, true}, {11, 6, false}, {100, 49, true}, {100, 50, false}, {100, 200, false},
	} {
		if got := Collapsed(c.prev, c.cur); got != c.want {
			t.Errorf("Collapsed(%d, %d) = %v, want %v", c.prev, c.cur, got, c.want)
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
					if pt, _ := e.PlayTime(Seoul()); !pt.After(c.At) {
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
