package suggest

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"sort"
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

// signature is an element's tag and sorted classes: "tr.tee-row".
func signature(s *goquery.Selection) string {
	tag := goquery.NodeName(s)
	cls := strings.Fields(s.AttrOr("class", ""))
	sort.Strings(cls)
	if len(cls) == 0 {
		return tag
	}
	return tag + "." + strings.Join(cls, ".")
}

// nodeSignature is signature of an element node.
func nodeSignature(n *html.Node) string {
	var cls []string
	for _, a := range n.Attr {
		if a.Key == "class" {
			cls = strings.Fields(a.Val)
		}
	}
	if len(cls) == 0 {
		return n.Data
	}
	sort.Strings(cls)
	return n.Data + "." + strings.Join(cls, ".")
}

func hasElementChild(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return true
		}
	}
	return false
}

// ownSelector is how an element is named on its own: #id, tag.class, or "" when it has neither.
func ownSelector(s *goquery.Selection) string {
	if id := s.AttrOr("id", ""); id != "" && !strings.ContainsAny(id, " .#:[]") {
		return "#" + id
	}
	if goquery.NodeName(s) == "tbody" || goquery.NodeName(s) == "thead" {
		return ""
	}
	if sig := signature(s); strings.Contains(sig, ".") {
		return sig
	}
	return ""
}

// listSelector names the element that holds the rows: itself, or for a tbody its table; ""
// when neither it nor its table has an id or a class (a fragment's wrapper table: "table").
func listSelector(parent *goquery.Selection) string {
	s := parent
	if goquery.NodeName(s) == "tbody" {
		s = s.Parent()
	}
	if own := ownSelector(s); own != "" {
		return own
	}
	// Without an id or a class: an attribute of its own that no other element of its kind in
	// the page has (table[width='706'], a layout page's tables).
	tag := goquery.NodeName(s)
	if root := s.Closest("html"); root.Length() > 0 && tag != "html" && tag != "body" {
		for _, a := range s.Nodes[0].Attr {
			if a.Key == "id" || a.Key == "class" || a.Key == "style" || strings.ContainsAny(a.Val, "'\\\n") || a.Val == "" {
				continue
			}
			sel := tag + "[" + a.Key + "='" + a.Val + "']"
			if root.Find(sel).Length() == 1 {
				return sel
			}
		}
	}
	return tag
}

func rowSelector(list string, row *goquery.Selection, sig string) string {
	if !strings.Contains(sig, ".") && goquery.NodeName(row) == "tr" {
		sig = "tr:has(td)"
	}
	if list == "table" || list == "html" || list == "body" {
		return sig
	}
	return list + " " + sig
}

// cellColumns are the cells of the rows: for a table row its td cells by position (named by
// their class when it is their own, else by nth-child) and header; for other rows the leaf
// elements with a class and the classless children; for every row the arguments of its javascript: links (linkArgs). Each row is walked once (its classes counted in that walk), so the
// work is linear in the rows' elements; it ends with ctx.
func cellColumns(ctx context.Context, rows []*goquery.Selection, headers []string) ([]column, error) {
	var cols []column
	idx := map[string]int{}
	// only table rows are named by their header (th cells, or a first row of td cells); looked
	// up once a group
	if headers == nil && goquery.NodeName(rows[0]) == "tr" {
		headers = headerNames(rows[0])
	}
	for r, row := range rows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		counts, leaves, ok := rowElements(row)
		if !ok {
			continue // a whole table or list, not one row of it
		}
		cells := row.Children().Filter("td")
		if goquery.NodeName(row) != "tr" {
			cells = leaves
		}
		seen := map[string]bool{}
		add := func(where, name, value string) int {
			if where == "" || seen[where] {
				return -1
			}
			seen[where] = true
			k, ok := idx[where]
			if !ok {
				k = len(cols)
				idx[where] = k
				cols = append(cols, column{name: name, where: where, values: make([]string, len(rows))})
			}
			cols[k].values[r] = site.CleanText(value)
			return k
		}
		cells.Each(func(i int, c *goquery.Selection) {
			where := cellSelector(c, i, counts)
			name := where
			if i < len(headers) && goquery.NodeName(row) == "tr" {
				name = headers[i] + " " + where
			}
			if k := add(where, name, c.Text()); k >= 0 && struck(c) {
				cols[k].struck++
			}
		})
		linkArgs(row, func(where, name, value string) { add(where, name, value) })
		ownAttrs(row, func(where, name, value string) { add(where, name, value) })
	}
	return cols, nil
}

// ownAttrs calls add for what a row holds only in attributes: its own data-* attributes (the
// part in data-coursekor) and the value of its submit buttons (an open time only in <input
// type=submit value="7:30 AM">), each with its where (selector @attribute) and a name.
func ownAttrs(row *goquery.Selection, add func(where, name, value string)) {
	for _, a := range row.Nodes[0].Attr {
		if strings.HasPrefix(a.Key, "data-") {
			add(linkSep[1:]+a.Key, a.Key, a.Val)
		}
	}
	row.Find("input[type=submit][value], input[type=button][value]").Each(func(_ int, el *goquery.Selection) {
		sel := "input[type=" + el.AttrOr("type", "") + "]"
		add(sel+linkSep+"value", sel+" value", el.AttrOr("value", ""))
	})
	// An element with a class that carries the row's values as attributes of its own
	// (<p class="resv" date="…" course="2" time="06:00">): each such attribute a column.
	row.Find("[class]").Each(func(_ int, el *goquery.Selection) {
		cls := strings.Fields(el.AttrOr("class", ""))
		if len(cls) == 0 {
			return
		}
		sel := goquery.NodeName(el) + "." + cls[0]
		for _, a := range el.Nodes[0].Attr {
			if !standardAttr(a.Key) {
				add(sel+linkSep+a.Key, a.Key, a.Val)
			}
		}
	})
}

// standardAttr reports whether an attribute is HTML's own (style, links, layout, events), not a
// value a page put there for its scripts.
func standardAttr(k string) bool {
	switch k {
	case "class", "id", "style", "href", "src", "alt", "title", "width", "height", "align", "valign", "bgcolor", "colspan",
		"rowspan", "border", "cellpadding", "cellspacing", "target", "type", "name", "value", "for", "rel", "lang", "dir",
		"tabindex", "role", "action", "method", "disabled", "checked", "selected", "readonly", "nowrap", "scope":
		return true
	}
	return strings.HasPrefix(k, "on") || strings.HasPrefix(k, "aria-")
}

// rowElements walks a row's elements once: how many of them match each tag.class, and its leaf
// elements with a class or, without one, children of the row. ok is false for an element with more than maxRowElements elements or
// maxRowCells leaves: a whole table or list, not one row of it (the walk stops there).
func rowElements(row *goquery.Selection) (counts map[string]int, leaves *goquery.Selection, ok bool) {
	counts = map[string]int{}
	var leafNodes []*html.Node
	n := 0
	var walk func(p *html.Node) bool
	walk = func(p *html.Node) bool {
		for c := p.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			if n++; n > maxRowElements {
				return false
			}
			class, leaf := "", true
			for _, a := range c.Attr {
				if a.Key == "class" {
					class = a.Val
				}
			}
			for _, cls := range strings.Fields(class) {
				counts[c.Data+"."+cls]++
			}
			for g := c.FirstChild; g != nil; g = g.NextSibling {
				if g.Type == html.ElementNode {
					leaf = false
					break
				}
			}
			// A leaf without a class is a cell only as a child of the row itself, where its
			// position names it (div.grid > span:nth-child(2)).
			if leaf && (class != "" || p == row.Nodes[0]) {
				leafNodes = append(leafNodes, c)
			}
			if !walk(c) {
				return false
			}
		}
		return true
	}
	if len(row.Nodes) == 0 || !walk(row.Nodes[0]) || len(leafNodes) > maxRowCells {
		return nil, nil, false
	}
	return counts, &goquery.Selection{Nodes: leafNodes}, true
}

// cellSelector names a cell within its row: tag.class when no other element of the row matches
// it (counts: the row's elements per tag.class), else a td, or a classless child of the row, by
// position.
func cellSelector(c *goquery.Selection, i int, counts map[string]int) string {
	tag := goquery.NodeName(c)
	if cls := strings.Fields(c.AttrOr("class", "")); len(cls) > 0 {
		sel := tag + "." + cls[0]
		if counts[sel] == 1 {
			return sel
		}
	}
	if tag == "td" {
		return "td:nth-child(" + itoa(i+1) + ")"
	}
	if c.AttrOr("class", "") == "" { // a child of the row (rowElements), named by its position
		return tag + ":nth-child(" + itoa(c.Index()+1) + ")"
	}
	return ""
}

// struck reports whether a cell's text is struck through (<del>, <s>, <strike>): a list price
// beside the one a golfer pays.
func struck(c *goquery.Selection) bool {
	switch goquery.NodeName(c) {
	case "del", "s", "strike":
		return true
	}
	return c.Find("del, s, strike").Length() > 0
}

// headerNames are the texts of the th cells of the rows' table, by position.
func headerNames(row *goquery.Selection) []string {
	table := row.Closest("table")
	var out []string
	table.Find("tr").First().Find("th").Each(func(_ int, th *goquery.Selection) {
		out = append(out, site.CleanText(th.Text()))
	})
	return out
}

var nextTexts = []string{"다음", "다음페이지", "next", "›", "»", ">", "다음 페이지"}

// nextLink finds the link to the next page: a link whose text or class says next.
func nextLink(doc *goquery.Document) (sel, href string) {
	doc.Find("a[href]").EachWithBreak(func(_ int, a *goquery.Selection) bool {
		text := strings.ToLower(site.CleanText(a.Text()))
		classes := strings.Fields(a.AttrOr("class", ""))
		isNext := slices.Contains(nextTexts, text) || slices.ContainsFunc(classes, func(c string) bool { return strings.Contains(strings.ToLower(c), "next") })
		if !isNext {
			return true
		}
		href = a.AttrOr("href", "")
		own := "a"
		for _, c := range classes {
			if strings.Contains(strings.ToLower(c), "next") {
				own = "a." + c
			}
		}
		if own == "a" {
			own = `a:contains("` + site.CleanText(a.Text()) + `")`
		}
		for p := a.Parent(); p.Length() > 0 && p.Nodes[0].Type == html.ElementNode; p = p.Parent() {
			if o := ownSelector(p); o != "" {
				sel = o + " " + own
				return false
			}
		}
		sel = own
		return false
	})
	return sel, href
}
