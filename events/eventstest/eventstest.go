// Package eventstest makes valid booking events for tests and benchmarks, sets of distinct
// openings (Events) and crawl-shaped sequences (CrawlEvents), and reads JSON lines of events
// checked against their schemas (DecodeEvents, ReadEvents). It sits under events, so the shared
// test kit (internal/testkit) stays a leaf that imports no package of the project.
package eventstest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/schema"
)

// Events returns n distinct valid listing_opened events, 40 tee times per course, observed one
// second apart from at; prefix keeps sets from different calls apart (it names the courses and
// the crawl).
func Events(n int, prefix string, at time.Time) []events.Event {
	out := make([]events.Event, n)
	for i := range out {
		price, players := int64(100000+i), 4
		l := events.Listing{
			Source: "test", CourseName: fmt.Sprintf("%s Course %d", prefix, i/40), RoundDate: "2026-05-01",
			PlayDate: "2026-05-01", TeeTime: fmt.Sprintf("%02d:%02d", 5+(i%40)/4, (i%4)*15),
			Values: events.Values{PriceKRW: &price, Players: &players},
		}
		out[i] = events.Opened(l, "crawl-"+prefix, at.Add(time.Duration(i)*time.Second))
	}
	return out
}

// CrawlEvents returns events from..to-1 of an endless sequence shaped like a crawl's: listings
// of ten events each (an open, then price changes, every 10th listing closed). prefix keeps sets
// apart.
func CrawlEvents(from, to int, prefix string) []events.Event {
	t0 := time.Date(2026, 4, 1, 6, 0, 0, 0, time.UTC)
	out := make([]events.Event, 0, to-from)
	for i := from; i < to; i++ {
		li, j := i/10, i%10
		price, players := int64(100000), 4
		l := events.Listing{
			Source: "bench", CourseName: fmt.Sprintf("%s Course %d", prefix, li%50), CoursePart: "East",
			RoundDate: "05/01", PlayDate: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, li/50%90).Format(events.DateLayout),
			TeeTime: fmt.Sprintf("%02d:%02d", 5+li/4500%14, li/50/90%60), Values: events.Values{PriceKRW: &price, Players: &players},
			URL: "http://bench.invalid/tee",
		}
		at := t0.Add(time.Duration(i) * time.Second)
		crawl := fmt.Sprintf("crawl-%s-%d", prefix, j)
		var e events.Event
		switch {
		case j == 0:
			e = events.Opened(l, crawl, at)
		case j == 9 && li%10 == 0:
			e = events.Closed(l, crawl, at, events.Booked)
		default:
			next := l
			p := price + int64(j*1000)
			next.PriceKRW = &p
			e = events.Changed(l, next, crawl, at)
		}
		out = append(out, e)
	}
	return out
}

// DecodeEvents decodes every line of r, JSON lines of events (crawler --events-out, the practice
// set, an export); every line must be a valid event that validates against its JSON Schema
// (events/schema), else t fails naming the line.
func DecodeEvents(t testing.TB, r io.Reader) []events.Event {
	t.Helper()
	var out []events.Event
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		e, err := events.Decode(sc.Bytes())
		if err != nil {
			t.Fatalf("events line %d: %v", len(out)+1, err)
		}
		if err := schema.Validate(sc.Bytes()); err != nil {
			t.Fatalf("events line %d: %v", len(out)+1, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// ReadEvents is DecodeEvents of the file at path.
func ReadEvents(t testing.TB, path string) []events.Event {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return DecodeEvents(t, f)
}
