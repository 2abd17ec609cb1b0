package crawler

import (
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// FuzzCheckPath: any string is accepted or rejected without a panic, and an accepted path reads any
// document without one.
func FuzzCheckPath(f *testing.F) {
	for _, p := range []string{"data.teeTimeList", "list", "list.#.bookTime", `a\.b`, "data.#(id==137).list", "a..b", "@reverse", "a|b", "a(", ".a", "a."} {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if CheckPath(p) != nil {
			return
		}
		_ = gjson.Get(`{"data":{"teeTimeList":[{"a":1}]},"list":[1,"x",null]}`, p)
	})
}

// FuzzParseJSONPage: any bytes as the answer of each shipped JSON site never panic, a page either
// fails or gives rows, and every listing made from them has a valid play_date and tee_time.
func FuzzParseJSONPage(f *testing.F) {
	for _, name := range []string{"json_get.json", "json_post.json", "json_post_empty.json", "json_get_changed.json",
		"json_get_renamed_field.json", "json_get_error.json", "json_get_soldout.json"} {
		f.Add(fixture(f, name))
	}
	f.Add([]byte(`{"list":[{"bookTime":630,"greenFeeDC":1e3,"visitorCnt":"4~5"}]}`))
	f.Add(eucKR(f, `{"list":[{"bookTime":"0630","CourseName":"서코스","greenFeeDC":"130,000원","visitorCnt":"4명"}],"msg":"OK"}`))
	f.Add([]byte("{\"list\":[{\"bookTime\":\"0630\",\"CourseName\":\"\u200e\u1109\u1165 OUT\"}]}"))
	var sites []*Site
	for _, name := range []string{"sim-api-get", "sim-api-post"} {
		sites = append(sites, shippedSite(f, name, "http://127.0.0.1:8089", 0))
	}
	vars := &RequestVars{Date: time.Date(2026, 12, 5, 0, 0, 0, 0, Seoul()), Target: Target{"id": "137", "name": "레이크 CC"}}
	f.Fuzz(func(t *testing.T, body []byte) {
		for i := range sites {
			rows, err := parseJSONPage(sites[i], body)
			if err != nil {
				if len(rows) != 0 {
					t.Fatalf("%s: a failed page with %d rows", sites[i].Name, len(rows))
				}
				continue
			}
			for _, r := range rows {
				lr := sites[i].fromRequest(r, vars, "http://127.0.0.1:8089/x", sourcesAt)
				if lr.Err != nil {
					continue
				}
				if lr.Listing.PlayDate != "2026-12-05" || len(lr.Listing.TeeTime) != 5 {
					t.Errorf("%s: listing %+v from %s", sites[i].Name, lr.Listing, r)
				}
			}
		}
	})
}

// FuzzRequestTemplates: any URL template, form value and target value either fail validation or
// expand into http(s) URLs with a host, and a body that is form-encoded or valid JSON.
func FuzzRequestTemplates(f *testing.F) {
	f.Add(`http://x.kr/list?club={{.Target.id}}&d={{.Date.Format "20060102"}}`, `{{.Target.name}}`, "137")
	f.Add(`http://x.kr/{{.Target.id | urlquery}}`, `{{printf "%q" .Target.id}}`, `a"b&c=d`)
	f.Add(`{{.Nope}}`, `{{`, "")
	f.Fuzz(func(t *testing.T, urlTmpl, value, id string) {
		if len(urlTmpl) > 512 || len(value) > 512 || strings.Contains(urlTmpl+value, "{{template") {
			return
		}
		spec := SiteSpec{Name: "f", Targets: []Target{{"id": id, "name": "레이크 CC"}}, DaysAhead: 1, Row: "tr",
			Requests: []RequestTemplate{
				{URL: urlTmpl},
				{Method: "POST", URL: "http://x.kr/p", Form: map[string]string{"v": value}},
				{Method: "POST", URL: "http://x.kr/j", JSON: map[string]any{"v": value, "n": 1}},
			},
			Fields: Fields{"course": {Value: value}, "round_date": {Value: `{{.Date.Format "2006-01-02"}}`}, "tee_time": {Selector: "td"}}}
		s, err := spec.Compile()
		if err != nil {
			return
		}
		reqs, _, err := s.pageRequests(sourcesAt)
		if err != nil {
			return // a target-dependent failure is reported at crawl time
		}
		for _, r := range reqs {
			if checkURL(r.URL) != nil {
				t.Fatalf("URL %q", r.URL)
			}
			if strings.HasSuffix(r.URL, "/j") && !gjson.ValidBytes(r.Body) {
				t.Fatalf("JSON body %q", r.Body)
			}
		}
	})
}
