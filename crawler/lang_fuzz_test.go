package crawler

import (
	"net/url"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// FuzzLangPages: any bytes as a page of the sites language's shapes (a table read as its grid,
// grouped JSON rows, a sale price else the list price, a capturing request's answer) never panic,
// a page either fails or gives rows, and every listing of the page's date has a valid play_date
// and tee_time.
func FuzzLangPages(f *testing.F) {
	f.Add([]byte(`<table class="time_table"><tbody><tr><td rowspan="2">동코스</td><td>06:00</td><td>18홀</td><td>150,000원</td><td>4명</td></tr>` +
		`<tr><td>06:08</td><td>18홀</td><td colspan="0">150,000원</td></tr><tr><td rowspan="70000">x</td></tr></tbody></table>`))
	f.Add([]byte(`{"status":"success","count":2,"dates":{"2026-12-05":[{"courseNm":"동","times":[{"teeTm":"06:00","greenFee":150000,"player":4}]}],` +
		`"2026-12-06":[{"courseNm":"서","times":[{"teeTm":"07:00","greenFee":null,"player":3}]}]}}`))
	f.Add([]byte(`{"rtnCode":"0000","rows":[{"BK_COS_NM":"샤인","BK_TIME":"0630","BK_B_CHARGE_NM":"220,000","BK_S_CHARGE_NM":""},` +
		`{"BK_COS_NM":"포도","BK_TIME":"0638","BK_B_CHARGE_NM":"220,000","BK_S_CHARGE_NM":"0"}]}`))
	f.Add([]byte(`<form id="rsvForm"><input type="hidden" name="_csrf" value="0123abcd"></form><a class="menu" href="/sid/real_list.asp?sid=ab12">`))
	var sites []*site.Site
	for _, name := range []string{"lang-rowspan", "lang-sid", "lang-grouped", "lang-sale-else-list"} {
		sites = append(sites, langSite(f, name, "http://127.0.0.1:8089", 0))
	}
	vars := &site.RequestVars{Date: time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul()), Target: site.Target{"id": "137", "name": "레이크 CC"}}
	base, _ := url.Parse("http://127.0.0.1:8089/x")
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, st := range sites {
			var rows []site.RawRow
			var err error
			if st.Format == site.FormatJSON {
				rows, err = parseJSONPage(st, body, t0)
			} else {
				var pg page
				pg, err = parsePage(st, base, body, "", t0)
				rows = pg.Rows
			}
			if err != nil {
				if len(rows) != 0 {
					t.Fatalf("%s: a failed page with %d rows", st.Name, len(rows))
				}
				continue
			}
			for _, r := range rows {
				lr := st.FromRequest(r, vars, base.String(), sourcesAt)
				if lr.Err != nil || lr.OtherDate {
					continue
				}
				if lr.Listing.PlayDate != "2026-12-05" || len(lr.Listing.TeeTime) != 5 {
					t.Errorf("%s: listing %+v from %s", st.Name, lr.Listing, r)
				}
			}
		}
		for _, rt := range sites[1].Requests[:1] {
			if got, err := readCaptures(body, rt.Capture); err == nil && got["sid"] == "" {
				t.Errorf("a capture without error and without a value: %v", got)
			}
		}
	})
}
