package site

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
		reqs, _, err := s.PageRequests(time.Date(2026, 12, 1, 10, 0, 0, 0, Seoul()))
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
