package suggest

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// htmlRows is the repeated element found in an HTML answer.
type htmlRows struct {
	list string // the selector of the element holding the rows
	row  string // the selector of one row
	rows int
	cols []column
	next string // the selector of the next-page link ("" none)
	// grid: the rows are a table's with cells that span rows or columns, read as its rendered
	// grid (the entry's grid: true), their columns the grid's
	grid bool
	// booking is the selector of the booking link only some rows with a tee time have ("" none):
	// the rows without it are not bookable (booked, as the page keeps them), no listings.
	booking string
	// nextHref is where it leads on the page read
	nextHref string
}

// SampleRows is how many rows of a group the analysis reads (the first): the columns, their shapes
// and names are all in them, and the analysis stays linear in the page (it was quadratic
// in the rows: a 20,000-row page never finished).
const SampleRows = 200

// maxRowCells and maxRowElements are the most leaf cells and elements a row may have: more is a
// whole table or list, not one row of it.
const (
	maxRowCells    = 64
	maxRowElements = 512
)

// ctxEvery is how many elements the walks go between two looks at their context.
const ctxEvery = 256

// findHTMLRows looks for the siblings of one kind (same tag and classes: table rows, list items,
// cards) whose cells hold tee times; the group with the most such rows (among its first
// SampleRows) wins. It ends with ctx.
func findHTMLRows(ctx context.Context, body []byte) (best htmlRows, ok bool, err error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(crawler.TableFragment(body)))
	if err != nil {
		return htmlRows{}, false, err
	}
	bestN, seen := 0, 0
	var bestHeader []string // the names of a header row of td cells
	var visit func(p *html.Node) bool
	visit = func(p *html.Node) bool {
		if seen++; seen%ctxEvery == 0 && ctx.Err() != nil {
			err = ctx.Err()
			return false
		}
		// The element children that hold elements (a leaf is no row of cells), by signature.
		groups := map[string][]*html.Node{}
		var order []string
		for c := p.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || !hasElementChild(c) {
				continue
			}
			sig := nodeSignature(c)
			if _, seen := groups[sig]; !seen {
				order = append(order, sig)
			}
			groups[sig] = append(groups[sig], c)
		}
		for _, sig := range order {
			nodes := groups[sig]
			var rows []*goquery.Selection
			doc.FindNodes(nodes[:min(len(nodes), SampleRows)]...).Each(func(_ int, r *goquery.Selection) { rows = append(rows, r) })
			cols, cerr := cellColumns(ctx, rows, nil)
			if cerr != nil {
				err = cerr
				return false
			}
			header := false
			n := teeTimes(cols)
			if len(rows) > 2 && goquery.NodeName(rows[0]) == "tr" && headerRow(rows[0], cols) {
				// A table whose header row is of td cells, like its rows: the first row names
				// the columns, the others are read without it.
				hcols, herr := cellColumns(ctx, rows[1:], tdTexts(rows[0]))
				if herr != nil {
					err = herr
					return false
				}
				if hn := teeTimes(hcols); hn >= n {
					cols, n, header, rows, nodes = hcols, hn, true, rows[1:], nodes[1:]
				}
			}
			if n > bestN {
				parent := doc.FindNodes(p)
				best, bestN = htmlRows{list: listSelector(parent), rows: len(nodes), cols: cols}, n
				best.row = rowSelector(best.list, rows[0], sig)
				if header {
					best.row += ":not(:first-child)"
					bestHeader = tdTexts(doc.FindNodes(groups[sig][0]))
				} else {
					bestHeader = nil
				}
			}
		}
		for c := p.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && !visit(c) {
				return false
			}
		}
		return true
	}
	for c := doc.Nodes[0].FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && !visit(c) {
			break
		}
	}
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return htmlRows{}, false, err
	}
	if bestN == 0 {
		return htmlRows{}, false, nil
	}
	best, err = refineRows(ctx, doc, best, bestN, bestHeader)
	if err != nil {
		return htmlRows{}, false, err
	}
	best.next, best.nextHref = nextLink(doc)
	return best, true, nil
}

// refineRows completes the group found (best, with bestN tee times and its header row's names)
// with what the crawl reads: every element the row selector matches, without layout rows; a
// table with spanning cells as its grid; only the rows with the booking link some lack.
func refineRows(ctx context.Context, doc *goquery.Document, best htmlRows, bestN int, bestHeader []string) (htmlRows, error) {
	// The crawl reads every element the row selector matches, not only the group's: the rows of
	// the other tables of the list's kind (a table per course part) are sampled too, and a layout
	// row that holds a whole table is no row.
	all := doc.Find(best.row)
	if all.FilterFunction(func(_ int, r *goquery.Selection) bool { return r.Find("table").Length() > 0 }).Length() > 0 {
		best.row += ":not(:has(table))"
		all = doc.Find(best.row)
	}
	if all.Length() > best.rows {
		var rows []*goquery.Selection
		all.Slice(0, min(all.Length(), SampleRows)).Each(func(_ int, r *goquery.Selection) { rows = append(rows, r) })
		if cols, cerr := cellColumns(ctx, rows, bestHeader); cerr == nil && teeTimes(cols) >= bestN {
			best.cols, best.rows = cols, all.Length()
		} else if cerr != nil {
			return best, cerr
		}
	}
	// A table whose cells span rows or columns (a course cell with rowspan over its course's
	// rows) is read as its rendered grid (grid: true): each row then has every column.
	if spans(all) {
		read := crawler.GridReader()
		var rows []*goquery.Selection
		all.Slice(0, min(all.Length(), SampleRows)).Each(func(_ int, r *goquery.Selection) {
			if tr, ok := read(r.Nodes[0]); ok {
				rows = append(rows, &goquery.Selection{Nodes: []*html.Node{tr}})
			}
		})
		if len(rows) > 0 {
			cols, cerr := cellColumns(ctx, rows, bestHeader)
			if cerr != nil {
				return best, cerr
			}
			if teeTimes(cols) > 0 {
				best.cols, best.grid = cols, true
			}
		}
	}
	var n int
	best.booking, best.cols, n = bookingRows(best.cols)
	if best.booking != "" {
		best.row += ":has(" + best.booking + ")"
		best.rows = n
	}
	return best, nil
}

// spans reports whether rows have a cell that spans rows or columns (rowspan or colspan over 1).
func spans(rows *goquery.Selection) bool {
	return rows.Find("td[rowspan], td[colspan], th[rowspan], th[colspan]").FilterFunction(func(_ int, c *goquery.Selection) bool {
		for _, a := range []string{"rowspan", "colspan"} {
			if n, err := strconv.Atoi(strings.TrimSpace(c.AttrOr(a, "1"))); err == nil && n > 1 {
				return true
			}
		}
		return false
	}).Length() > 0
}

// teeTimes is the most values of one column that have a tee time's shape.
func teeTimes(cols []column) int {
	n := 0
	for _, c := range cols {
		if f := c.fits(cells["tee_time"], time.Time{}); f.ok && f.n > n {
			n = f.n
		}
	}
	return n
}

// headerRow reports whether a group's first row names its columns: its cells (td, like the
// rows') are all text, none a number, and the column that reads the most tee times has none there
// while most other rows have one.
func headerRow(row *goquery.Selection, cols []column) bool {
	texts := tdTexts(row)
	if len(texts) < 2 {
		return false
	}
	for _, t := range texts {
		if t == "" || reDigits.MatchString(t) {
			return false
		}
	}
	tee, best := -1, 0
	for i, c := range cols {
		if f := c.fits(cells["tee_time"], time.Time{}); f.n > best {
			tee, best = i, f.n
		}
	}
	if tee < 0 {
		return true // no column reads tee times with the header row among them
	}
	return cols[tee].values[0] == "" && best*2 >= len(cols[tee].values)-1
}

var reDigits = regexp.MustCompile(`^[\d\s.,:/()-]+$`)

// tdTexts are a row's td cells' texts: the names of a header row made of td cells.
func tdTexts(row *goquery.Selection) []string {
	var out []string
	row.Children().Filter("td").Each(func(_ int, td *goquery.Selection) { out = append(out, site.CleanText(td.Text())) })
	return out
}

// bookingRows finds a booking link (a javascript: call, linkArgs) that some rows with a tee time
// have and others lack: the rows without it cannot be booked (the page keeps booked tee times
// with an image instead), so the rows are those with it. It returns the link's selector ("" when
// no link tells them apart), and the columns and the number of rows without the others.
func bookingRows(cols []column) (string, []column, int) {
	tee := -1
	for i, c := range cols {
		if c.fits(cells["tee_time"], time.Time{}).ok && (tee < 0 || c.fits(cells["tee_time"], time.Time{}).n > cols[tee].fits(cells["tee_time"], time.Time{}).n) {
			tee = i
		}
	}
	if tee < 0 {
		return "", cols, 0
	}
	for _, c := range cols {
		sel, _, re := splitWhere(c.where)
		if re == "" || !strings.Contains(sel, "*=") {
			continue
		}
		with, without := 0, 0
		for r := range c.values {
			switch {
			case cols[tee].values[r] == "":
			case c.values[r] != "":
				with++
			default:
				without++
			}
		}
		if with == 0 || without == 0 {
			continue
		}
		var keep []int
		for r := range c.values {
			if c.values[r] != "" {
				keep = append(keep, r)
			}
		}
		out := make([]column, len(cols))
		for i, k := range cols {
			out[i] = k
			out[i].values = make([]string, len(keep))
			for j, r := range keep {
				out[i].values[j] = k.values[r]
			}
		}
		return sel, out, len(keep)
	}
	return "", cols, 0
}
