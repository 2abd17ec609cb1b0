package crawler

import (
	"fmt"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
)

// e2eCloseRule works out, crawl by crawl, the close Diff's rules name for one listing of the
// end-to-end tests: stamped at the first miss, expired when the tee time was gone by then,
// booked after DefaultMissesToClose misses.
type e2eCloseRule struct {
	tee        time.Time
	misses     int
	firstMiss  time.Time
	wantClose  time.Time
	wantReason events.CloseReason
}

// newE2ECloseRule parses the listing's tee time.
func newE2ECloseRule(t *testing.T, tr sitesim.Truth) *e2eCloseRule {
	t.Helper()
	tee, err := time.ParseInLocation("2006-01-02 15:04", tr.PlayDate+" "+tr.TeeTime, sitesim.KST)
	if err != nil {
		t.Fatal(err)
	}
	return &e2eCloseRule{tee: tee}
}

// miss records a crawl at which a listing the crawler had opened was not on the site; once the
// close is decided, further misses change nothing.
func (r *e2eCloseRule) miss(at time.Time) {
	if !r.wantClose.IsZero() {
		return
	}
	// The close is stamped at the first miss, and a tee time gone before it started was booked.
	r.misses++
	if r.firstMiss.IsZero() {
		r.firstMiss = at
	}
	switch {
	case !r.tee.After(r.firstMiss):
		r.wantClose, r.wantReason = r.firstMiss, events.Expired
	case r.misses >= DefaultMissesToClose:
		r.wantClose, r.wantReason = r.firstMiss, events.Booked
	}
}

// check compares the listing's close event (the last one) with the close the rules name.
func (r *e2eCloseRule) check(t *testing.T, key string, tr sitesim.Truth, evs []events.Event) {
	t.Helper()
	var gotClose time.Time
	var gotReason events.CloseReason
	for _, e := range evs {
		if e.EventType == events.ListingClosed {
			gotClose, gotReason = e.OccurredAt, e.CloseReason
		}
	}
	if !gotClose.Equal(r.wantClose) || gotReason != r.wantReason {
		t.Errorf("%s (left the site %s, tee %s): closed at %v (%s); Diff's rules say %v (%s)",
			key, tr.ClosedAt(), r.tee, gotClose, gotReason, r.wantClose, r.wantReason)
	}
}

// e2eReplay replays one listing's events (sorted by time) in crawl order: opened, changed and
// closed must come in that order, and no event but a close may be stamped while the listing
// was off the site.
type e2eReplay struct {
	key          string
	tr           sitesim.Truth
	evs          []events.Event
	next         int
	open, closed bool
	opened       bool // an opened event was seen (a close is stamped at the first miss, before it is emitted)
	price        *int64
	players      *int
	// checkPrevious: a changed event's previous price and players must be the last ones seen.
	checkPrevious bool
}

// until applies the events stamped at or before at.
func (r *e2eReplay) until(t *testing.T, at time.Time) {
	t.Helper()
	for ; r.next < len(r.evs) && !r.evs[r.next].OccurredAt.After(at); r.next++ {
		e := r.evs[r.next]
		switch {
		case e.EventType == events.ListingOpened && !r.open && !r.closed:
			r.open, r.opened = true, true
		case e.EventType == events.ListingChanged && r.open:
			if r.checkPrevious && (e.Previous == nil || fmt.Sprint(deref(e.Previous.PriceKRW), deref(e.Previous.Players)) != fmt.Sprint(deref(r.price), deref(r.players))) {
				t.Errorf("%s: changed at %s with previous %+v, last seen %v %v", r.key, e.OccurredAt, e.Previous, deref(r.price), deref(r.players))
			}
		case e.EventType == events.ListingClosed && r.open:
			r.open, r.closed = false, true
		default:
			t.Errorf("%s: %s at %s out of order (open %v, closed %v)", r.key, e.EventType, e.OccurredAt, r.open, r.closed)
		}
		r.price, r.players = e.PriceKRW, e.Players
		if e.EventType != events.ListingClosed && !r.tr.VisibleAt(e.OccurredAt) {
			t.Errorf("%s: %s at %s while not on the site", r.key, e.EventType, e.OccurredAt)
		}
	}
}

// e2eTruth is the sim's ground truth over [start, end) by listing key under source, without the
// malformed rows (the crawler skips them).
func e2eTruth(sim *sitesim.Site, source string, start, end time.Time) map[string]sitesim.Truth {
	truth := map[string]sitesim.Truth{}
	for _, tr := range sim.GroundTruth(start, end) {
		if !tr.Malformed {
			truth[events.ListingKey(source, tr.Course, tr.Part, tr.PlayDate, tr.TeeTime)] = tr
		}
	}
	return truth
}

// e2eRun runs one crawl of the week at at: its one site must not error, and Run's error must
// say exactly whether the crawl was incomplete.
func e2eRun(t *testing.T, r *Runner, at time.Time) SiteSummary {
	t.Helper()
	sum, err := r.Run(t.Context())
	s := sum.Sites[0]
	if s.Err != nil {
		t.Fatalf("crawl at %s: %v", at, s.Err)
	}
	if (err == nil) != s.Complete {
		t.Fatalf("crawl at %s: complete %v but Run's error is %v", at, s.Complete, err)
	}
	return s
}

// e2eEvents checks what every event of the end-to-end tests must be: about a listing of the site
// (truth), stamped at a crawl (at), a close only from a crawl that could count the miss
// (e2eCrawl.counts) and not a false close; check adds the test's own checks of an event about a
// listing of the site. It returns the events by listing and how many there are of each type
// (closes by reason: "listing_closed/booked").
func e2eEvents(t *testing.T, truth map[string]sitesim.Truth, at map[int64]e2eCrawl, evs []events.Event,
	check func(e events.Event, tr sitesim.Truth)) (byKey map[string][]events.Event, counts map[string]int) {
	t.Helper()
	byKey, counts = map[string][]events.Event{}, map[string]int{}
	for _, e := range evs {
		tr, ok := truth[e.ListingKey]
		if !ok {
			t.Errorf("event %s %s: no such listing on the site", e.EventType, e.ListingKey)
			continue
		}
		check(e, tr)
		c, ok := at[e.OccurredAt.UnixNano()]
		if !ok {
			t.Fatalf("event %s at %s: no crawl then", e.EventID, e.OccurredAt)
		}
		key := string(e.EventType)
		if e.EventType == events.ListingClosed {
			key += "/" + string(e.CloseReason)
			if !c.counts(tr.Course, tr.PlayDate) {
				t.Errorf("%s closed in the crawl at %s, which could not see it (incomplete: complete %v, failed page sets %v)",
					e.ListingKey, e.OccurredAt, c.Complete, c.Failed)
			}
			e2eFalseClose(t, e, tr, counts)
		}
		counts[key]++
		byKey[e.ListingKey] = append(byKey[e.ListingKey], e)
	}
	return byKey, counts
}

// e2eFalseClose counts and reports a close stamped while the listing was still on the site.
func e2eFalseClose(t *testing.T, e events.Event, tr sitesim.Truth, counts map[string]int) {
	t.Helper()
	if e.OccurredAt.Before(tr.ClosedAt()) {
		counts["false_close"]++
		t.Errorf("FALSE CLOSE: %s closed (%s) at %s, still on the site until %s", e.ListingKey, e.CloseReason, e.OccurredAt, tr.ClosedAt())
	}
}

// recompiled is site with edit applied to a copy of its spec, compiled again: a compiled site is
// never changed in place.
func recompiled(t testing.TB, st *site.Site, edit func(s *site.SiteSpec)) *site.Site {
	t.Helper()
	spec := st.SiteSpec
	edit(&spec)
	s, err := spec.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
