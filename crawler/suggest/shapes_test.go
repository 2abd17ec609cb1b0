package suggest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

func TestLooksLikeClub(t *testing.T) {
	for in, want := range map[string]bool{"레이크 CC": true, "스카이밸리 GC": true, "오션뷰 골프클럽": true, "OUT": false, "동코스": false} {
		if looksLikeClub(in) != want {
			t.Errorf("looksLikeClub(%q) = %v", in, !want)
		}
	}
}

func TestDateAndTargetTemplates(t *testing.T) {
	day := time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul())
	targets := []site.Target{{"id": "101", "name": "레이크 CC"}, {"id": "102", "name": "힐스 CC"}}
	for _, tc := range []struct {
		name      string
		req       Request
		date      time.Time // zero: found in the request
		url, body string    // substrings of the template's URL and form or JSON
		dateFound bool
	}{
		{name: "ISO in the query", req: Request{Method: "GET", URL: "http://h/t?club=101&d=2026-12-05"},
			url: `http://h/t?club={{.Target.id}}&d={{.Date.Format "2006-01-02"}}`, dateFound: true},
		{name: "compact in a path segment, found without --date", req: Request{Method: "GET", URL: "http://h/tee/20261205/102"},
			url: `http://h/tee/{{.Date.Format "20060102"}}/{{.Target.id}}`, dateFound: true},
		{name: "dotted in a form", req: Request{Method: "POST", URL: "http://h/a", Body: "ymd=2026.12.05&gc=101"},
			body: `gc={{.Target.id}} ymd={{.Date.Format "2006.01.02"}}`, dateFound: true},
		{name: "12/05 only with --date, escaped in a query", date: day, req: Request{Method: "GET", URL: "http://h/a?md=12%2F05&t=0630"},
			url: `md={{.Date.Format "01/02" | urlquery}}&t=0630`, dateFound: true},
		{name: "without --date 1205 is not a date", req: Request{Method: "GET", URL: "http://h/a?md=1205&y=2026"},
			url: `http://h/a?md=1205&y=2026`},
		{name: "the play date's month beside it (issue 49 item 5)", req: Request{Method: "GET", URL: "http://h/a?selYM=202612&selDate=20261205"},
			url: `selYM={{.Date.Format "200601"}}&selDate={{.Date.Format "20060102"}}`, dateFound: true},
		{name: "a month-first date with its year", date: day, req: Request{Method: "GET", URL: "http://h/a?calDate=12%2F05%2F2026&d2=12-05-2026"},
			url: `calDate={{.Date.Format "01/02/2006" | urlquery}}&d2={{.Date.Format "01-02-2006"}}`, dateFound: true},
		{name: "a JSON body, its number id a string", req: Request{Method: "POST", URL: "http://h/a", Body: `{"clubId":101,"date":"20261205","n":{"x":"{{"}}`},
			body: `clubId={{.Target.id}} date={{.Date.Format "20060102"}} n=map[x:{{"{{"}}]`, dateFound: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			date := tc.date
			if date.IsZero() {
				date, _, _ = findDate(tc.req)
			}
			tm, err := makeTemplate(tc.req, date, !tc.date.IsZero(), targets, func(string, ...any) {})
			if err != nil {
				t.Fatal(err)
			}
			var body []string
			for _, k := range sortedKeys(tm.req.Form) {
				body = append(body, k+"="+tm.req.Form[k])
			}
			for _, k := range sortedKeys(tm.req.JSON) {
				body = append(body, k+"="+fmtAny(tm.req.JSON[k]))
			}
			if !strings.Contains(tm.req.URL, tc.url) || !strings.Contains(strings.Join(body, " "), tc.body) || tm.dateFound != tc.dateFound {
				t.Errorf("url %q body %q dateFound %v; want %q, %q, %v", tm.req.URL, strings.Join(body, " "), tm.dateFound, tc.url, tc.body, tc.dateFound)
			}
			st := site.SiteSpec{Name: "x", Requests: []site.RequestTemplate{tm.req}, Targets: targets, Row: "tr",
				Fields: site.Fields{"course": {Value: "c"}, "round_date": {Value: "d"}, "tee_time": {Selector: "td"}}}
			if _, err := st.Compile(); err != nil {
				t.Errorf("the template does not validate: %v", err)
			}
		})
	}
}

func fmtAny(v any) string {
	if m, ok := v.(map[string]any); ok {
		var parts []string
		for _, k := range sortedKeys(m) {
			parts = append(parts, k+":"+fmtAny(m[k]))
		}
		return "map[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprint(v)
}

func TestCredentialHeadersAreDropped(t *testing.T) {
	req := Request{Method: "GET", URL: "http://h/a?d=2026-12-05", Header: http.Header{}}
	for _, h := range []string{"Cookie", "Authorization", "X-Csrf-Token", "X-Xsrf-Token", "X-Session-Id", "X-Api-Key", "Proxy-Authorization"} {
		req.Header.Set(h, "secret-"+h)
	}
	req.Header.Set("X-Requested-With", "XMLHttpRequest")
	req.Header.Set("User-Agent", "Mozilla/5.0")
	tm, err := makeTemplate(req, time.Time{}, false, nil, func(string, ...any) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(tm.dropped) != 7 || len(tm.secret) != 7 {
		t.Errorf("dropped %v; want the 7 credential headers", tm.dropped)
	}
	for k, v := range tm.req.Headers {
		if strings.Contains(v, "secret") || k == "User-Agent" {
			t.Errorf("header %s: %s reached the template", k, v)
		}
	}
	if tm.req.Headers["X-Requested-With"] != "XMLHttpRequest" {
		t.Errorf("X-Requested-With was not kept: %v", tm.req.Headers)
	}
}
