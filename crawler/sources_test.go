package crawler

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
)

// fixture returns the bytes of testdata/sources/name.
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sources", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sourceSite parses one site of YAML with {{BASE}} replaced by base, made test-fast.
func sourceSite(t *testing.T, base, yml string) *site.Site {
	t.Helper()
	sites, err := site.ParseSites([]byte(strings.ReplaceAll(yml, "{{BASE}}", base)))
	if err != nil {
		t.Fatal(err)
	}
	return fast(t, sites[0])
}

// request is what a fixture server saw.
type request struct {
	Method, URI, Body, ContentType string
}

// sourceServer serves fixtures by route; routes see the request and answer what they like. It
// records every request (robots.txt aside).
type sourceServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []request
}

func newSourceServer(t *testing.T, route func(w http.ResponseWriter, r *http.Request, body string)) *sourceServer {
	s := &sourceServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
			return
		}
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, request{r.Method, r.URL.RequestURI(), string(b), r.Header.Get("Content-Type")})
		s.mu.Unlock()
		route(w, r, string(b))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sourceServer) requests() []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]request(nil), s.seen...)
}

// listingRows renders listings as one comparable line each.
func listingRows(ls []events.Listing) []string {
	var out []string
	for _, l := range ls {
		out = append(out, fmt.Sprintf("%s|%s|%s|%s|%s|%v|%v", l.CourseName, l.CoursePart, l.PlayDate, l.RoundDate, l.TeeTime, deref(l.PriceKRW), deref(l.Players)))
	}
	return out
}

func checkRows(t *testing.T, got []events.Listing, want ...string) {
	t.Helper()
	g := listingRows(got)
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Errorf("listings:\n%s\nwant:\n%s", strings.Join(g, "\n"), strings.Join(want, "\n"))
	}
}

const jsonGetSite = `
sites:
  - name: api-get
    targets:
      - {id: 137, name: 레이크&힐스 CC}
    requests:
      - url: '{{BASE}}/api/getTeeTimeList?club={{.Target.id}}&roundDay={{.Date.Format "2006-01-02"}}'
        headers: {Accept: application/json, X-Club: '{{.Target.id}}'}
    format: json
    json:
      rows: data.teeTimeList
      success: {path: resultCode, equals: "0000"}
      empty_when:
        - {path: data, is: "null"}
    fields:
      course: {path: course_name}
      course_part: {path: course_part}
      round_date: {value: '{{.Date.Format "01/02"}}'}
      tee_time: {path: teetime_time}
      price: {path: min_cost}
      players: {path: round_people}
`

// crawled on 2026-12-01, the play date 2026-12-05 is four days ahead.
var sourcesAt = time.Date(2026, 12, 1, 10, 0, 0, 0, site.Seoul())

func TestJSONGetFixture(t *testing.T) {
	t.Parallel()
	body := map[string]string{"2026-12-01": "json_get_soldout.json", "2026-12-02": "json_get.json"}
	srv := newSourceServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("club") != "137" || r.Header.Get("X-Club") != "137" {
			http.Error(w, "bad club", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(fixture(t, body[r.URL.Query().Get("roundDay")]))
	})
	st := recompiled(t, sourceSite(t, srv.URL, jsonGetSite), func(s *site.SiteSpec) { s.DaysAhead = 1 })
	rec := newRecorder()
	res, err := Collect(t.Context(), st, sourcesAt, rec.deps(t))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Pages != 2 || res.Rejected != 1 || rec.rejected[site.RejectBadTeeTime] != 1 {
		t.Fatalf("complete %v pages %d rejected %d %v failed %v", res.Complete, res.Pages, res.Rejected, rec.rejected, res.FailedPages)
	}
	// Entities decoded, numbers and strings both read, 06:37:00 and a null price; play_date is the
	// requested date (no inference), round_date the value as rendered.
	checkRows(t, res.Listings,
		"레이크&힐스 CC|IN|2026-12-02|12/02|06:37|140000|4",
		"레이크&힐스 CC|IN|2026-12-02|12/02|11:30|<nil>|3",
		"레이크&힐스 CC|OUT|2026-12-02|12/02|06:30|130000|4",
	)
	if got := res.Listings[0].URL; got != srv.URL+"/api/getTeeTimeList?club=137&roundDay=2026-12-02" {
		t.Errorf("listing URL %q", got)
	}
}

func TestJSONGetBadShapesFailThePage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ fixture, want string }{
		{"json_get_changed.json", `rows path "data.teeTimeList" is absent, not an array`},
		{"json_get_renamed_field.json", `has no tee_time at path "teetime_time"`},
		{"json_get_error.json", `success condition resultCode equals "0000" does not hold (the value is "9001")`},
		{"not json", "the response is not JSON"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			t.Parallel()
			srv := newSourceServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
				if strings.HasSuffix(tc.fixture, ".json") {
					_, _ = w.Write(fixture(t, tc.fixture))
					return
				}
				fmt.Fprint(w, "<html>maintenance</html>")
			})
			site := sourceSite(t, srv.URL, jsonGetSite)
			var reports []PageReport
			var mu sync.Mutex
			deps := newRecorder().deps(t)
			deps.OnPage = func(p PageReport) { mu.Lock(); reports = append(reports, p); mu.Unlock() }
			res, err := Collect(t.Context(), site, sourcesAt, deps)
			if err != nil {
				t.Fatal(err)
			}
			if res.Complete || len(res.FailedPages) != 1 || len(res.Listings) != 0 {
				t.Fatalf("complete %v failed %v listings %d: a changed answer must fail the page", res.Complete, res.FailedPages, len(res.Listings))
			}
			if len(reports) != 1 || reports[0].Err == nil || !strings.Contains(reports[0].Err.Error(), tc.want) {
				t.Fatalf("reports %+v, want an error containing %q", reports, tc.want)
			}
			want := PageSet{PlayDate: "2026-12-01"}
			if len(res.FailedSets) != 1 || res.FailedSets[0] != want {
				t.Errorf("failed sets %+v, want %+v", res.FailedSets, want)
			}
		})
	}
}

const jsonPostSite = `
sites:
  - name: api-post
    targets:
      - {id: 137, name: 레이크 CC}
      - {id: 138, name: 힐스 CC}
    requests:
      - method: POST
        url: '{{BASE}}/api/v2/teetime/list'
        json: {clubId: '{{.Target.id}}', date: '{{.Date.Format "20060102"}}', page: 1, filters: {holes: 18}}
    format: json
    json:
      rows: list
      empty_when:
        - {path: msg, equals: NO_DATA}
    fields:
      course: {value: '{{.Target.name}}'}
      course_part: {path: CourseName}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {path: bookTime}
      price: {path: greenFeeDC}
      players: {path: visitorCnt}
`

func TestJSONPostFixture(t *testing.T) {
	t.Parallel()
	srv := newSourceServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
		var req struct {
			ClubID string `json:"clubId"`
			Date   string `json:"date"`
		}
		if r.Method != http.MethodPost || json.Unmarshal([]byte(body), &req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if req.ClubID == "138" {
			_, _ = w.Write(fixture(t, "json_post_empty.json"))
			return
		}
		_, _ = w.Write(fixture(t, "json_post.json"))
	})
	site := sourceSite(t, srv.URL, jsonPostSite)
	res, err := Collect(t.Context(), site, sourcesAt, newRecorder().deps(t))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete || res.Pages != 2 || res.Rejected != 0 {
		t.Fatalf("complete %v pages %d rejected %d failed %v", res.Complete, res.Pages, res.Rejected, res.FailedPages)
	}
	// 0630 and a number 1205 as times, "130000", "" and 99000.0 as prices.
	checkRows(t, res.Listings,
		"레이크 CC|IN|2026-12-01|2026-12-01|07:14|<nil>|3",
		"레이크 CC|IN|2026-12-01|2026-12-01|12:05|99000|4",
		"레이크 CC|OUT|2026-12-01|2026-12-01|06:30|130000|4",
	)
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("requests %+v", reqs)
	}
	for _, r := range reqs {
		if r.ContentType != "application/json" || !strings.Contains(r.Body, `"date":"20261201"`) || !strings.Contains(r.Body, `"filters":{"holes":18}`) {
			t.Errorf("request %+v", r)
		}
	}
}

const clubPageSite = `
sites:
  - name: club-html
    targets:
      - {code: 137, name: 레이크 CC}
    days_ahead: 1
    requests:
      - url: '{{BASE}}/list.asp?club_code={{.Target.code}}&book_date={{.Date.Format "20060102"}}'
    row: "#resList tr.res"
    fields:
      course: {value: '{{.Target.name}}'}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {selector: "td:nth-child(1)"}
      price: {selector: "td:nth-child(2)"}
      players: {value: "4"}
`

func TestClubPageFixture(t *testing.T) {
	t.Parallel()
	srv := newSourceServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		if r.URL.Query().Get("book_date") == "20261202" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(fixture(t, "club_list.html"))
	})
	site := sourceSite(t, srv.URL, clubPageSite)
	res, err := Collect(t.Context(), site, sourcesAt, newRecorder().deps(t))
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, res.Listings,
		"레이크 CC||2026-12-01|2026-12-01|06:30|130000|4",
		"레이크 CC||2026-12-01|2026-12-01|06:37|130000|4",
		"레이크 CC||2026-12-01|2026-12-01|11:30|<nil>|4",
	)
	// The failed date withholds closes of that club and date only.
	want := PageSet{PlayDate: "2026-12-02", Course: "레이크 CC"}
	if res.Complete || len(res.FailedSets) != 1 || res.FailedSets[0] != want {
		t.Fatalf("complete %v failed sets %+v, want %+v", res.Complete, res.FailedSets, want)
	}
}
