package crawler

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// maintenancePage is what a Korean club site answers, with status 200, while it is down.
const maintenancePage = `<html><body><h1>시스템 점검중입니다</h1></body></html>`

// clubSite is the README's club-page shape over clubs 137.. (one per entry of rows), one day
// ahead; each club's page is whatever answer returns for it at request time.
type clubSite struct {
	mu     sync.Mutex
	answer map[string]string // club code -> "rows:N", "maintenance" or "empty" (its list without rows)
	srv    *sourceServer
	site   *site.Site
}

func newClubSite(t *testing.T, clubs map[string]int) *clubSite {
	t.Helper()
	c := &clubSite{answer: map[string]string{}}
	var targets strings.Builder
	for i := range len(clubs) {
		code := fmt.Sprint(137 + i)
		c.answer[code] = fmt.Sprintf("rows:%d", clubs[code])
		fmt.Fprintf(&targets, "      - {code: %s, name: 클럽%s CC}\n", code, code)
	}
	c.srv = newSourceServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		c.mu.Lock()
		a := c.answer[r.URL.Query().Get("club_code")]
		c.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var n int
		switch a {
		case "maintenance":
			fmt.Fprint(w, maintenancePage)
			return
		case "empty":
		default:
			_, _ = fmt.Sscanf(a, "rows:%d", &n)
		}
		var b strings.Builder
		b.WriteString(`<html><body><table id="resList"><tr><th>시간</th><th>그린피</th></tr>`)
		for i := range n {
			fmt.Fprintf(&b, `<tr class="res"><td>%02d:%02d</td><td>130,000원</td></tr>`, 12+i/6, i%6*10)
		}
		b.WriteString(`</table></body></html>`)
		fmt.Fprint(w, b.String())
	})
	yml := strings.Replace(clubPageSite, "      - {code: 137, name: 레이크 CC}\n", targets.String(), 1)
	c.site = recompiled(t, sourceSite(t, c.srv.URL, yml), func(s *site.SiteSpec) { s.Politeness.NoRetry, s.Politeness.Retries = true, 0 })
	return c
}

func (c *clubSite) set(code, answer string) { c.mu.Lock(); c.answer[code] = answer; c.mu.Unlock() }

// clubRun crawls a clubSite ten minutes apart and returns each crawl's summary; closed() lists
// the closes so far by course.
type clubRun struct {
	r     *Runner
	clock *runClock
	out   *EventLog
}

func newClubRun(t *testing.T, st *site.Site, logs *testkit.SyncBuffer) *clubRun {
	clock := newRunClock(sourcesAt)
	out := openEventLog(t, t.TempDir())
	logger := testkit.Logger(t, slog.LevelWarn)
	if logs != nil {
		logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return &clubRun{r: &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: t.TempDir()}, Logger: logger,
		EventsOut: out, Now: clock.Now, Metrics: newTestMetrics(clock.Now)}, clock: clock, out: out}
}

func (c *clubRun) run(t *testing.T) SiteSummary {
	t.Helper()
	c.clock.Add(10 * time.Minute)
	sum, err := c.r.Run(t.Context())
	s := sum.Sites[0]
	if s.Err != nil || (err == nil) != s.Complete {
		t.Fatalf("crawl: %+v, Run's error %v", s, err)
	}
	return s
}

func (c *clubRun) closed(t *testing.T) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, e := range eventstest.ReadEvents(t, c.out.Path()) {
		if e.EventType == events.ListingClosed {
			out[e.CourseName+" "+string(e.CloseReason)]++
		}
	}
	return out
}

// TestMaintenancePageIsNotSoldOut (HTML): one club of four answering 200 with a maintenance
// page closed all of that club's listings as booked after two crawls, in crawls that counted as
// complete. A page without its list (here #resList, derived from the row selector) now fails like
// a failed fetch: that club's page sets are withheld, the crawl is incomplete, nothing of that
// club closes, and the other clubs still close what they lose.
func TestMaintenancePageIsNotSoldOut(t *testing.T) {
	t.Parallel()
	cs := newClubSite(t, map[string]int{"137": 3, "138": 3, "139": 3, "140": 3})
	logs := &testkit.SyncBuffer{}
	cr := newClubRun(t, cs.site, logs)
	if s := cr.run(t); !s.Complete || s.Opened != 24 {
		t.Fatalf("first crawl: %+v", s)
	}
	cs.set("138", "maintenance")
	cs.set("137", "rows:2") // club 137 really sells its 12:20 slot on both days
	for i := range 2 {
		s := cr.run(t)
		if s.Complete || len(s.FailedPages) != 2 || len(s.FailedSets) != 2 || s.FailedSets[0].Course != "클럽138 CC" {
			t.Errorf("crawl %d with club 138 in maintenance: complete %v, failed pages %v, sets %+v", i+2, s.Complete, s.FailedPages, s.FailedSets)
		}
	}
	got := cr.closed(t)
	if got["클럽138 CC booked"] != 0 || got["클럽137 CC booked"] != 2 {
		t.Errorf("closes %v: club 138's maintenance page must close nothing, club 137's two sold slots must close", got)
	}
	if l := logs.String(); !strings.Contains(l, "no_list") || !strings.Contains(l, "club_code=138") {
		t.Errorf("the failed page is not logged with its URL and reason no_list:\n%s", l)
	}
	if n := metricSum(t, cr.r.Metrics, "crawler_pages_failed_total", map[string]string{"reason": "no_list"}); n != 4 {
		t.Errorf("crawler_pages_failed_total{reason=no_list} = %v, want 4", n)
	}
	// The maintenance ends: the club's listings are still open, nothing was reopened.
	cs.set("138", "rows:3")
	if s := cr.run(t); !s.Complete || s.Opened != 0 {
		t.Errorf("after the maintenance: %+v", s)
	}
}

// TestReadmeAggregatorPostServerBusy (JSON): the README's aggregator-post example declared
// `{path: list, is: empty}` with no success condition, so {"msg":"SERVER_BUSY"} (no list at all)
// read as a sold-out date. With the example's success condition, and the rule that an `is`
// condition without success needs its path present, the page fails.
func TestReadmeAggregatorPostServerBusy(t *testing.T) {
	t.Parallel()
	example := readmeSitesExample(t)
	srv := newSourceServer(t, func(w http.ResponseWriter, _ *http.Request, body string) {
		switch {
		case strings.Contains(body, `"date":"20261201"`):
			fmt.Fprint(w, `{"msg":"SERVER_BUSY"}`)
		case strings.Contains(body, `"date":"20261202"`):
			fmt.Fprint(w, `{"msg":"NO_DATA","list":[]}`)
		default:
			fmt.Fprint(w, `{"msg":"OK","list":[{"bookTime":"0630","CourseName":"OUT","greenFeeDC":"130000","visitorCnt":4}]}`)
		}
	})
	sites, err := site.ParseSites([]byte(strings.ReplaceAll(example, "https://api.example.kr", srv.URL)))
	if err != nil {
		t.Fatal(err)
	}
	var st *site.Site
	for _, s := range sites {
		if s.Name == "aggregator-post" {
			st = recompiled(t, fast(t, s), func(s *site.SiteSpec) { s.DaysAhead, s.Politeness.IgnoreRobotsTxt = 2, true })
		}
	}
	res, err := Collect(t.Context(), st, sourcesAt, newRecorder().deps(t))
	if err != nil {
		t.Fatal(err)
	}
	want := PageSet{PlayDate: "2026-12-01", Course: "레이크 CC"}
	if res.Complete || len(res.FailedSets) != 1 || res.FailedSets[0] != want || len(res.Listings) != 1 {
		t.Fatalf("SERVER_BUSY on 12-01, NO_DATA on 12-02, a row on 12-03: complete %v, failed sets %+v, %d listings; want the 12-01 page failed",
			res.Complete, res.FailedSets, len(res.Listings))
	}
}

// TestJSONIsConditionNeedsSuccessOrItsPath: without a success condition, an `is` condition of
// empty_when (null, empty) holds only where its path is present, so an error answer that lacks it
// fails the page; with success, the condition applies as declared.
func TestJSONIsConditionNeedsSuccessOrItsPath(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, json, body string
		empty, fails     bool
	}{
		{"no success, path present and empty", `{rows: list, empty_when: [{path: list, is: empty}]}`, `{"msg":"OK","list":[]}`, true, false},
		{"no success, path null", `{rows: list, empty_when: [{path: list, is: "null"}]}`, `{"list":null}`, true, false},
		{"no success, path absent", `{rows: list, empty_when: [{path: list, is: empty}]}`, `{"msg":"SERVER_BUSY"}`, false, true},
		{"no success, no empty_when, absent rows", `{rows: list}`, `{"msg":"SERVER_BUSY"}`, false, true},
		{"success holds, path absent", `{rows: list, success: {path: msg, equals: OK}, empty_when: [{path: list, is: empty}]}`, `{"msg":"OK"}`, true, false},
		{"success fails", `{rows: list, success: {path: msg, equals: OK}, empty_when: [{path: list, is: empty}]}`, `{"msg":"SERVER_BUSY"}`, false, true},
		{"equals code without success", `{rows: list, empty_when: [{path: msg, equals: NO_DATA}]}`, `{"msg":"NO_DATA"}`, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sites, err := site.ParseSites(fmt.Appendf(nil, `
sites:
  - name: j
    requests: [{url: "http://x.kr/"}]
    format: json
    json: %s
    fields: {course: {path: c}, round_date: {path: d}, tee_time: {path: t}}
`, tc.json))
			if err != nil {
				t.Fatal(err)
			}
			_, err = parseJSONPage(sites[0], []byte(tc.body), t0)
			if empty := errors.Is(err, errEmptyPage); empty != tc.empty || (err != nil && !empty) != tc.fails {
				t.Errorf("%s: err %v; want empty %v, fails %v", tc.body, err, tc.empty, tc.fails)
			}
		})
	}
}

// TestTargetCollapseGuard (the guard per target): a club whose page still shows its list but
// no rows (an empty list during maintenance) closed every listing of that club after two crawls:
// the site-level guard compares the whole site's count. The guard now applies per target too,
// with a minimum of 5 listings in the last complete crawl of that target: club 138 (12 listings
// → 0) is withheld until the collapse repeats 3 times, while club 140 (4 listings → 0, below the
// minimum) closes on time, like a real sell-out of one small date.
func TestTargetCollapseGuard(t *testing.T) {
	t.Parallel()
	cs := newClubSite(t, map[string]int{"137": 6, "138": 6, "139": 6, "140": 2})
	cr := newClubRun(t, cs.site, nil)
	if s := cr.run(t); !s.Complete || s.Opened != 40 {
		t.Fatalf("first crawl: %+v", s)
	}
	cs.set("138", "empty")
	cs.set("140", "empty")
	s2, s3 := cr.run(t), cr.run(t)
	for i, s := range []SiteSummary{s2, s3} {
		if s.Complete || s.Incomplete != IncompleteCollapsed || len(s.FailedSets) != 1 || s.FailedSets[0] != (PageSet{Course: "클럽138 CC"}) {
			t.Errorf("crawl %d: complete %v (%s), failed sets %+v; want club 138 withheld as collapsed", i+2, s.Complete, s.Incomplete, s.FailedSets)
		}
	}
	if got := cr.closed(t); got["클럽138 CC booked"] != 0 || got["클럽140 CC booked"] != 4 {
		t.Fatalf("after two empty lists: closes %v; want none of club 138 (12 listings), all 4 of club 140 (below the minimum)", got)
	}
	// The third collapse in a row is believed: club 138's listings count as missed from now on.
	s4, s5 := cr.run(t), cr.run(t)
	if !s4.Complete || !s5.Complete {
		t.Errorf("believed collapse: crawls 4 and 5 complete %v %v (%s %s)", s4.Complete, s5.Complete, s4.Incomplete, s5.Incomplete)
	}
	if got := cr.closed(t); got["클럽138 CC booked"] != 12 {
		t.Errorf("after the collapse was believed: closes %v; want club 138's 12", got)
	}
}

func TestHolderOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{`<table class="tee-list"><tr class="r"><td>x</td></tr></table>`, "table.tee-list > tbody"},
		{`<div id="res" class="a b"><ul><li class="r">x</li></ul></div>`, "div#res.a.b > ul"},
		{`<table><tr class="r"><td>x</td></tr></table>`, "table > tbody"},
		{`<p class="r">x</p>`, ""},
		{`<div class="1bad"><p class="r">x</p></div>`, "div"},
	} {
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if got := holderOf(doc.Find(".r").First()); got != tc.want {
			t.Errorf("%s: holder %q, want %q", tc.body, got, tc.want)
		}
	}
}
