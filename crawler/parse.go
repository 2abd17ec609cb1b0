package crawler

import (
	"bytes"
	"cmp"
	"fmt"
	"net/url"
	"strings"

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
}

// parsePage reads the rows and links of one page of site. It does not judge content: a page
// without rows reports NoList when it lacks the list (the site's list selector, else hint, the
// holder remembered from a page with rows; neither: not judged); the error is for a body that is
// not HTML at all.
func parsePage(st *site.Site, pageURL *url.URL, body []byte, hint string) (page, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return page{}, fmt.Errorf("parse HTML: %w", err)
	}
	var pg page
	doc.Find(st.Row).Each(func(i int, row *goquery.Selection) {
		if i == 0 {
			pg.Holder = holderOf(row)
		}
		var r site.RawRow
		r.Marked = marks(st, row)
		for _, c := range st.RowCells(&r) {
			if !c.Field.Configured() {
				continue
			}
			v, ok := read(c.Field, row)
			if !ok {
				r.Missing = append(r.Missing, c.Name)
				continue
			}
			*c.Dst = v
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

// read returns the field's value in row: the first match of Selector (or the row itself), its
// text or attribute, narrowed by Regex. ok is false when the element, attribute or match is absent.
func read(f *site.CompiledField, row *goquery.Selection) (string, bool) {
	sel := row
	if f.Selector != "" {
		sel = row.Find(f.Selector).First()
		if sel.Length() == 0 {
			return "", false
		}
	}
	v := sel.Text()
	if f.Attr != "" {
		a, ok := sel.Attr(f.Attr)
		if !ok {
			return "", false
		}
		v = a
	}
	return f.Narrow(v)
}
