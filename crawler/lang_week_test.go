package crawler

import (
	"log/slog"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// langSite is the hand-written entry name of the simulator's corpus file (sitesim.CorpusEntry,
// crawler/sitesim/corpus.yaml) pointed at base, with days play dates and the end-to-end tests'
// quick politeness.
func langSite(t testing.TB, name, base string, days int) *site.Site {
	t.Helper()
	sites, err := site.ParseSites([]byte("sites:\n" + sitesim.CorpusEntry(name, base)))
	if err != nil {
		t.Fatal(err)
	}
	return e2eFast(t, sites[0].SiteSpec, days)
}

// TestLangShapesWeek: each shape of the sites language, crawled every 4 hours over a simulated
// week from its hand-written entry (6 days ahead of the simulator's 4-day window: the last dates
// are not open yet or sold out), writes exactly what the simulator's ground truth implies: every
// tee time opened at the first crawl that shows it, its price drops and players changes as
// changes, closed as booked or expired by the rules, nothing else; and no captured value reaches
// an event or the log.
func TestLangShapesWeek(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		site    string
		players bool // the shape shows players
	}{
		{"lang-sale-else-list", false}, {"lang-rowspan", true}, {"lang-grouped", true},
		{"lang-csrf", true}, {"lang-csrf-json", true}, {"lang-sid", true},
	} {
		t.Run(tc.site, func(t *testing.T) {
			t.Parallel()
			langWeek(t, tc.site, tc.players)
		})
	}
}

func langWeek(t *testing.T, name string, players bool) {
	const (
		seed     = 2025
		simDays  = 4
		days     = 6
		cadence  = 4 * time.Hour
		tracking = 7 * 24 * time.Hour
	)
	start := time.Date(2025, 12, 28, 8, 5, 0, 0, sitesim.KST)
	end := start.Add(tracking)
	clock := newRunClock(start)
	sim := sitesim.New(sitesim.Config{Seed: seed, Now: clock.Now, DaysAhead: simDays, TeeTimesPerDay: 8})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	st := langSite(t, name, srv.URL, days)
	out := openEventLog(t, t.TempDir())
	var log testkit.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: t.TempDir()}, Logger: logger, EventsOut: out,
		Metrics: newTestMetrics(clock.Now), Now: clock.Now}
	var crawls []e2eCrawl
	for at := start; at.Before(end); at = at.Add(cadence) {
		clock.Set(at)
		s := e2eRun(t, r, at)
		if !s.Complete {
			t.Fatalf("crawl at %s incomplete: %s, failed %v", at, s.Incomplete, s.FailedPages)
		}
		crawls = append(crawls, e2eCrawl{At: at, Complete: true})
	}
	evs := eventstest.ReadEvents(t, out.Path())
	truth := e2eTruth(sim, name, start, end)
	at, _ := e2eCrawlsAt(crawls)
	byKey, counts := e2eEvents(t, truth, at, evs, func(e events.Event, tr sitesim.Truth) {
		if e.PlayDate != tr.PlayDate || e.RoundDate != tr.PlayDate {
			t.Errorf("%s: play_date %s round_date %q; site: %s", e.ListingKey, e.PlayDate, e.RoundDate, tr.PlayDate)
		}
	})
	for key, tr := range truth {
		e2eSourceListing(t, key, tr, byKey[key], crawls, players)
	}
	t.Logf("%s: %d crawls, %d events: %v", name, len(crawls), len(evs), counts)
	if counts["listing_closed/booked"] == 0 || counts["listing_closed/expired"] == 0 || counts["listing_changed"] == 0 {
		t.Errorf("the week lacks bookings, expiries or changes: %v", counts)
	}
	events, err := os.ReadFile(out.Path())
	if err != nil {
		t.Fatal(err)
	}
	if name == "lang-grouped" && !regexp.MustCompile(`other_date=[1-9]`).MatchString(log.String()) {
		t.Error("no page dropped a row of the next date: the answers grouped by date show two")
	}
	if strings.Contains(string(events), "sid=") {
		t.Error("a listing's URL carries the session id parameter")
	}
	for _, secret := range sim.IssuedSecrets() {
		if strings.Contains(string(events), secret) || strings.Contains(log.String(), secret) {
			t.Errorf("the captured value %s reached the events or the log", secret)
		}
	}
}
