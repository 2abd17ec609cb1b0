package crawler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/korean"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// eucKR encodes s in EUC-KR (windows-949), as Korean club sites do.
func eucKR(t testing.TB, s string) []byte {
	t.Helper()
	b, err := korean.EUCKR.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// slotRows renders rows shaped like a club's table: course, time, price, players cells.
func slotRows(names []string, times []string) string {
	var b strings.Builder
	for i, n := range names {
		fmt.Fprintf(&b, `<tr class="slot"><td class="course">%s</td><td class="time">%s</td><td class="price">130,000</td><td class="players">4</td></tr>`, n, times[i])
	}
	return b.String()
}

// slotPage is an HTML page of slotRows with head as its <head> contents.
func slotPage(head string, names ...string) string {
	times := make([]string, len(names))
	for i := range names {
		times[i] = fmt.Sprintf("07:0%d", i)
	}
	return "<html><head>" + head + "</head><body><table>" + slotRows(names, times) + "</table></body></html>"
}

const encHTMLSite = `
sites:
  - name: enc
    requests:
      - url: '{{BASE}}/page?date={{.Date.Format "2006-01-02"}}'
    row: tr.slot
    fields:
      course: {selector: td.course}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {selector: td.time}
      price: {selector: td.price}
      players: {selector: td.players}
`

const encJSONSite = `
sites:
  - name: enc
    targets:
      - {id: 1, name: 레이크 CC}
    requests:
      - url: '{{BASE}}/api?date={{.Date.Format "2006-01-02"}}&club={{.Target.id}}'
    format: json
    json: {rows: list}
    fields:
      course: {path: course}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {path: time}
      price: {path: price}
`

// encJSONTargetSite takes its course from the target: only the price cell carries Korean text.
var encJSONTargetSite = strings.Replace(encJSONSite, "course: {path: course}", "course: {value: '{{.Target.name}}'}", 1)

// jsonNumbers is a JSON answer with numeric prices, Korean only in the names.
func jsonNumbers(t testing.TB, names ...string) string {
	t.Helper()
	var rows []map[string]any
	for i, n := range names {
		rows = append(rows, map[string]any{"course": n, "time": fmt.Sprintf("07:0%d", i), "price": 130000})
	}
	b, err := json.Marshal(map[string]any{"list": rows})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// jsonList is a JSON answer of courses with a "130,000원" price.
func jsonList(t testing.TB, names ...string) string {
	t.Helper()
	var rows []map[string]any
	for i, n := range names {
		rows = append(rows, map[string]any{"course": n, "time": fmt.Sprintf("07:0%d", i), "price": "130,000원"})
	}
	b, err := json.Marshal(map[string]any{"list": rows})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// encCase is one answer of a page (content type and the page as text, encoded or not) and what
// the crawl must read from it.
type encCase struct {
	name        string
	site        string // YAML with {{BASE}}
	charset     string // the site's charset: key, "" for none
	contentType string
	body        []byte
	want        []string // listingRows; nil: the page fails as undecodable
}

func encCases(t *testing.T) []encCase {
	lake := []string{"레이크 CC|" + "|2026-12-01|2026-12-01|07:00|130000|4", "파인힐스 CC||2026-12-01|2026-12-01|07:01|130000|4"}
	seoul := []string{"남서울 CC||2026-12-01|2026-12-01|07:00|130000|4", "서서울 CC||2026-12-01|2026-12-01|07:01|130000|4"}
	lakeJSON := []string{"레이크 CC||2026-12-01|2026-12-01|07:00|130000|<nil>", "파인힐스 CC||2026-12-01|2026-12-01|07:01|130000|<nil>"}
	cases := []encCase{
		{name: "meta charset only", site: encHTMLSite, contentType: "text/html",
			body: eucKR(t, slotPage(`<meta charset="euc-kr">`, "남서울 CC", "서서울 CC")), want: seoul},
		{name: "meta http-equiv only", site: encHTMLSite, contentType: "text/html",
			body: eucKR(t, slotPage(`<meta http-equiv="Content-Type" content="text/html; charset=euc-kr">`, "레이크 CC", "파인힐스 CC")), want: lake},
		{name: "meta alias ms949", site: encHTMLSite, contentType: "text/html",
			body: eucKR(t, slotPage(`<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=ms949">`, "레이크 CC", "파인힐스 CC")), want: lake},
		{name: "no declaration at all", site: encHTMLSite, contentType: "text/html",
			body: eucKR(t, slotPage("", "레이크 CC", "파인힐스 CC"))},
		{name: "utf-8 BOM beats the header", site: encHTMLSite, contentType: "text/html; charset=iso-8859-1",
			body: []byte("\ufeff" + slotPage("", "레이크 CC", "파인힐스 CC")), want: lake},
		{name: "site charset overrides a wrong header", site: encHTMLSite, charset: "euc-kr", contentType: "text/html; charset=utf-8",
			body: eucKR(t, slotPage("", "레이크 CC", "파인힐스 CC")), want: lake},
		{name: "site charset alias overrides a wrong meta", site: encHTMLSite, charset: "CP949", contentType: "text/html",
			body: eucKR(t, slotPage(`<meta charset="utf-8">`, "레이크 CC", "파인힐스 CC")), want: lake},
		{name: "json euc-kr without charset", site: encJSONSite, contentType: "application/json",
			body: eucKR(t, jsonList(t, "레이크 CC", "파인힐스 CC"))},
		{name: "json euc-kr without charset, numeric prices", site: encJSONSite, contentType: "application/json",
			body: eucKR(t, jsonNumbers(t, "남서울 CC", "서서울 CC"))},
		{name: "json euc-kr without charset, korean only in the price", site: encJSONTargetSite, contentType: "application/json",
			body: eucKR(t, jsonList(t, "x", "y"))},
		{name: "json euc-kr declared by the site", site: encJSONSite, charset: "euc-kr", contentType: "application/json",
			body: eucKR(t, jsonList(t, "레이크 CC", "파인힐스 CC")), want: lakeJSON},
		{name: "json euc-kr in the header", site: encJSONSite, contentType: "application/json; charset=EUC-KR",
			body: eucKR(t, jsonList(t, "레이크 CC", "파인힐스 CC")), want: lakeJSON},
		{name: "json utf-8 without charset", site: encJSONSite, contentType: "application/json",
			body: []byte(jsonList(t, "레이크 CC", "파인힐스 CC")), want: lakeJSON},
	}
	// The labels Korean servers send that the WHATWG list lacks, and the ones it has.
	for _, label := range []string{"cp949", "CP949", "ms949", "x-windows-949", "uhc", "euc_kr", "EUC_KR", "euc-kr", "ks_c_5601-1987", "windows-949", "ksc5601"} {
		cases = append(cases, encCase{name: "header " + label, site: encHTMLSite, contentType: "text/html; charset=" + label,
			body: eucKR(t, slotPage("", "레이크 CC", "파인힐스 CC")), want: lake})
	}
	return cases
}

// TestPagesDecodeAsBrowsersDo: a page is decoded, as a browser decodes it,
// by its BOM, its HTTP charset (the Korean aliases included), its <meta> declaration or the
// site's charset key; a page that still has U+FFFD in a cell fails whole (undecodable), it never
// publishes garbage names nor drops its rows one by one.
func TestPagesDecodeAsBrowsersDo(t *testing.T) {
	t.Parallel()
	for _, tc := range encCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newSourceServer(t, func(w http.ResponseWriter, _ *http.Request, _ string) {
				w.Header().Set("Content-Type", tc.contentType)
				_, _ = w.Write(tc.body)
			})
			yml := tc.site
			if tc.charset != "" {
				yml = strings.Replace(yml, "    requests:", "    charset: "+tc.charset+"\n    requests:", 1)
			}
			site := sourceSite(t, srv.URL, yml)
			logs := &testkit.SyncBuffer{}
			rec := newRecorder()
			deps := rec.deps(t)
			deps.Logger = slog.New(slog.NewJSONHandler(logs, nil))
			var mu sync.Mutex
			var reports []PageReport
			deps.OnPage = func(p PageReport) { mu.Lock(); reports = append(reports, p); mu.Unlock() }
			res, err := Collect(t.Context(), site, sourcesAt, deps)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != nil {
				if !res.Complete || res.Rejected != 0 {
					t.Errorf("complete %v rejected %d %v failed %v", res.Complete, res.Rejected, rec.rejected, res.FailedPages)
				}
				checkRows(t, res.Listings, tc.want...)
				return
			}
			if res.Complete || len(res.FailedPages) != 1 || len(res.Listings) != 0 || res.Rejected != 0 {
				t.Fatalf("complete %v failed %v rejected %d listings %q: an undecodable page must fail whole",
					res.Complete, res.FailedPages, res.Rejected, listingRows(res.Listings))
			}
			if rec.failed[FailUndecodable] != 1 || len(rec.failed) != 1 {
				t.Errorf("failed pages counted %v, want one undecodable", rec.failed)
			}
			if len(res.FailedSets) != 1 || res.FailedSets[0].PlayDate != "2026-12-01" {
				t.Errorf("failed sets %+v, want the page's date", res.FailedSets)
			}
			if len(reports) != 1 || !strings.Contains(fmt.Sprint(reports[0].Err), "undecodable") {
				t.Errorf("reports %+v, want an undecodable error", reports)
			}
			lines := logs.Lines(`"reason":"undecodable"`)
			if len(lines) != 1 || !strings.Contains(lines[0], `"site":"enc"`) || !strings.Contains(lines[0], srv.URL) {
				t.Errorf("log lines with reason undecodable: %q\nall: %s", lines, logs.String())
			}
		})
	}
}

// FuzzDecodeBody: any Content-Type and body decode without a panic to valid UTF-8; valid UTF-8
// that declares nothing comes back unchanged; a site's charset key always wins.
func FuzzDecodeBody(f *testing.F) {
	f.Add("text/html", eucKR(f, slotPage(`<meta charset="euc-kr">`, "남서울 CC")))
	f.Add("text/html", eucKR(f, slotPage(`<meta http-equiv="Content-Type" content="text/html; charset=ms949">`, "레이크 CC")))
	f.Add("text/html; charset=x-windows-949", eucKR(f, "레이크 CC"))
	f.Add("application/json", eucKR(f, `{"list":[{"course":"레이크 CC"}]}`))
	f.Add("text/html;charset=\"UTF-16LE\"", []byte("\xff\xfea\x00b\x00"))
	f.Add("text/html", []byte("\ufeff<meta charset=utf-16>레이크"))
	f.Add("text/html", []byte(`<meta charset="replacement"><meta charset=`))
	html, json := site.Site{}, site.Site{SiteSpec: site.SiteSpec{Format: site.FormatJSON}}
	forced := site.Site{SiteSpec: site.SiteSpec{Charset: "cp949"}}
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		for _, s := range []*site.Site{&html, &json, &forced} {
			out, d := decodeBody(s, contentType, body)
			if !utf8.Valid(out) {
				t.Fatalf("%+v %q: decoded %q (%s) is not UTF-8", s, contentType, out, d)
			}
			if s == &forced && d.By != "site" {
				t.Fatalf("the charset key lost to %s", d)
			}
		}
		if utf8.Valid(body) && !strings.Contains(strings.ToLower(string(body)+contentType), "charset") && !bytes.HasPrefix(body, []byte("\ufeff")) {
			if out, _ := decodeBody(&json, contentType, body); !bytes.Equal(out, body) {
				t.Fatalf("undeclared UTF-8 %q changed to %q", body, out)
			}
		}
	})
}

// A login answer is decoded like a page before login_page's contains is looked for: an EUC-KR
// login page that names itself in Korean is still recognised (wrong credentials fail the crawl).
func TestLoginPageIsDecoded(t *testing.T) {
	t.Parallel()
	for _, contentType := range []string{"text/html; charset=euc-kr", "text/html; charset=cp949", "text/html"} {
		srv := newSourceServer(t, func(w http.ResponseWriter, _ *http.Request, _ string) {
			w.Header().Set("Content-Type", contentType)
			_, _ = w.Write(eucKR(t, `<html><head><meta charset="euc-kr"></head><body><h1>회원 로그인</h1></body></html>`))
		})
		yml := strings.Replace(encHTMLSite, "    requests:", `    login:
      url: '{{BASE}}/login'
      form: {pw: '{{.Credentials.password}}'}
      credentials: {password: CLUB_PASSWORD}
      login_page: {contains: "회원 로그인"}
    requests:`, 1)
		deps := newRecorder().deps(t)
		deps.Getenv = func(string) string { return "wrong" }
		res, err := Collect(t.Context(), sourceSite(t, srv.URL, yml), sourcesAt, deps)
		if err != nil {
			t.Fatal(err)
		}
		if res.Complete || len(srv.requests()) != 1 {
			t.Errorf("%s: complete %v after %d requests; want the login refused and no page fetched", contentType, res.Complete, len(srv.requests()))
		}
	}
}
