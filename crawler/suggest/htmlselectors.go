package suggest

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

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
