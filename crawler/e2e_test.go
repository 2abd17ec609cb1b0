package crawler

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
)

// e2eCrawl is one crawl of the end-to-end tests: when, whether the runner found it complete, and
// the page sets of its failed pages (which listings it could count a miss for: counts).
type e2eCrawl struct {
	At       time.Time
	Complete bool
	Failed   []PageSet
}

// e2eCrawlsAt indexes crawls by instant (by UnixNano: a time.Time key would compare locations
// too) and counts the incomplete ones.
func e2eCrawlsAt(crawls []e2eCrawl) (map[int64]e2eCrawl, int) {
	at := map[int64]e2eCrawl{}
	incomplete := 0
	for _, c := range crawls {
		at[c.At.UnixNano()] = c
		if !c.Complete {
			incomplete++
		}
	}
	return at, incomplete
}

// TestEndToEndSimulatedWeek crawls the simulated site every 20 simulated minutes for a week that
// starts on Sunday 2025-12-28 (so January play dates appear from the first crawl on), with 500s,
// slow pages and now and then a page that is missing, and checks the events the runner wrote
// against the simulator's ground truth:
//
//   - every event is about a listing that exists on the site, with the right play_date (across
//     the year boundary), round_date, price and players;
//   - at every complete crawl, replaying the events so far gives exactly the open listings of the
//     site with their current price and players;
//   - every listing closes at exactly the crawl Diff's rules name: the MissesToClose-th complete
//     crawl after it left the site (booked), or the first complete one after its tee time
//     (expired); never earlier, so zero false closes despite the failed pages, and never in an
//     incomplete crawl.
func TestEndToEndSimulatedWeek(t *testing.T) {
	t.Parallel()
	const (
		seed    = 2025
		days    = 4 // play dates shown: today and the 4 days after
		cadence = 20 * time.Minute
	)
	start := time.Date(2025, 12, 28, 0, 5, 0, 0, sitesim.KST)
	end := start.AddDate(0, 0, 7)
	clock := newRunClock(start)
	sim := sitesim.New(sitesim.Config{Seed: seed, Now: clock.Now, DaysAhead: days, TeeTimesPerDay: 8})
	sim.InjectFaults(sitesim.Faults{ErrorRate: 0.1, SlowRate: 0.02, SlowDelay: 20 * time.Millisecond})
	// A page that is missing (404) in some crawls: the test's own fault on top of the sim's.
	var missing atomic.Value
	missing.Store("")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m := missing.Load().(string); m != "" && r.URL.RequestURI() == m {
			http.NotFound(w, r)
			return
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	st := recompiled(t, runnerSite(t, srv.URL, days), func(spec *site.SiteSpec) {
		spec.Politeness.NoDelay = false
		spec.Politeness.Delay, spec.Politeness.RandomDelay = site.Duration(100*time.Microsecond), site.Duration(100*time.Microsecond)
		spec.Politeness.Retries = 1 // a page fails when a 500 hits it twice: ~1% of pages
	})
	out := openEventLog(t, t.TempDir())
	// Warnings (skipped rows, failed pages, incomplete crawls) are the point of the test: log errors only.
	quiet := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: t.TempDir()}, Logger: quiet, EventsOut: out,
		Metrics: newTestMetrics(clock.Now), Now: clock.Now}

	var crawls []e2eCrawl
	for at, i := start, 0; at.Before(end); at, i = at.Add(cadence), i+1 {
		clock.Set(at)
		if i%25 == 7 { // the second page of the day after tomorrow goes missing
			missing.Store("/tee?date=" + at.AddDate(0, 0, 2).Format("20060102") + "&page=2")
		} else {
			missing.Store("")
		}
		s := e2eRun(t, r, at)
		crawls = append(crawls, e2eCrawl{At: at, Complete: s.Complete})
	}
	evs := eventstest.ReadEvents(t, out.Path())
	e2eCheck(t, sim, crawls, evs, start, end)
}

// e2eCheck compares the events with the sim's ground truth (see TestEndToEndSimulatedWeek).
func e2eCheck(t *testing.T, sim *sitesim.Site, crawls []e2eCrawl, evs []events.Event, start, end time.Time) {
	truth := e2eTruth(sim, "sim-golf", start, end)
	at, incomplete := e2eCrawlsAt(crawls)
	january := 0
	byKey, counts := e2eEvents(t, truth, at, evs, func(e events.Event, tr sitesim.Truth) {
		if e.PlayDate != tr.PlayDate || e.RoundDate != tr.RoundDate {
			t.Errorf("%s: play_date %s round_date %q; site: %s %q", e.ListingKey, e.PlayDate, e.RoundDate, tr.PlayDate, tr.RoundDate)
		}
		if e.OccurredAt.Year() == 2025 && strings.HasPrefix(e.PlayDate, "2026-01-") {
			january++
		}
	})

	for key, tr := range truth {
		e2eCheckListing(t, key, tr, byKey[key], crawls)
	}
	t.Logf("%d crawls (%d incomplete), %d events: %v; %d events in 2025 about January 2026", len(crawls), incomplete, len(evs), counts, january)
	switch {
	case incomplete == 0:
		t.Error("no crawl was incomplete: the faults did not bite")
	case counts["listing_closed/booked"] == 0 || counts["listing_closed/expired"] == 0 || counts["listing_changed"] == 0:
		t.Errorf("the week lacks bookings, expiries or changes: %v", counts)
	case january == 0:
		t.Error("no January play date was seen in December: the year boundary was not exercised")
	}
}

// e2eCheckListing replays one listing's events over the crawls and compares with the truth.
func e2eCheckListing(t *testing.T, key string, tr sitesim.Truth, evs []events.Event, crawls []e2eCrawl) {
	t.Helper()
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].OccurredAt.Before(evs[j].OccurredAt) })
	rule := newE2ECloseRule(t, tr)
	r := &e2eReplay{key: key, tr: tr, evs: evs, checkPrevious: true}
	for _, c := range crawls {
		r.until(t, c.At)
		visible := tr.VisibleAt(c.At)
		if !c.Complete {
			continue
		}
		if visible {
			wp, wpl := tr.StateAt(c.At)
			if !r.open || fmt.Sprint(deref(r.price), deref(r.players)) != fmt.Sprint(deref(wp), wpl) {
				t.Errorf("%s at complete crawl %s: events say open=%v price %v players %v; site shows price %v players %d",
					key, c.At, r.open, deref(r.price), deref(r.players), deref(wp), wpl)
			}
			continue
		}
		// Not on the site at a complete crawl: a miss for a listing the crawler had opened.
		if r.opened {
			rule.miss(c.At)
		}
	}
	rule.check(t, key, tr, evs)
}
