package crawler

import (
	"bytes"
	"cmp"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// page is what parsePage reads from one HTML page: its listing rows and the links to crawl next.
type page struct {
	Rows  []site.RawRow
	Links []string // absolute http(s) URLs from next_page and follow, in document order
	// Holder is the selector of the element that holds the first row (holderOf); empty without rows.
	Holder string
	// NoList: the page has no rows and does not show the list that holds them (Site.List, derived
	// or remembered), so it is not a sold-out page but some other page (maintenance, error).
	NoList bool
	// Grid are the rows as the rendered grid shows them (grid: true; gridText), for crawler try.
	Grid []string
}

// parsePage reads the rows and links of one page of site. It does not judge content: a page
// without rows reports NoList when it lacks the list (the site's list selector, else hint, the
// holder remembered from a page with rows; neither: not judged); the error is for a body that is
// not HTML at all.
func parsePage(st *site.Site, pageURL *url.URL, body []byte, hint string, crawledAt time.Time) (page, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return page{}, fmt.Errorf("parse HTML: %w", err)
	}
	var pg page
	var g grids // the tables read as their grid (grid: true)
	if st.Grid {
		g = grids{}
	}
	doc.Find(st.Row).Each(func(i int, row *goquery.Selection) {
		if i == 0 {
			pg.Holder = holderOf(row)
		}
		var r site.RawRow
		r.Marked = marks(st, row) // over the row's own cells, not those a grid lends it
		cells := row
		if g != nil {
			if tr, grid, ok := g.gridRow(row.Nodes[0]); ok {
				cells = goquery.NewDocumentFromNode(tr).Selection
				pg.Grid = append(pg.Grid, gridText(grid))
			}
		}
		for _, c := range st.RowCells(&r) {
			if !c.Field.Configured() {
				continue
			}
			c.Read(&r, crawledAt, func(k int) (string, bool) { return read(c.Field, k, cells) })
		}
		pg.Rows = append(pg.Rows, r)
	})
	if list := cmp.Or(st.ListSelector(), hint); len(pg.Rows) == 0 && list != "" && doc.Find(list).Length() == 0 {
		pg.NoList = true
		return pg, nil
	}
	for _, sel := range []string{st.NextPage, st.Follow} {
		if sel == "" {
			continue
		}
		doc.Find(sel).Each(func(_ int, a *goquery.Selection) {
			href, ok := a.Attr("href")
			if !ok {
				return
			}
			ref, err := url.Parse(strings.TrimSpace(href))
			if err != nil {
				return
			}
			abs := pageURL.ResolveReference(ref)
			abs.Fragment = ""
			if abs.Scheme == "http" || abs.Scheme == "https" {
				pg.Links = append(pg.Links, abs.String())
			}
		})
	}
	return pg, nil
}

// marks reports whether row matches one of the site's empty_when entries.
func marks(s *site.Site, row *goquery.Selection) bool {
	for _, m := range s.EmptyWhen {
		if (m.Selector != "" && row.Find(m.Selector).Length() > 0) || (m.Contains != "" && strings.Contains(row.Text(), m.Contains)) {
			return true
		}
	}
	return false
}

// read returns what the field's k-th source (site.Field.Sources) reads in row: the text or
// attribute of the first match of that selector within the row, or within the row's cell of the
// field's column (grid: true), or of that cell or the row itself without a selector. ok is false
// when the element or attribute is absent; the field's regex narrows it later (site.RowCell.Read).
func read(f *site.CompiledField, k int, row *goquery.Selection) (string, bool) {
	sel := row
	if f.Column > 0 {
		sel = row.Children().Eq(f.Column - 1)
		if sel.Length() == 0 {
			return "", false
		}
	}
	if srcs := f.Sources(); k < len(srcs) {
		sel = sel.Find(srcs[k]).First()
		if sel.Length() == 0 {
			return "", false
		}
	}
	if f.Attr != "" {
		return sel.Attr(f.Attr)
	}
	return sel.Text(), true
}
