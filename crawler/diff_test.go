package crawler

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

const coreTestSource = "sim-golf"

func mkListing(course, playDate, teeTime string, price int64, players int) events.Listing {
	return events.Listing{
		Source: coreTestSource, CourseName: course, CoursePart: "OUT", RoundDate: playDate[5:],
		PlayDate: playDate, TeeTime: teeTime, Values: events.Values{PriceKRW: &price, Players: &players},
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

// The variants of a0700 and the tee times around the table tests' crawl (2026-11-20 09:00).
var (
	a0700Cheaper  = with(a0700, func(l *events.Listing) { l.PriceKRW = pointerTo[int64](130000) })
	a0700Three    = with(a0700, func(l *events.Listing) { l.Players = pointerTo(3) })
	a0700NoPrice  = with(a0700, func(l *events.Listing) { l.PriceKRW = nil })
	a0700Cosmetic = with(a0700, func(l *events.Listing) { l.URL, l.RoundDate = "https://example.test/other", "12.05(토)" })
	pastTee       = mkListing("Alpha", "2026-11-20", "08:59", 150000, 4)
	nowTee        = mkListing("Alpha", "2026-11-20", "09:00", 150000, 4)
	soonTee       = mkListing("Alpha", "2026-11-20", "09:01", 150000, 4)
)

func with(l events.Listing, edit func(*events.Listing)) events.Listing {
	edit(&l)
	return l
}

// diffCase is one Diff of prev (snapshots taken at 08:00) by crawl 1 at 09:00.
type diffCase struct {
	name       string
	prev       Snapshot
	cur        []events.Listing
	complete   bool
	opt        DiffOptions
	want       []evSummary
	wantMisses map[string]int // the entries of next, with their misses
}

// TestDiffOpensAndChanges: listings seen by the crawl open, change or stay, and one whose tee time
// has passed does not open.
func TestDiffOpensAndChanges(t *testing.T) {
	t.Parallel()
	prevAt := seoulTime(t, "2026-11-20 08:00")
	runDiffCases(t, []diffCase{
		{
			name: "Opened", prev: emptySnap(), cur: []events.Listing{a0700}, complete: true,
			want:       []evSummary{{events.ListingOpened, a0700.Key(), ""}},
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "ChangedPrice", prev: snapOf(prevAt, 0, a0700), cur: []events.Listing{a0700Cheaper}, complete: true,
			want:       []evSummary{{events.ListingChanged, a0700.Key(), ""}},
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "ChangedPlayers", prev: snapOf(prevAt, 0, a0700), cur: []events.Listing{a0700Three}, complete: true,
			want:       []evSummary{{events.ListingChanged, a0700.Key(), ""}},
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "PriceBecameUnknown", prev: snapOf(prevAt, 0, a0700), cur: []events.Listing{a0700NoPrice}, complete: true,
			want:       []evSummary{{events.ListingChanged, a0700.Key(), ""}},
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "Unchanged", prev: snapOf(prevAt, 0, a0700), cur: []events.Listing{a0700}, complete: true,
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "CosmeticChangeIsNoEvent", prev: snapOf(prevAt, 0, a0700), cur: []events.Listing{a0700Cosmetic}, complete: true,
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "PastListingNotOpened", prev: emptySnap(), cur: []events.Listing{pastTee, nowTee, soonTee}, complete: true,
			want:       []evSummary{{events.ListingOpened, soonTee.Key(), ""}},
			wantMisses: map[string]int{soonTee.Key(): 0},
		},
		{
			name: "PastListingStillOpenIsSeen", prev: snapOf(prevAt, 1, pastTee), cur: []events.Listing{pastTee}, complete: true,
			wantMisses: map[string]int{pastTee.Key(): 0},
		},
		{
			name: "ReappearedAfterOneMiss", prev: snapOf(prevAt, 1, a0700), cur: []events.Listing{a0700}, complete: true,
			wantMisses: map[string]int{a0700.Key(): 0},
		},
		{
			name: "IncompleteCrawlStillOpensAndChanges", prev: snapOf(prevAt, 1, a0700, b0800),
			cur: []events.Listing{a0700Cheaper, a0730}, complete: false,
			want: []evSummary{
				{events.ListingChanged, a0700.Key(), ""},
				{events.ListingOpened, a0730.Key(), ""},
			},
			wantMisses: map[string]int{a0700.Key(): 0, a0730.Key(): 0, b0800.Key(): 1},
		},
	})
}

// TestDiffMissesAndCloses: listings the crawl did not see are missed, kept or closed as booked or
// expired, and the events of one crawl come out sorted.
func TestDiffMissesAndCloses(t *testing.T) {
	t.Parallel()
	prevAt := seoulTime(t, "2026-11-20 08:00")
	runDiffCases(t, []diffCase{
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
			name: "IncompleteCrawlNeverCloses", prev: snapOf(prevAt, 1, a0700, pastTee), complete: false,
			wantMisses: map[string]int{a0700.Key(): 1, pastTee.Key(): 1},
		},
		{
			name: "PassedTeeTimeExpiresAtFirstMiss", prev: snapOf(prevAt, 0, pastTee), complete: true,
			want:       []evSummary{{events.ListingClosed, pastTee.Key(), events.Expired}},
			wantMisses: map[string]int{},
		},
		{
			name: "TeeTimeAtCrawlTimeExpires", prev: snapOf(prevAt, 0, nowTee), complete: true,
			want:       []evSummary{{events.ListingClosed, nowTee.Key(), events.Expired}},
			wantMisses: map[string]int{},
		},
		{
			name: "TeeTimeJustAheadWaitsForMisses", prev: snapOf(prevAt, 0, soonTee), complete: true,
			wantMisses: map[string]int{soonTee.Key(): 1},
		},
		{
			name: "TeeTimeJustAheadClosesBooked", prev: snapOf(prevAt, 1, soonTee), complete: true,
			want:       []evSummary{{events.ListingClosed, soonTee.Key(), events.Booked}},
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
			cur: []events.Listing{a0730, a0700Cheaper}, complete: true,
			want: []evSummary{
				{events.ListingChanged, a0700.Key(), ""},
				{events.ListingOpened, a0730.Key(), ""},
				{events.ListingClosed, b0800.Key(), events.Booked},
			},
			wantMisses: map[string]int{a0700.Key(): 0, a0730.Key(): 0},
		},
	})
}

// runDiffCases runs each case as crawl 1 at 2026-11-20 09:00 and checks its events, the misses of
// next's open entries, next's header, that prev is untouched, the stats and the events' crawl.
func runDiffCases(t *testing.T, tests []diffCase) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := crawlAt(t, 1, "2026-11-20 09:00", tc.complete)
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
		ratio     float64
		prev, cur int
		want      bool
	}{
		{0, 0, 0, false}, {0, 1, 0, true}, {0, 2, 1, false}, {0, 9, 0, true}, {0, 9, 4, true}, {0, 10, 0, true},
		{0, 10, 4, true}, {0, 10, 5, false}, {0, 11, 5, true}, {0, 11, 6, false}, {0, 100, 49, true},
		{0, 100, 50, false}, {0, 100, 200, false},
		// a site's min_complete_ratio replaces the half
		{0.8, 0, 0, false}, {0.8, 10, 7, true}, {0.8, 10, 8, false}, {0.25, 100, 30, false}, {0.25, 100, 24, true},
	} {
		if got := Collapsed(c.ratio, c.prev, c.cur); got != c.want {
			t.Errorf("Collapsed(%v, %d, %d) = %v, want %v", c.ratio, c.prev, c.cur, got, c.want)
		}
	}
}

// TestDiffPartialCrawl (#51): a crawl that fetched only the page set of 2026-12-05 misses that
// date's missing listing and keeps the other date's open, closing nothing there; it is not the
// collapse guard's reference (LastCompleteSeen stays) and ends the count of incomplete crawls. A
// collapsed partial crawl counts as incomplete and leaves the collapse count where it was.
func TestDiffPartialCrawl(t *testing.T) {
	t.Parallel()
	day5 := func(l events.Listing) bool { return l.PlayDate == "2026-12-05" }
	x := mkListing("Alpha", "2026-12-05", "08:00", 150000, 4)
	other := mkListing("Alpha", "2026-12-06", "07:00", 150000, 4)
	prev := snapOf(seoulTime(t, "2026-12-01 09:00"), 0, a0700, x, other)
	prev.LastCompleteAt, prev.LastCompleteSeen, prev.Incomplete, prev.Collapses = seoulTime(t, "2026-12-01 09:00"), 3, 2, 1
	for i := range 3 {
		c := crawlAt(t, i+1, fmt.Sprintf("2026-12-01 10:0%d", i), true)
		c.Fetched = day5
		out, next, stats := Diff(prev, []events.Listing{a0700}, c, DiffOptions{})
		if i == 1 {
			if got := summarize(t, out); len(got) != 1 || got[0].Key != x.Key() || got[0].Type != events.ListingClosed {
				t.Fatalf("crawl %d: events %v, want the close of %s only", i+1, got, x.Key())
			}
		} else if len(out) != 0 {
			t.Fatalf("crawl %d: events %v, want none", i+1, summarize(t, out))
		}
		if e := next.Listings[other.Key()]; !e.Open() || e.Misses != 0 {
			t.Fatalf("crawl %d: the unfetched date's listing %+v, want open and unmissed", i+1, e)
		}
		if next.LastCompleteSeen != 3 || !next.LastCompleteAt.Equal(prev.LastCompleteAt) || next.Incomplete != 0 || next.Collapses != 1 {
			t.Fatalf("crawl %d: last complete %s/%d, incomplete %d, collapses %d; want the reference kept, 0, 1", i+1,
				next.LastCompleteAt, next.LastCompleteSeen, next.Incomplete, next.Collapses)
		}
		if stats.Kept != 1 {
			t.Errorf("crawl %d: %d kept, want 1 (the unfetched date's)", i+1, stats.Kept)
		}
		prev = next
	}
	c := crawlAt(t, 9, "2026-12-01 11:00", true)
	c.Fetched, c.Collapsed = day5, true
	out, next, _ := Diff(prev, nil, c, DiffOptions{})
	if len(out) != 0 || next.Collapses != prev.Collapses || next.Incomplete != prev.Incomplete+1 {
		t.Fatalf("collapsed partial crawl: events %v, collapses %d, incomplete %d; want none, %d, %d",
			summarize(t, out), next.Collapses, next.Incomplete, prev.Collapses, prev.Incomplete+1)
	}
}
