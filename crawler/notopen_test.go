package crawler

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// notOpenScript is what a classic club site answers, with status 200, for a date past its booking
// window.
const notOpenScript = `<script>alert('예약 가능한 일자가 아닙니다.');history.back();</script>`

// TestNotOpenDateKeepsTheCrawlComplete: a date that answers not_open opens and closes nothing,
// keeps the crawl complete and is counted; a listing whose date turns not open is not closed.
func TestNotOpenDateKeepsTheCrawlComplete(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	notOpen := map[string]bool{}
	srv := newSourceServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		mu.Lock()
		closed := notOpen[r.URL.Query().Get("book_date")]
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if closed {
			fmt.Fprint(w, notOpenScript)
			return
		}
		fmt.Fprint(w, `<html><body><table id="resList"><tr class="res"><td>13:00</td><td>130,000원</td></tr>`+
			`<tr class="res"><td>14:00</td><td>130,000원</td></tr></table></body></html>`)
	})
	yml := clubPageSite + "    not_open: {contains: \"예약 가능한 일자가 아닙니다\"}\n"
	st := recompiled(t, sourceSite(t, srv.URL, yml), func(s *site.SiteSpec) { s.Politeness.NoRetry, s.Politeness.Retries = true, 0 })
	cr := newClubRun(t, st, &testkit.SyncBuffer{})
	if s := cr.run(t); !s.Complete || s.Opened != 4 {
		t.Fatalf("first crawl: %+v", s)
	}
	mu.Lock()
	notOpen["20261202"] = true // the club closed bookings for the second date
	mu.Unlock()
	for i := range 3 {
		if s := cr.run(t); !s.Complete || s.Closed != 0 || s.Opened != 0 {
			t.Errorf("crawl %d with 2026-12-02 not open: complete %v (%s), opened %d, closed %d", i+2, s.Complete, s.Incomplete, s.Opened, s.Closed)
		}
	}
	if n := metricSum(t, cr.r.Metrics, "crawler_pages_not_open_total", map[string]string{"source": "club-html"}); n != 3 {
		t.Errorf("crawler_pages_not_open_total %v, want 3", n)
	}
	for _, e := range eventstest.ReadEvents(t, cr.out.Path()) {
		if e.EventType == events.ListingClosed {
			t.Errorf("closed %s %s: a not-open answer is no evidence", e.PlayDate, e.TeeTime)
		}
	}
}

// json.not_open_when is empty_when's shape; not_open needs requests (a date's answer is
// attributed to its date).
func TestNotOpenKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ yml, err string }{
		{clubPageSite + "    not_open: {}\n", "not_open needs selector, contains or statuses"},
		{clubPageSite + "    not_open: {statuses: [200]}\n", "not_open status 200"},
		{strings.Replace(minimalSite, "    row:", "    not_open: {contains: x}\n    row:", 1), "not_open needs requests"},
		{clubPageSite + "    not_open: {selector: \"div.closed\", statuses: [404]}\n", ""},
	} {
		_, err := site.ParseSites([]byte(strings.ReplaceAll(tc.yml, "{{BASE}}", "http://127.0.0.1:1")))
		if (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%q: %v, want %q", tc.yml[len(tc.yml)-60:], err, tc.err)
		}
	}
}

// json.not_open_when: one condition holding makes the answer a date not open yet; a compiled site
// without it, or an answer that is not JSON, is not one.
func TestJSONNotOpenWhen(t *testing.T) {
	t.Parallel()
	sites, err := site.ParseSites([]byte(`
sites:
  - name: j
    requests: [{url: "http://x.kr/"}]
    format: json
    json: {rows: list, not_open_when: [{path: msg, equals: NOT_OPEN}, {path: code, equals: "E17"}]}
    fields: {course: {path: c}, round_date: {path: d}, tee_time: {path: t}}
`))
	if err != nil {
		t.Fatal(err)
	}
	j := sites[0].JSON
	for body, want := range map[string]bool{`{"msg":"NOT_OPEN"}`: true, `{"code":"E17","list":[]}`: true,
		`{"msg":"OK","list":[]}`: false, `<script>alert(1)</script>`: false} {
		if got := notOpen(j, []byte(body)); got != want {
			t.Errorf("%s: not open %v, want %v", body, got, want)
		}
	}
}
