package crawler

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
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

// shippedSite is the site name of compose/dev/sites.yaml pointed at base, test-fast.
func shippedSite(t testing.TB, name, base string, days int) *site.Site {
	t.Helper()
	sites, err := site.LoadSites(filepath.Join("..", "compose", "dev", "sites.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range sites {
		if st.Name != name {
			continue
		}
		s := st.SiteSpec
		fix := func(u string) string { return strings.Replace(u, "http://"+sitesim.DefaultAddr, base, 1) }
		s.Requests = append([]site.RequestTemplate(nil), s.Requests...)
		for i := range s.Requests {
			s.Requests[i].URL = fix(s.Requests[i].URL)
		}
		if s.Login != nil {
			l := *s.Login
			l.URL = fix(l.URL)
			s.Login = &l
		}
		return e2eFast(t, s, days)
	}
	t.Fatalf("no site %s in the shipped sites file", name)
	return nil
}

// e2eFast is s with days play dates and the end-to-end tests' quick politeness, validated.
func e2eFast(t testing.TB, s site.SiteSpec, days int) *site.Site {
	t.Helper()
	s.DaysAhead = days
	s.Politeness.Delay, s.Politeness.RandomDelay = site.Duration(100*time.Microsecond), site.Duration(100*time.Microsecond)
	s.Politeness.BackoffBase, s.Politeness.BackoffCap = site.Duration(time.Millisecond), site.Duration(4*time.Millisecond)
	s.Politeness.RequestTimeout = site.Duration(5 * time.Second)
	s.Politeness.Retries = 1 // a page fails when a 500 hits it twice
	st, err := s.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// e2eSite is the week's site name pointed at base: a shipped one, or sim-euc-kr.
func e2eSite(t *testing.T, name, base string, days int) *site.Site {
	t.Helper()
	if name != "sim-euc-kr" {
		return shippedSite(t, name, base, days)
	}
	// The EUC-KR page declares its charset only in <meta>; the site says nothing about it. It is
	// not in the shipped sites file (which the demo and compose/app mirror).
	sites, err := site.ParseSites([]byte("sites:\n" + sitesim.EUCKRSite(name, base) + "    allowed_domains: [\"127.0.0.1\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	return e2eFast(t, sites[0].SiteSpec, days)
}

// counts reports whether the crawl counted a miss for (could close) a listing of this play date
// and course: a complete crawl did, and so does, since completeness is judged per page set, a
// crawl whose failed pages all have a page set and none covers the listing.
func (c e2eCrawl) counts(course, playDate string) bool {
	if c.Complete {
		return true
	}
	if len(c.Failed) == 0 {
		return false // incomplete for another reason (max_pages, collapse): nothing closes
	}
	l := events.Listing{CourseName: course, PlayDate: playDate}
	for _, p := range c.Failed {
		if p == (PageSet{}) || p.Covers(l) {
			return false
		}
	}
	return true
}

// TestEndToEndSourcesWeek is TestEndToEndSimulatedWeek for every other shape of the shipped sites
// file (JSON GET, JSON POST, login-guarded form POST, one club per page) and an EUC-KR page declared
// only by <meta> (sim-euc-kr): a simulated week crawled every 30 minutes with 500s, slow pages, one
// club's day failing now and then, one club in maintenance for a day (answering 200 with a
// maintenance page, or an error answer for the JSON APIs) and, for the login site, sessions that
// expire every few requests; the events are checked against the simulator's ground truth, zero
// false closes included.
func TestEndToEndSourcesWeek(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		site    string
		players bool // the shape shows players
	}{
		{"sim-api-get", true}, {"sim-api-post", true}, {"sim-club-login", true}, {"sim-club-page", false},
		{"sim-euc-kr", true},
	} {
		t.Run(tc.site, func(t *testing.T) {
			t.Parallel()
			e2eSourceWeek(t, tc.site, tc.players)
		})
	}
}

func e2eSourceWeek(t *testing.T, name string, players bool) {
	const (
		seed    = 2025
		days    = 4
		cadence = 30 * time.Minute
	)
	start := time.Date(2025, 12, 28, 0, 5, 0, 0, sitesim.KST)
	end := start.AddDate(0, 0, 7)
	clock := newRunClock(start)
	sim := sitesim.New(sitesim.Config{Seed: seed, Now: clock.Now, DaysAhead: days, TeeTimesPerDay: 8,
		LoginPassword: "e2e-secret", SessionRequests: 15})
	sim.InjectFaults(sitesim.Faults{ErrorRate: 0.1, SlowRate: 0.02, SlowDelay: 20 * time.Millisecond})
	// One club's day answers 404 in some crawls, and club 139 is in maintenance for a day: the
	// test's own faults on top of the sim's.
	faults := &e2eFaults{}
	faults.broken.Store("")
	srv := faults.server(sim)
	t.Cleanup(srv.Close)
	st := e2eSite(t, name, srv.URL, days)
	out := openEventLog(t, t.TempDir())
	quiet := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
	getenv := func(k string) string {
		return map[string]string{"SIM_CLUB_USER": sitesim.DefaultUser, "SIM_CLUB_PASSWORD": "e2e-secret"}[k]
	}
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: t.TempDir()}, Logger: quiet, EventsOut: out,
		Metrics: newTestMetrics(clock.Now), Now: clock.Now, Getenv: getenv}

	var crawls []e2eCrawl
	// The maintenance is of one club: sim-euc-kr shows every club of a date on one page, so it has
	// no club's page to put in maintenance.
	perClub := name != "sim-euc-kr"
	maintFrom, maintTo := start.AddDate(0, 0, 2), start.AddDate(0, 0, 3)
	maintPages := 0 // club 139's pages answered during the maintenance: one per date and crawl
	for at, i := start, 0; at.Before(end); at, i = at.Add(cadence), i+1 {
		clock.Set(at)
		faults.maintenance.Store(perClub && !at.Before(maintFrom) && at.Before(maintTo))
		if i%9 == 4 { // club 138's day after tomorrow is broken
			faults.broken.Store("138|" + at.AddDate(0, 0, 2).Format("20060102"))
		} else {
			faults.broken.Store("")
		}
		s := e2eRun(t, r, at)
		crawls = append(crawls, e2eCrawl{At: at, Complete: s.Complete, Failed: s.FailedSets})
		if faults.maintenance.Load() {
			e2eMaintenanceCrawl(t, name, s, at, days)
			maintPages += days + 1
		}
	}
	if name == "sim-club-login" {
		t.Logf("%d logins", sim.Logins())
		if sim.Logins() <= len(crawls) {
			t.Errorf("%d logins in %d crawls: the sessions never expired mid-crawl", sim.Logins(), len(crawls))
		}
	}
	evs := eventstest.ReadEvents(t, out.Path())
	e2eSourceCheck(t, name, players, sim, crawls, evs, start, end)
	// Exactly the maintenance answers failed as neither rows nor sold out: never a sold-out page.
	reason := FailNoList
	if strings.HasPrefix(name, "sim-api") {
		reason = FailBadAnswer
	}
	if got := metricSum(t, r.Metrics, "crawler_pages_failed_total", map[string]string{"reason": reason}); got != float64(maintPages) {
		t.Errorf("%v pages failed as %s, want the %d maintenance answers", got, reason, maintPages)
	}
	others := 0
	for _, e := range evs {
		if perClub && e.EventType == events.ListingClosed && !e.OccurredAt.Before(maintFrom) && e.OccurredAt.Before(maintTo) {
			if e.CourseName == maintCourse {
				t.Errorf("%s closed (%s) at %s, while its club was in maintenance", e.ListingKey, e.CloseReason, e.OccurredAt)
			}
			others++
		}
	}
	t.Logf("%s: %d closes of the other clubs during club %s's maintenance", name, others, maintClub)
	if perClub && name != "sim-api-get" && others == 0 {
		t.Error("no other club closed anything during the maintenance: the crawl must be incomplete for that club only")
	}
}

// e2eFaults are the source week's own faults on top of the sim's: broken ("club|yyyymmdd") is a
// club's day that answers 404, maintenance puts club maintClub in maintenance.
type e2eFaults struct {
	broken      atomic.Value
	maintenance atomic.Bool
}

// server serves sim behind f's faults (the login page is never broken nor in maintenance).
func (f *e2eFaults) server(sim *sitesim.Site) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		all := r.URL.RawQuery + string(body)
		if f.maintenance.Load() && r.URL.Path != sitesim.PathLogin && strings.Contains(all, maintClub) {
			serveMaintenance(w, r)
			return
		}
		if b := f.broken.Load().(string); b != "" && r.URL.Path != sitesim.PathLogin {
			club, date, _ := strings.Cut(b, "|")
			if strings.Contains(all, club) && (strings.Contains(all, date) || strings.Contains(all, date[:4]+"-"+date[4:6]+"-"+date[6:])) {
				http.NotFound(w, r)
				return
			}
		}
		sim.ServeHTTP(w, r)
	}))
}

// The club in maintenance for a day of the source week (the third course, 139).
const (
	maintClub   = "139"
	maintCourse = "스카이밸리 GC"
)

// serveMaintenance answers as a club in maintenance does, with status 200: an error answer from
// the JSON APIs, a maintenance page from the HTML ones.
func serveMaintenance(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case sitesim.PathAPIGet:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"resultCode":"9999","resultMessage":"시스템 점검중입니다"}`)
	case sitesim.PathAPIPost:
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"msg":"SERVER_BUSY"}`)
	default:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, maintenancePage)
	}
}

// e2eMaintenanceCrawl checks one crawl during the maintenance: incomplete, and the failed page
// sets cover the club's listings of every date (for sim-api-get, whose course comes from the
// rows, that is the whole date).
func e2eMaintenanceCrawl(t *testing.T, name string, s SiteSummary, at time.Time, days int) {
	t.Helper()
	if s.Complete {
		t.Errorf("%s crawl at %s: complete while club %s was in maintenance", name, at, maintClub)
	}
	for d := range days + 1 {
		l := events.Listing{CourseName: maintCourse, PlayDate: at.AddDate(0, 0, d).Format("2006-01-02")}
		covered := false
		for _, p := range s.FailedSets {
			covered = covered || p.Covers(l)
			if name != "sim-api-get" && p.Course == "" {
				t.Errorf("%s crawl at %s: failed page set %+v names no club", name, at, p)
			}
		}
		if !covered {
			t.Errorf("%s crawl at %s: club %s's %s is not withheld (failed sets %+v)", name, at, maintClub, l.PlayDate, s.FailedSets)
		}
	}
}

// e2eSourceCheck is e2eCheck for a site whose round_date is the requested date and which may not
// show players.
func e2eSourceCheck(t *testing.T, source string, players bool, sim *sitesim.Site, crawls []e2eCrawl, evs []events.Event, start, end time.Time) {
	truth := e2eTruth(sim, source, start, end)
	at, incomplete := e2eCrawlsAt(crawls)
	byKey, counts := e2eEvents(t, truth, at, evs, func(e events.Event, tr sitesim.Truth) {
		if e.PlayDate != tr.PlayDate || e.RoundDate != tr.PlayDate {
			t.Errorf("%s: play_date %s round_date %q; site: %s", e.ListingKey, e.PlayDate, e.RoundDate, tr.PlayDate)
		}
	})
	for key, tr := range truth {
		e2eSourceListing(t, key, tr, byKey[key], crawls, players)
	}
	t.Logf("%s: %d crawls (%d incomplete), %d events: %v", source, len(crawls), incomplete, len(evs), counts)
	switch {
	case incomplete == 0:
		t.Error("no crawl was incomplete: the faults did not bite")
	case counts["listing_closed/booked"] == 0 || counts["listing_closed/expired"] == 0 || counts["listing_changed"] == 0:
		t.Errorf("the week lacks bookings, expiries or changes: %v", counts)
	}
}

// e2eSourceListing replays one listing's events over the crawls and compares with the truth.
func e2eSourceListing(t *testing.T, key string, tr sitesim.Truth, evs []events.Event, crawls []e2eCrawl, players bool) {
	t.Helper()
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].OccurredAt.Before(evs[j].OccurredAt) })
	rule := newE2ECloseRule(t, tr)
	show := func(price *int64, pl any) string {
		if !players {
			pl = nil
		}
		return fmt.Sprint(deref(price), pl)
	}
	r := &e2eReplay{key: key, tr: tr, evs: evs}
	for _, c := range crawls {
		r.until(t, c.At)
		if !c.counts(tr.Course, tr.PlayDate) {
			continue
		}
		if tr.VisibleAt(c.At) {
			wp, wpl := tr.StateAt(c.At)
			if c.Complete && (!r.open || show(r.price, deref(r.players)) != show(wp, wpl)) {
				t.Errorf("%s at complete crawl %s: events say open=%v %s; site shows %s", key, c.At, r.open, show(r.price, deref(r.players)), show(wp, wpl))
			}
			continue
		}
		if r.opened {
			rule.miss(c.At)
		}
	}
	rule.check(t, key, tr, evs)
}
