package crawler

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// TestEveryCellReachesTheRawRow: a page showing every cell of the cell table (site.Cells), each
// mapped by a selector, fills each into the raw row and its log form (the cell table's own tests,
// in crawler/site, start from the raw row).
func TestEveryCellReachesTheRawRow(t *testing.T) {
	t.Parallel()
	var yml, page strings.Builder
	yml.WriteString("sites:\n  - name: cells\n    start_urls: [\"http://127.0.0.1:8089/x\"]\n    row: tr.r\n    fields:\n")
	page.WriteString(`<table><tr class="r">`)
	for _, c := range site.Cells() {
		fmt.Fprintf(&yml, "      %s: {selector: td.%s}\n", c.Name, c.Name)
		fmt.Fprintf(&page, `<td class="%s">text of %s</td>`, c.Name, c.Name)
	}
	page.WriteString(`</tr></table>`)
	sites, err := site.ParseSites([]byte(yml.String()))
	if err != nil {
		t.Fatalf("a sites file with every cell key: %v\n%s", err, yml.String())
	}
	st := sites[0]
	base, _ := url.Parse("http://127.0.0.1:8089/x")
	pg, err := parsePage(st, base, []byte(page.String()), "", t0)
	if err != nil || len(pg.Rows) != 1 {
		t.Fatalf("parse: %d rows, %v", len(pg.Rows), err)
	}
	row := pg.Rows[0]
	for _, c := range st.RowCells(&row) {
		if want := "text of " + c.Name; *c.Dst != want || !strings.Contains(row.String(), fmt.Sprintf("=%q", want)) {
			t.Errorf("%q is not the raw row's %s: %s", want, c.Name, row)
		}
	}
	if len(row.Missing) > 0 {
		t.Errorf("cells missing from the page's row: %v", row.Missing)
	}
}

// FuzzParsePage: any bytes as a page never panic, and every listing it yields has a valid
// play_date and tee_time.
func FuzzParsePage(f *testing.F) {
	for _, name := range []string{"tee_list_p1.html", "tee_list_p2.html"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`<tr class="tee-row"><td class="course">x</td><td class="date">2/29(목)</td><td class="time">7시 반</td></tr>`))
	sites, err := site.LoadSites(filepath.Join("..", site.DefaultSitesFile))
	if err != nil {
		f.Fatal(err)
	}
	st := sites[0]
	base, _ := url.Parse("http://127.0.0.1:8089/tee?date=20251206&page=1")
	f.Add(eucKR(f, `<meta charset="euc-kr"><table class="tee-list"><tr class="tee-row"><td class="course">남서울 CC</td><td class="date">12/06(토)</td><td class="time">07:00</td></tr></table>`))
	f.Add([]byte("<table class=\"tee-list\"><tr class=\"tee-row\"><td class=\"course\">\u1105\u1166\u200e CC</td><td class=\"date\">12/06</td><td class=\"time\">07:00</td></tr></table>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		body, dec := decodeBody(st, "text/html", body)
		pg, err := parsePage(st, base, body, "", t0)
		if err != nil || checkDecoded(st, pg.Rows, dec) != nil {
			return
		}
		for _, row := range pg.Rows {
			l, _, err := st.Listing(row, base.String(), t0)
			if err != nil {
				continue
			}
			if _, err := time.Parse("2006-01-02", l.PlayDate); err != nil {
				t.Errorf("play_date %q from %s", l.PlayDate, row)
			}
			if _, err := time.Parse("15:04", l.TeeTime); err != nil || len(l.TeeTime) != 5 {
				t.Errorf("tee_time %q from %s", l.TeeTime, row)
			}
			if l.CourseName == "" || strings.ContainsRune(l.CourseName, '\ufffd') || l.CourseName != site.CleanText(l.CourseName) {
				t.Errorf("course %q from %s", l.CourseName, row)
			}
		}
		for _, link := range pg.Links {
			if u, err := url.Parse(link); err != nil || (u.Scheme != "http" && u.Scheme != "https") {
				t.Errorf("link %q is not an absolute http(s) URL", link)
			}
		}
	})
}
