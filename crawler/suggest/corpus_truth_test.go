package suggest

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
)

// truthEvents are the events a perfect crawl at the instants crawls would write for the shape's
// listings, from the simulator's ground truth: opened at the first crawl that shows a tee time,
// changed at each crawl that shows other values (the price and players only where the shape
// shows them, the price as the shape shows it), closed at the first crawl that misses it, as
// booked once it is missed twice (crawler.DefaultMissesToClose) before its tee time, as expired
// once its tee time has passed.
func truthEvents(t testing.TB, sim *sitesim.Site, sh corpusShape, crawls []time.Time) []string {
	t.Helper()
	courses := map[string]bool{}
	for i, c := range sim.Clubs() {
		if sh.clubs == nil || slices.Contains(sh.clubs, i) {
			courses[c.Name] = true
		}
	}
	var out []string
	for _, tr := range sim.GroundTruth(crawls[0], crawls[len(crawls)-1]) {
		if tr.Malformed || !courses[tr.Course] {
			continue
		}
		tee, err := time.ParseInLocation("2006-01-02 15:04", tr.PlayDate+" "+tr.TeeTime, sitesim.KST)
		if err != nil {
			t.Fatal(err)
		}
		id := tr.Course + "|" + tr.Part + "|" + tr.PlayDate + " " + tr.TeeTime
		open, closed, misses := false, false, 0
		var last string
		var firstMiss time.Time
		for _, at := range crawls {
			if closed {
				break
			}
			if tr.VisibleAt(at) {
				price, players := tr.StateAt(at)
				if sh.noPrice {
					price = nil
				}
				v := values(shownPrice(sh, price), players, sh.players)
				switch {
				case !open:
					out = append(out, eventLine(at, events.ListingOpened, id, v))
				case v != last:
					out = append(out, eventLine(at, events.ListingChanged, id, v))
				}
				open, last, misses = true, v, 0
				continue
			}
			if !open {
				continue
			}
			if misses++; misses == 1 {
				firstMiss = at
			}
			switch {
			case !tee.After(firstMiss):
				out, closed = append(out, eventLine(firstMiss, events.ListingClosed, id, string(events.Expired))), true
			case misses >= crawler.DefaultMissesToClose:
				out, closed = append(out, eventLine(firstMiss, events.ListingClosed, id, string(events.Booked))), true
			}
		}
	}
	return out
}

func values(price *int64, players int, showsPlayers bool) string {
	p, n := "null", "null"
	if price != nil {
		p = fmt.Sprint(*price)
	}
	if showsPlayers {
		n = fmt.Sprint(players)
	}
	return "price " + p + " players " + n
}

func eventLine(at time.Time, typ events.Type, id, what string) string {
	return at.UTC().Format(time.RFC3339) + " " + string(typ) + " " + id + " " + what
}

// crawlLines are the crawl's events in eventLine's form.
func crawlLines(evs []events.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		id := e.CourseName + "|" + e.CoursePart + "|" + e.PlayDate + " " + e.TeeTime
		what := string(e.CloseReason)
		if e.EventType != events.ListingClosed {
			p, n := "null", "null"
			if e.PriceKRW != nil {
				p = fmt.Sprint(*e.PriceKRW)
			}
			if e.Players != nil {
				n = fmt.Sprint(*e.Players)
			}
			what = "price " + p + " players " + n
		}
		out = append(out, eventLine(e.OccurredAt, e.EventType, id, what))
	}
	return out
}

// compareTruth compares the crawl's events with the truth's (the week must hold opens, closes and,
// where the shape shows a price or players, changes, or it tests nothing); the note says how they
// differ.
func compareTruth(t testing.TB, sh corpusShape, got []events.Event, want []string) (note string, same bool) {
	t.Helper()
	kinds := map[string]int{}
	for _, w := range want {
		f := strings.Fields(w)
		kinds[f[1]]++
	}
	a, b := crawlLines(got), slices.Clone(want)
	sort.Strings(a)
	sort.Strings(b)
	t.Logf("ground truth: %d events %v; crawl: %d", len(b), kinds, len(a))
	needs := []events.Type{events.ListingOpened, events.ListingClosed}
	if !sh.noPrice || sh.players {
		needs = append(needs, events.ListingChanged)
	}
	for _, k := range needs {
		if kinds[string(k)] == 0 {
			t.Errorf("the week lacks %s events: %v", k, kinds)
		}
	}
	if slices.Equal(a, b) {
		return "", true
	}
	d1, d2 := onlyIn(b, a), onlyIn(a, b)
	t.Logf("the crawl differs from the ground truth: %d events only in the truth, %d only in the crawl;\nfirst truth only: %v\nfirst crawl only: %v",
		len(d1), len(d2), first(d1), first(d2))
	return fmt.Sprintf("%d of the truth's %d events missing, %d others", len(d1), len(b), len(d2)), false
}

// sameAsTruth fails the test unless the crawl's events are exactly the truth's, with some of
// every kind the shape can show.
func sameAsTruth(t testing.TB, sh corpusShape, got []events.Event, want []string) {
	t.Helper()
	if note, same := compareTruth(t, sh, got, want); !same {
		t.Errorf("the crawl differs from the ground truth: %s", note)
	}
}
