package notify

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// TestIndexMatchesLikeTheScan: over random watches (sources, date ranges, open ranges,
// next_days, weekdays, tee-time windows, courses, price caps, minimum players, muted) and random
// opened and changed events (some without a price or players), MatchAll through the index returns
// exactly the watches the scan of every watch returns, in config order.
func TestIndexMatchesLikeTheScan(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteString("channels:\n  hook: {type: webhook, url: http://127.0.0.1:1/}\nwatches:\n")
	writeRandomWatches(&b, r, 300)
	// Dates over ten years apart in one bucket: the any-source bucket is a map, not a slice.
	b.WriteString("  - name: far\n    channels: [hook]\n    play_dates: {from: 2040-01-01, to: 2040-01-05}\n")
	cfg, err := Parse([]byte(b.String()), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.index == nil {
		t.Fatal("Parse built no index")
	}
	if cfg.index.anySrc.building == nil || cfg.index.bySrc["src-1"].byDay == nil {
		t.Fatal("the index does not have both kinds of date buckets")
	}
	scan := &Config{Channels: cfg.Channels, Watches: cfg.Watches}
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	matched := 0
	for i := range 5000 {
		l, e := randomIndexEvent(r, i, now)
		got, want := cfg.MatchAll(&e, now), scan.MatchAll(&e, now)
		if !slices.Equal(got, want) {
			t.Fatalf("event %+v: index gives %d watches, the scan %d", l, len(got), len(want))
		}
		matched += len(want)
	}
	if matched == 0 {
		t.Fatal("no event matched any watch: the test means nothing")
	}
}

// writeRandomWatches writes n random watches named w0.. on the channel hook: sources, date ranges
// (closed, open, next_days, longer than the index enumerates), weekdays, courses, tee-time
// windows, price caps, minimum players, some muted.
func writeRandomWatches(b *strings.Builder, r *rand.Rand, n int) {
	days := []string{"sat", "sun", "mon", "wed", "fri"}
	for i := range n {
		fmt.Fprintf(b, "  - name: w%d\n    channels: [hook]\n", i)
		if r.IntN(2) == 0 {
			fmt.Fprintf(b, "    sources: [src-%d, src-%d]\n", r.IntN(5), r.IntN(5))
		}
		switch r.IntN(5) {
		case 0:
			from := 1 + r.IntN(20)
			fmt.Fprintf(b, "    play_dates: {from: 2026-12-%02d, to: 2026-12-%02d}\n", from, from+r.IntN(10))
		case 1:
			fmt.Fprintf(b, "    play_dates: {from: 2026-12-%02d}\n", 1+r.IntN(28))
		case 2:
			fmt.Fprintf(b, "    next_days: %d\n", 1+r.IntN(14))
		case 3:
			b.WriteString("    play_dates: {from: 2026-01-01, to: 2027-12-31}\n") // longer than the index enumerates
		}
		if r.IntN(2) == 0 {
			fmt.Fprintf(b, "    weekdays: [%s, %s]\n", days[r.IntN(5)], days[r.IntN(5)])
		}
		if r.IntN(3) == 0 {
			fmt.Fprintf(b, "    courses: [course-%d]\n", r.IntN(4))
		}
		switch h := 5 + r.IntN(12); r.IntN(4) {
		case 0:
			fmt.Fprintf(b, "    tee_time: {from: \"%02d:30\", to: \"%02d:00\"}\n", h, h+2)
		case 1:
			fmt.Fprintf(b, "    tee_time: {from: \"%02d:00\"}\n", h)
		case 2:
			fmt.Fprintf(b, "    tee_time: {to: \"%02d:10\"}\n", h)
		}
		if r.IntN(2) == 0 {
			fmt.Fprintf(b, "    max_price_krw: %d\n", 90000+5000*r.IntN(8))
		}
		if r.IntN(3) == 0 {
			fmt.Fprintf(b, "    min_players: %d\n", 1+r.IntN(4))
		}
		if r.IntN(10) == 0 {
			b.WriteString("    enabled: false\n")
		}
	}
}

// randomIndexEvent is the i-th random listing and event of TestIndexMatchesLikeTheScan: an
// opening (some without a price, players, play date or tee time), every third one a change from a
// price and players inside or outside the watches.
func randomIndexEvent(r *rand.Rand, i int, now time.Time) (events.Listing, events.Event) {
	price, players := int64(80000+5000*r.IntN(10)), 1+r.IntN(4)
	pp, pl := &price, &players
	if i%30 == 0 {
		pp = nil // no price
	}
	if i%35 == 0 {
		pl = nil // no players
	}
	date := fmt.Sprintf("2026-12-%02d", 1+r.IntN(31))
	if i%50 == 0 {
		date = "" // no play date
	}
	tee := fmt.Sprintf("%02d:%02d", 4+r.IntN(16), 10*r.IntN(6))
	if i%40 == 0 {
		tee = ""
	}
	l := events.Listing{Source: fmt.Sprintf("src-%d", r.IntN(6)), CourseName: fmt.Sprintf("Course-%d", r.IntN(5)),
		RoundDate: "2026-12-01", PlayDate: date, TeeTime: tee, Values: events.Values{PriceKRW: pp, Players: pl}}
	e := events.Opened(l, "c", now)
	if i%3 == 0 { // changed, from a price and players inside or outside the watches
		oldPrice, oldPlayers := price+int64(5000*(r.IntN(5)-2)), 1+r.IntN(4)
		e.EventType, e.Previous = events.ListingChanged, &events.Previous{PriceKRW: &oldPrice, Players: &oldPlayers}
	}
	return l, e
}
