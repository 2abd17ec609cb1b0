package suggest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestSuggestProbesTheBookingWindow: a classic club site (the simulator's one-club ASP page) that
// opens its books 4 days ahead, answers a later date with only an alert and a sold-out date (here:
// one not released yet) with its table and one marker row. Asked for 6 days ahead, suggest's probe
// (at most MaxProbes requests for other dates) warns that days_ahead reaches past the last date
// with rows, proposes not_open from the alert and empty_when from the marker row, and the entry's
// crawls over the week are complete, reject no row and read every visible tee time.
func TestSuggestProbesTheBookingWindow(t *testing.T) {
	day := simStart.AddDate(0, 0, 1)
	clock := &simClock{t: simStart}
	sim := sitesim.New(sitesim.Config{Seed: 2026, Now: clock.Now, DaysAhead: simDays, TeeTimesPerDay: 8, BadRowRate: -1, AlertPastWindow: true})
	var (
		mu    sync.Mutex
		dates = map[string]int{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == sitesim.PathASP {
			mu.Lock()
			dates[r.URL.Query().Get("ymd")]++
			mu.Unlock()
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	curl := "curl '" + srv.URL + sitesim.PathASP + "?gc=140&ymd=" + day.Format("2006.01.02") + "' -H 'Accept: text/html'"
	sg, stderr := runSuggest(t, curl, Options{Date: day, DaysAhead: crawlDays, ProbeEmpty: true, Targets: clubTargets(sim), Now: clock.Now})
	if !sg.Complete {
		t.Fatalf("partial: %v", sg.Missing)
	}
	others := 0
	for d, n := range dates {
		if d != day.Format("2006.01.02") {
			others += n
		}
	}
	// The probe's, and the next date the course part's rule (c) is checked on.
	if others > MaxProbes+1 {
		t.Errorf("%d requests for other dates than the play date (%v), want at most %d", others, dates, MaxProbes+1)
	}
	if sg.Site.NotOpen == nil || sg.Site.NotOpen.Contains != "예약 가능한 일자가 아닙니다" {
		t.Errorf("not_open %+v, want contains 예약 가능한 일자가 아닙니다", sg.Site.NotOpen)
	}
	if len(sg.Site.EmptyWhen) != 1 || sg.Site.EmptyWhen[0].Contains != "예약 가능한 시간이 없습니다" {
		t.Errorf("empty_when %+v, want contains 예약 가능한 시간이 없습니다", sg.Site.EmptyWhen)
	}
	lastRows := simStart.AddDate(0, 0, simDays-1).Format("2006-01-02") // the last window day is released at 09:00
	if !strings.Contains(stderr, "warning: days_ahead 6 reaches") || !strings.Contains(stderr, "the last date that answered rows is "+lastRows) {
		t.Errorf("no warning that days_ahead reaches past the last date with rows (%s)", lastRows)
	}
	crawlEvery9Hours(t, clock, sg.Site, func(at time.Time, res crawler.Result) {
		if !res.Complete || res.Rejected != 0 || len(res.NotOpenSets) == 0 || len(res.Listings) != len(sim.Visible(at)) {
			t.Errorf("crawl at %s: complete %v (failed %v), %d rows rejected, %d sets not open, %d listings of %d visible",
				at.Format("01-02 15:04"), res.Complete, res.FailedPages, res.Rejected, len(res.NotOpenSets), len(res.Listings), len(sim.Visible(at)))
		}
	})
}

// TestSuggestNotOpenOnlyWhenItDiffers (issue 49, item 5): a JSON API answering a date past its
// booking window with rtnCode 9001 ("예약 가능한 일자가 아닙니다", no data) and a sold-out date
// with rtnCode 0000 and an empty list. suggest took the far date's 9001 for empty_when, so every
// sold-out date failed the crawl. The far answer is now compared with an empty date of the
// window: it differs, so it is json.not_open_when, and the empty list is empty_when; the week's
// crawls are complete.
func TestSuggestNotOpenOnlyWhenItDiffers(t *testing.T) {
	day := simStart.AddDate(0, 0, 1)
	clock := &simClock{t: simStart}
	sim, srv := simServer(t, clock)
	curl := "curl '" + srv.URL + sitesim.PathRtnCode + "?clubId=138&ymd=" + day.Format("20060102") + "'"
	sg, stderr := runSuggest(t, curl, Options{Date: day, DaysAhead: crawlDays, ProbeEmpty: true, Targets: clubTargets(sim), Now: clock.Now})
	if !sg.Complete {
		t.Fatalf("not complete: missing %v, undecided %v", sg.Missing, sg.Undecided)
	}
	j := sg.Site.JSON
	if len(j.NotOpenWhen) != 1 || j.NotOpenWhen[0] != (site.JSONCondition{Path: "rtnCode", Equals: sitesim.RtnCodeNotOpen}) {
		t.Errorf("json.not_open_when %+v, want rtnCode equals %s", j.NotOpenWhen, sitesim.RtnCodeNotOpen)
	}
	for _, c := range j.EmptyWhen {
		if c.Equals == sitesim.RtnCodeNotOpen {
			t.Errorf("empty_when %+v holds for the not-open answer", j.EmptyWhen)
		}
	}
	if !strings.Contains(stderr, "differs from") {
		t.Errorf("stderr does not say the far answer differs from the window's empty one")
	}
	crawlEvery9Hours(t, clock, sg.Site, func(at time.Time, res crawler.Result) {
		if !res.Complete || len(res.NotOpenSets) == 0 {
			t.Errorf("crawl at %s: complete %v (failed %v), %d sets not open", at.Format("01-02 15:04"), res.Complete, res.FailedPages, len(res.NotOpenSets))
		}
	})
}

// crawlEvery9Hours crawls the suggested entry (with fastPoliteness) every 9 hours over the
// simulated week, the clock set to each crawl's instant, and hands each result to check.
func crawlEvery9Hours(t *testing.T, clock *simClock, st *site.Site, check func(at time.Time, res crawler.Result)) {
	t.Helper()
	spec := st.SiteSpec
	spec.Politeness = fastPoliteness()
	entry, err := spec.Compile()
	if err != nil {
		t.Fatal(err)
	}
	for at := simStart; at.Before(simStart.AddDate(0, 0, 7)); at = at.Add(9 * time.Hour) {
		clock.Set(at)
		res, err := crawler.Collect(t.Context(), entry, at, crawler.CollectDeps{Logger: testkit.Logger(t, 0)})
		if err != nil {
			t.Fatal(err)
		}
		check(at, res)
	}
}

// TestSuggestLearnsAJSONMarkerRow (issue 49, item 5): a JSON API whose sold-out date answers its
// rows array with one marker object ({"msg":"예약 가능한 시간이 없습니다"}) and no tee time. suggest
// said the far date "has rows too" and proposed no empty_when, so each sold-out date failed its
// crawl or left a rejected row. The marker is learned as empty_when.
func TestSuggestLearnsAJSONMarkerRow(t *testing.T) {
	day := time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.URL.Query().Get("date") == day.Format("20060102") {
			fmt.Fprint(w, `{"code":"0000","list":[{"teeTime":"06:30","greenFee":"130000"},{"teeTime":"07:00","greenFee":"140000"}]}`)
			return
		}
		fmt.Fprint(w, `{"code":"0000","list":[{"msg":"예약 가능한 시간이 없습니다"}]}`)
	}))
	t.Cleanup(srv.Close)
	curl := "curl '" + srv.URL + "/tee?date=" + day.Format("20060102") + "'"
	now := func() time.Time { return day.Add(8 * time.Hour) }
	sg, _ := runSuggest(t, curl, Options{Date: day, DaysAhead: 2, ProbeEmpty: true, Now: now, Name: "레이크 CC"})
	if !sg.Complete {
		t.Fatalf("not complete: missing %v, undecided %v", sg.Missing, sg.Undecided)
	}
	want := site.JSONCondition{Path: "list.0.msg", Equals: "예약 가능한 시간이 없습니다"}
	if len(sg.Site.JSON.EmptyWhen) == 0 || sg.Site.JSON.EmptyWhen[0] != want {
		t.Errorf("empty_when %+v, want %+v", sg.Site.JSON.EmptyWhen, want)
	}
	res, err := crawler.Collect(t.Context(), sg.Site, day.Add(9*time.Hour), crawler.CollectDeps{Logger: testkit.Logger(t, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Rejected != 0 || len(res.Listings) != 2 {
		t.Errorf("the entry's crawl: complete %v (failed %v), %d rejected, %d listings; want complete, none rejected, 2", res.Complete, res.FailedPages, res.Rejected, len(res.Listings))
	}
}
