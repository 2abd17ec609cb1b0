package crawler

import (
	"bytes"
	"cmp"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/golfcrawler/golf-crawler/events"
)

// page is what parsePage reads from one HTML page: its listing rows and the links to crawl next.
type page struct {
	Rows  []rawRow
	Links []string // absolute http(s) URLs from next_page and follow, in document order
	// Holder is the selector of the element that holds the first row (holderOf); empty without rows.
	Holder string
	// NoList: the page has no rows and does not show the list that holds them (Site.List, derived
	// or remembered), so it is not a sold-out page but some other page (maintenance, error).
	NoList bool
}

// rawRow is one row's cells as the page shows them (entities decoded, not yet trimmed); Missing
// names the configured cells that were absent or did not match their regex.
type rawRow struct {
	Course, CoursePart, RoundDate, TeeTime, Price, Players string
	Missing                                                []string
}

// String renders the row for the log's raw key.
func (r rawRow) String() string {
	s := fmt.Sprintf("course=%q part=%q round_date=%q tee_time=%q price=%q players=%q",
		r.Course, r.CoursePart, r.RoundDate, r.TeeTime, r.Price, r.Players)
	if len(r.Missing) > 0 {
		s += " missing=" + strings.Join(r.Missing, ",")
	}
	return s
}

// parsePage reads the rows and links of one page of site. It does not judge content: a page
// without rows reports NoList when it lacks the list (the site's list selector, else hint, the
// holder remembered from a page with rows; neither: not judged); the error is for a body that is
// not HTML at all.
func parsePage(site *Site, pageURL *url.URL, body []byte, hint string) (page, error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return page{}, fmt.Errorf("parse HTML: %w", err)
	}
	var pg page
	f := site.Fields
	doc.Find(site.Row).Each(func(i int, row *goquery.Selection) {
		if i == 0 {
			pg.Holder = holderOf(row)
		}
		var r rawRow
		for _, c := range f.cells(&r) {
			if !c.field.configured() {
				continue
			}
			v, ok := c.field.read(row)
			if !ok {
				r.Missing = append(r.Missing, c.name)
				continue
			}
			*c.dst = v
		}
		pg.Rows = append(pg.Rows, r)
	})
	if list := cmp.Or(site.list, hint); len(pg.Rows) == 0 && list != "" && doc.Find(list).Length() == 0 {
		pg.NoList = true
		return pg, nil
	}
	for _, sel := range []string{site.NextPage, site.Follow} {
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

// read returns the field's value in row: the first match of Selector (or the row itself), its
// text or attribute, narrowed by Regex. ok is false when the element, attribute or match is absent.
func (f Field) read(row *goquery.Selection) (string, bool) {
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
	return f.narrow(v)
}

// narrow is v narrowed by the field's Regex (its one capture group); false when it does not match.
func (f Field) narrow(v string) (string, bool) {
	if f.re == nil {
		return v, true
	}
	m := f.re.FindStringSubmatch(v)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// cell is one cell of a raw row: its name (as Missing reports it), the Field that reads it, where
// the row keeps it, and whether a listing needs it.
type cell struct {
	name     string
	field    Field
	dst      *string
	required bool
}

// cells lists r's cells as f declares them, in report order.
func (f Fields) cells(r *rawRow) []cell {
	return []cell{
		{"course", f.Course, &r.Course, true}, {"course_part", f.CoursePart, &r.CoursePart, false},
		{"round_date", f.RoundDate, &r.RoundDate, true}, {"tee_time", f.TeeTime, &r.TeeTime, true},
		{"price", f.Price, &r.Price, false}, {"players", f.Players, &r.Players, false},
	}
}

// listing turns a raw row into a listing of site seen on pageURL during a crawl at crawledAt. On
// error, reason is one of the Reject* constants.
func (s *Site) listing(r rawRow, pageURL string, crawledAt time.Time) (events.Listing, string, error) {
	for _, m := range r.Missing {
		if m == "course" || m == "round_date" || m == "tee_time" {
			return events.Listing{}, RejectMissingField, fmt.Errorf("required cell %s is missing", m)
		}
	}
	l := events.Listing{
		Source:     s.Name,
		CourseName: CleanText(r.Course),
		CoursePart: CleanText(r.CoursePart),
		RoundDate:  strings.TrimSpace(r.RoundDate),
		URL:        pageURL,
	}
	if l.CourseName == "" {
		return events.Listing{}, RejectMissingCourse, fmt.Errorf("the course cell is empty")
	}
	// Bounds first: an overlong cell is junk whatever else it holds, and the key must fit an index.
	if err := l.CheckBounds(); err != nil {
		return events.Listing{}, RejectFieldTooLong, err
	}
	var err error
	if l.PlayDate, err = PlayDate(l.RoundDate, crawledAt); err != nil {
		return events.Listing{}, RejectBadRoundDate, err
	}
	if l.TeeTime, err = ParseTeeTime(r.TeeTime); err != nil {
		return events.Listing{}, RejectBadTeeTime, err
	}
	// A missing optional cell is an unknown value, like an empty one.
	if l.PriceKRW, err = ParsePrice(r.Price); err != nil {
		return events.Listing{}, RejectBadPrice, err
	}
	if l.Players, err = ParsePlayers(r.Players); err != nil {
		return events.Listing{}, RejectBadPlayers, err
	}
	if err := l.CheckBounds(); err != nil { // the key, now that it has its play date and tee time
		return events.Listing{}, RejectFieldTooLong, err
	}
	return l, "", nil
}
