package crawler

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
)

// nameVariants are one course's name as sites send it: plain, with a trailing LRM, decomposed
// (NFD), with a zero-width space, with an nbsp, with bidi isolates around it.
var nameVariants = []string{
	"레이크 CC", "레이크 CC\u200e", "\u1105\u1166\u110b\u1175\u110f\u1173 CC", "레이\u200b크 CC", "레이크&nbsp;CC", "\u2066레이크 CC\u2069",
}

// TestNameVariantsFoldIntoOneListing: every variant of a name (nameVariants) at the same tee
// time is one listing.
func TestNameVariantsFoldIntoOneListing(t *testing.T) {
	t.Parallel()
	srv := newSourceServer(t, func(w http.ResponseWriter, _ *http.Request, _ string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		times := make([]string, len(nameVariants))
		for i := range times {
			times[i] = "07:00"
		}
		fmt.Fprint(w, "<html><body><table>"+slotRows(nameVariants, times)+"</table></body></html>")
	})
	res, err := Collect(t.Context(), sourceSite(t, srv.URL, encHTMLSite), sourcesAt, newRecorder().deps(t))
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, res.Listings, "레이크 CC||2026-12-01|2026-12-01|07:00|130000|4")
}

// TestMarkAppearingBetweenCrawlsClosesNothing: a trailing LRM mark appears over three
// crawls of the runner: 레이크 CC gains a trailing LRM in the second crawl and keeps it in the
// third; its tee times stay open, nothing closes and nothing opens twice.
func TestMarkAppearingBetweenCrawlsClosesNothing(t *testing.T) {
	t.Parallel()
	var mark atomic.Value
	mark.Store("")
	srv := newSourceServer(t, func(w http.ResponseWriter, _ *http.Request, _ string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		lake := "레이크 CC" + mark.Load().(string)
		names := []string{lake, lake, lake, "힐스 CC", "힐스 CC", "힐스 CC"}
		times := []string{"07:00", "07:01", "07:02", "07:00", "07:01", "07:02"}
		fmt.Fprint(w, "<html><body><table>"+slotRows(names, times)+"</table></body></html>")
	})
	st := recompiled(t, sourceSite(t, srv.URL, encHTMLSite), func(s *site.SiteSpec) { s.DaysAhead = 1 })
	clock := newRunClock(sourcesAt)
	dir := t.TempDir()
	out := openEventLog(t, dir)
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: filepath.Join(dir, "state")}, Logger: runLogger(t),
		EventsOut: out, Metrics: newTestMetrics(clock.Now), Now: clock.Now}
	first := 0
	for i, m := range []string{"", "\u200e", "\u200e"} {
		mark.Store(m)
		sum, err := r.Run(t.Context())
		if err != nil {
			t.Fatalf("crawl %d: %v", i+1, err)
		}
		s := sum.Sites[0]
		switch {
		case !s.Complete:
			t.Fatalf("crawl %d incomplete: %+v", i+1, s)
		case i == 0:
			first = s.Opened
		case sum.Events() != 0:
			t.Errorf("crawl %d: opened %d changed %d closed %d after the mark appeared, want no event", i+1, s.Opened, s.Changed, s.Closed)
		}
		clock.Add(10 * time.Minute)
	}
	var got []string
	for _, e := range eventstest.ReadEvents(t, out.Path()) {
		got = append(got, fmt.Sprintf("%s %q", e.EventType, e.CourseName))
		if e.EventType != events.ListingOpened {
			t.Errorf("%s %s %q: a mark appearing must close and open nothing", e.EventType, e.ListingKey, e.CourseName)
		}
	}
	if len(got) != first || first == 0 {
		t.Errorf("%d events, want the first crawl's %d opens:\n%s", len(got), first, strings.Join(got, "\n"))
	}
}
