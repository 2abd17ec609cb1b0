package crawler

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// A club whose page always fails withholds the closes of its own listings only: the other club's
// listings still close after two misses, and the broken club's never do. A failed page that
// belongs to no page set still withholds every close.
func TestRunnerFailedClubWithholdsOnlyItsCloses(t *testing.T) {
	t.Parallel()
	var (
		gone   atomic.Bool // the 16:30 slot of both clubs is booked
		broken atomic.Bool // club 138's pages answer 500
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		if broken.Load() && r.URL.Query().Get("club_code") == "138" {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		rows := `<tr class="res"><td>17:00</td><td>100,000원</td></tr>`
		if !gone.Load() {
			rows += `<tr class="res"><td>16:30</td><td>100,000원</td></tr>`
		}
		_, _ = w.Write([]byte(`<table id="resList">` + rows + `</table>`))
	}))
	t.Cleanup(srv.Close)
	st := sourceSite(t, srv.URL, strings.Replace(clubPageSite, "      - {code: 137, name: 레이크 CC}\n",
		"      - {code: 137, name: 레이크 CC}\n      - {code: 138, name: 힐스 CC}\n", 1))
	st = recompiled(t, st, func(s *site.SiteSpec) { s.Politeness.NoRetry, s.Politeness.Retries = true, 0 })
	clock := newRunClock(sourcesAt)
	out := openEventLog(t, t.TempDir())
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: t.TempDir()}, Logger: testkit.Logger(t, slog.LevelWarn), EventsOut: out, Now: clock.Now}
	run := func() SiteSummary {
		t.Helper()
		clock.Add(10 * time.Minute)
		sum, _ := r.Run(t.Context())
		return sum.Sites[0]
	}
	if s := run(); !s.Complete || s.Opened != 8 { // 2 clubs x 2 days x 2 slots
		t.Fatalf("first crawl: %+v", s)
	}
	gone.Store(true)
	broken.Store(true)
	s1, s2 := run(), run()
	if s1.Complete || s2.Complete || s1.Incomplete != IncompleteFailedPages || len(s2.FailedSets) != 2 {
		t.Fatalf("crawls with club 138 down: %+v / %+v", s1, s2)
	}
	closed := map[string]bool{}
	for _, e := range eventstest.ReadEvents(t, out.Path()) {
		if e.EventType == events.ListingClosed {
			closed[e.CourseName+" "+e.PlayDate+" "+e.TeeTime] = true
		}
	}
	want := map[string]bool{"레이크 CC 2026-12-01 16:30": true, "레이크 CC 2026-12-02 16:30": true}
	if len(closed) != 2 || !closed["레이크 CC 2026-12-01 16:30"] || !closed["레이크 CC 2026-12-02 16:30"] {
		t.Fatalf("closed %v, want %v: the healthy club closes, the broken one does not", closed, want)
	}

	// A failed page without a page set (a start URL) keeps every listing: the old whole-crawl rule.
	if ok, _ := withheldBy([]PageSet{{PlayDate: "2026-12-01"}, {}}); ok {
		t.Error("a failed page without a page set must make the crawl incomplete")
	}
}

// Diff with Withheld: a missing listing the failed page sets cover is kept untouched (no miss), the
// others count their miss and close; the crawl does not become the collapse guard's reference.
func TestDiffWithheld(t *testing.T) {
	t.Parallel()
	prevAt := seoulTime(t, "2026-12-01 10:00")
	prev := snapOf(prevAt, 1, a0700, a0730, b0800)
	prev.LastCompleteAt, prev.LastCompleteSeen = prevAt, 3
	c := crawlAt(t, 1, "2026-12-01 10:10", true)
	alpha := PageSet{Course: "Alpha"}
	c.Withheld = func(l events.Listing) bool { return alpha.Covers(l) }
	out, next, stats := Diff(prev, nil, c, DiffOptions{})
	got := summarize(t, out)
	if len(got) != 1 || got[0].Key != b0800.Key() || got[0].Type != events.ListingClosed {
		t.Fatalf("events %+v, want only Bravo closed", got)
	}
	if stats.Kept != 2 || next.Listings[a0700.Key()].Misses != 1 || next.Listings[a0730.Key()].Misses != 1 {
		t.Errorf("kept %d, Alpha entries %+v %+v: the withheld listings must stay as they were", stats.Kept,
			next.Listings[a0700.Key()], next.Listings[a0730.Key()])
	}
	if !next.LastCompleteAt.Equal(prevAt) || next.LastCompleteSeen != 3 {
		t.Errorf("last complete %s %d: a crawl with withheld pages must not become the reference", next.LastCompleteAt, next.LastCompleteSeen)
	}
}
