package crawler

// The collapse guard through the runner: a crawl with far fewer listings than the last complete
// one closes nothing until the collapse repeats with the same listings.

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
)

// collapseRun crawls a pageSite whose listing count follows counts, ten minutes apart, and returns
// the summaries, the runner and the events.
func collapseRun(t *testing.T, name string, counts []int, opt DiffOptions) ([]SiteSummary, *Runner, []events.Event) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	st := pageSite(t, name, func() []pageRow { mu.Lock(); defer mu.Unlock(); return nRows(n, 150000) })
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, site.Seoul())
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: t.TempDir()}, Diff: opt,
		Metrics: newTestMetrics(nil), Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }}
	written := eventsOut(t, r)
	var sums []SiteSummary
	for _, c := range counts {
		mu.Lock()
		n = c
		mu.Unlock()
		sum, _ := r.Run(context.Background())
		sums = append(sums, sum.Sites[0])
		now = now.Add(10 * time.Minute)
	}
	return sums, r, written()
}

func closes(evs []events.Event) int {
	n := 0
	for _, e := range evs {
		if e.EventType == events.ListingClosed {
			n++
		}
	}
	return n
}

// TestCollapseGuardDoesNotRatchet : the guard compared a
// crawl with the snapshot's size, which keeps missed listings, so a gradual sell-out 100 → 60 → 45
// made every later crawl "collapsed" and nothing ever closed again. It now compares with the last
// complete crawl's count.
func TestCollapseGuardDoesNotRatchet(t *testing.T) {
	t.Parallel()
	sums, _, evs := collapseRun(t, "ratchet", []int{100, 60, 45, 45, 45, 45, 45, 45}, DiffOptions{})
	for i, s := range sums {
		if !s.Complete {
			t.Errorf("crawl %d (%d listings): incomplete (%s)", i+1, s.Listings, s.Incomplete)
		}
	}
	if got := closes(evs); got != 55 {
		t.Errorf("55 listings disappeared for 6+ crawls, %d closed", got)
	}
}

// TestCollapseBelievedAfterRepeats pins the collapse rule, and the rule that
// replaces the 10-listing threshold: a small site serving an empty page twice closes nothing (it
// closed all 9 listings as booked); a collapse that repeats with the same listings for
// CollapseCrawls crawls (default 3) is believed, and the listings it misses close, stamped at the
// first crawl that missed them.
func TestCollapseBelievedAfterRepeats(t *testing.T) {
	t.Parallel()
	sums, r, evs := collapseRun(t, "small", []int{9, 0, 0, 9, 0, 0}, DiffOptions{})
	if got := closes(evs); got != 0 {
		t.Fatalf("two empty pages in a row (twice) closed %d of 9 listings", got)
	}
	for i, s := range sums[1:] {
		if s.Complete != (i == 2) {
			t.Errorf("crawl %d: complete %v (%s)", i+2, s.Complete, s.Incomplete)
		}
	}
	// A real sell-out to zero: the third empty page in a row is believed.
	sums, _, evs = collapseRun(t, "soldout", []int{9, 0, 0, 0}, DiffOptions{})
	if got := closes(evs); got != 9 || !sums[3].Complete {
		t.Fatalf("sold out for 3 crawls: %d closed, last crawl complete %v", got, sums[3].Complete)
	}
	firstMiss := time.Date(2026, 11, 29, 10, 10, 0, 0, site.Seoul())
	for _, e := range evs {
		if e.EventType == events.ListingClosed && (!e.OccurredAt.Equal(firstMiss) || e.CloseReason != events.Booked) {
			t.Errorf("%s closed %s at %s, want booked at the first empty page %s", e.ListingKey, e.CloseReason, e.OccurredAt, firstMiss)
		}
	}
	// 100 → 40 with the same 40 left: believed at the third such crawl.
	_, _, evs = collapseRun(t, "drop", []int{100, 40, 40, 40}, DiffOptions{})
	if got := closes(evs); got != 60 {
		t.Errorf("100 → 40 for 3 crawls: %d closed, want 60", got)
	}
	// Configurable: with CollapseCrawls 5, three are not enough.
	_, _, evs = collapseRun(t, "five", []int{9, 0, 0, 0, 0}, DiffOptions{CollapseCrawls: 5})
	if got := closes(evs); got != 0 {
		t.Errorf("CollapseCrawls 5: 4 empty pages closed %d", got)
	}
	_ = r
}

// TestCollapseNeedsTheSameListings: a collapse whose listings change from one crawl to the next
// (a page that shows a different handful each time) starts over, and is not believed.
func TestCollapseNeedsTheSameListings(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	rows := nRows(40, 1)
	show := rows
	st := pageSite(t, "flaky", func() []pageRow { mu.Lock(); defer mu.Unlock(); return show })
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, site.Seoul())
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: t.TempDir()},
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }}
	written := eventsOut(t, r)
	for i := range 6 {
		if i > 0 {
			mu.Lock()
			show = rows[(i%2)*5 : (i%2)*5+5] // rows 0-4, then 5-9, then 0-4 ...
			mu.Unlock()
		}
		sum, _ := r.Run(context.Background())
		if i > 0 && sum.Sites[0].Complete {
			t.Errorf("crawl %d: a collapse with other listings than the last one was believed", i+1)
		}
		now = now.Add(10 * time.Minute)
	}
	if got := closes(written()); got != 0 {
		t.Errorf("%d closes from crawls that each showed a different handful of 40 listings", got)
	}
}
