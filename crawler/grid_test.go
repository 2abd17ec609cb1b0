package crawler

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// A table read as its rendered grid: a rowspan cell belongs to every row it spans, within its row
// group only (rowspan="0": to the group's end), a colspan cell to every column it spans, and a
// row that is not in a table has no grid.
func TestGridRows(t *testing.T) {
	t.Parallel()
	page := `<table class="t">
<thead><tr><th rowspan="2">코스</th><th colspan="2">시간</th></tr><tr><th>부</th><th>분</th></tr></thead>
<tbody>
<tr class="r"><td rowspan="3">밸리</td><td>06:00</td><td colspan="2">150,000원</td></tr>
<tr class="r"><td>06:08</td><td>160,000원</td><td>4명</td></tr>
<tr class="r"><td rowspan="0">07:00</td><td>170,000원</td><td>3명</td></tr>
<tr class="r"><td>180,000원</td><td>2명</td></tr>
</tbody>
<tbody><tr class="r"><td>레이크</td><td>08:00</td><td>190,000원</td><td>4명</td></tr></tbody>
</table>
<div class="r"><span>no table</span></div>`
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	g := grids{}
	var got, second []string
	doc.Find(".r").Each(func(_ int, row *goquery.Selection) {
		tr, cells, ok := g.gridRow(row.Nodes[0])
		if !ok {
			got = append(got, "no grid: "+site.CleanText(row.Text()))
			return
		}
		got = append(got, gridText(cells))
		second = append(second, site.CleanText(goquery.NewDocumentFromNode(tr).Find("td:nth-child(2)").Text()))
	})
	want := []string{
		"밸리 | 06:00 | 150,000원 | ←",
		"↑밸리 | 06:08 | 160,000원 | 4명",
		"↑밸리 | 07:00 | 170,000원 | 3명",
		"180,000원 | ↑07:00 | 2명",      // the course cell spanned 3 rows; the time to the group's end
		"레이크 | 08:00 | 190,000원 | 4명", // a new row group: no span carries over
		"no grid: no table",
	}
	if !slices.Equal(got, want) {
		t.Errorf("grid rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if w := []string{"06:00", "06:08", "07:00", "07:00", "08:00"}; !slices.Equal(second, w) {
		t.Errorf("td:nth-child(2) over the grid: %q, want %q", second, w)
	}
	header := doc.Find("thead tr").Eq(1).Nodes[0]
	if _, cells, _ := g.gridRow(header); gridText(cells) != "↑코스 | 부 | 분" {
		t.Errorf("the header's second row: %s", gridText(cells))
	}
}

// A site reads a table as its grid only with grid: true: without it td:nth-child(1) of a row under
// a spanning course cell is that row's first own cell (its time), as it always was; with it, the
// course the row inherits, and column: N the same. empty_when's contains matches a row's own
// cells only: a spanning cell that says 마감 marks its own row, not the rows it spans.
func TestGridSiteReadsTheRenderedGrid(t *testing.T) {
	t.Parallel()
	page := `<table class="t"><tbody>
<tr><td rowspan="3">동코스 마감임박</td><td>06:00</td><td>150,000원</td></tr>
<tr><td>06:08</td><td>160,000원</td></tr>
<tr><td>06:16</td><td>170,000원</td></tr>
</tbody></table>`
	entry := func(grid, part string) *site.Site {
		sites, err := site.ParseSites([]byte(`sites:
  - name: g
    start_urls: ["https://x.kr/t"]
    row: "table.t tbody tr"` + grid + `
    empty_when: [{contains: "마감임박"}]
    fields:
      course: {selector: "td:nth-child(1)"}
      course_part: ` + part + `
      round_date: {selector: "td:nth-child(1)"}
      tee_time: {selector: "td:nth-last-child(2)"}
      price: {selector: "td:nth-last-child(1)"}
`))
		if err != nil {
			t.Fatal(err)
		}
		return sites[0]
	}
	base, _ := url.Parse("https://x.kr/t")
	for _, tc := range []struct {
		name string
		st   *site.Site
		want []string // each row's course_part, marked
	}{
		{"without grid", entry("", `{selector: "td:nth-child(1)"}`), []string{"동코스 마감임박 true", "06:08 false", "06:16 false"}},
		{"grid, nth-child", entry("\n    grid: true", `{selector: "td:nth-child(1)"}`), []string{"동코스 마감임박 true", "동코스 마감임박 false", "동코스 마감임박 false"}},
		{"grid, column", entry("\n    grid: true", `{column: 1}`), []string{"동코스 마감임박 true", "동코스 마감임박 false", "동코스 마감임박 false"}},
	} {
		pg, err := parsePage(tc.st, base, []byte(page), "", t0)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range pg.Rows {
			got = append(got, fmt.Sprintf("%s %v", site.CleanText(*tc.st.RowCells(&r)[site.CellIndex("course_part")].Dst), r.Marked))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: course_part and marks %q, want %q", tc.name, got, tc.want)
		}
		if (len(pg.Grid) > 0) != tc.st.Grid {
			t.Errorf("%s: %d grid lines for try --dump", tc.name, len(pg.Grid))
		}
	}
}
