package crawler

import (
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

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
	var sites []*site.Site
	for _, name := range []string{"sim-api-get", "sim-api-post"} {
		sites = append(sites, shippedSite(f, name, "http://127.0.0.1:8089", 0))
	}
	vars := &site.RequestVars{Date: time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul()), Target: site.Target{"id": "137", "name": "레이크 CC"}}
	f.Fuzz(func(t *testing.T, body []byte) {
		for i := range sites {
			rows, err := parseJSONPage(sites[i], body, t0)
			if err != nil {
				if len(rows) != 0 {
					t.Fatalf("%s: a failed page with %d rows", sites[i].Name, len(rows))
				}
				continue
			}
			for _, r := range rows {
				lr := sites[i].FromRequest(r, vars, "http://127.0.0.1:8089/x", sourcesAt)
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
