package crawler

import (
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// A table read as the rendered grid (a site's grid: true): a cell with rowspan belongs to every
// row it spans and a cell with colspan to every column, so that a row whose course cell sits in
// the row above still has that cell in its first column, and td:nth-child(N) and column: N count
// the columns a reader sees.

// How a grid cell came to its row (gridCell.from).
const (
	gridOwn       = ""          // the row's own cell
	gridInherited = "inherited" // a cell of a row above that spans this one (rowspan)
	gridSpanned   = "spanned"   // a further column of a cell to the left (colspan)
)

// gridAttr is the attribute a grid row's copied cells carry: inherited or spanned.
const gridAttr = "data-grid"

// The bounds HTML puts on spans (the HTML standard's table processing model).
const (
	maxColspan = 1000
	maxRowspan = 65534
)

type gridCell struct {
	node *html.Node
	from string
}

// grids are the grids of a document's tables, built once per table.
type grids map[*html.Node]map[*html.Node][]gridCell // table → row → cells

// GridReader reads table rows as a site with grid: true reads them, for crawler suggest, which
// samples a table with spanning cells by its grid columns: each call returns row's copy whose
// cells are its grid cells in column order (gridRow); ok is false for a row that is not a tr
// inside a table. Each table's grid is built once per reader.
func GridReader() func(row *html.Node) (*html.Node, bool) {
	g := grids{}
	return func(row *html.Node) (*html.Node, bool) {
		tr, _, ok := g.gridRow(row)
		return tr, ok
	}
}

// gridRow is row as the rendered grid shows it: a copy of the row whose cells are its grid
// cells in column order, the inherited and spanned ones marked with gridAttr. ok is false for a
// row that is not a tr inside a table: it is read as it is.
func (g grids) gridRow(row *html.Node) (*html.Node, []gridCell, bool) {
	table := tableOf(row)
	if table == nil {
		return nil, nil, false
	}
	rows, built := g[table]
	if !built {
		rows = buildGrid(table)
		g[table] = rows
	}
	cells, ok := rows[row]
	if !ok {
		return nil, nil, false
	}
	tr := &html.Node{Type: html.ElementNode, DataAtom: row.DataAtom, Data: row.Data, Namespace: row.Namespace,
		Attr: append([]html.Attribute(nil), row.Attr...)}
	for _, c := range cells {
		cp := cloneNode(c.node)
		if c.from != gridOwn {
			cp.Attr = append(cp.Attr, html.Attribute{Key: gridAttr, Val: c.from})
		}
		tr.AppendChild(cp)
	}
	tr.Parent = row.Parent // selectors that look up (tbody > tr td) see the row's place; the parent does not list it
	return tr, cells, true
}

// tableOf is the table a tr belongs to: its parent, or its row group's parent (thead, tbody,
// tfoot); nil for anything else.
func tableOf(n *html.Node) *html.Node {
	if n.Type != html.ElementNode || n.DataAtom != atom.Tr || n.Parent == nil {
		return nil
	}
	p := n.Parent
	switch p.DataAtom {
	case atom.Table:
		return p
	case atom.Thead, atom.Tbody, atom.Tfoot:
		if p.Parent != nil && p.Parent.DataAtom == atom.Table {
			return p.Parent
		}
	}
	return nil
}

// buildGrid lays out the rows of table, row group by row group (a span never leaves its group;
// rowspan="0" spans to the group's end).
func buildGrid(table *html.Node) map[*html.Node][]gridCell {
	out := map[*html.Node][]gridCell{}
	var group []*html.Node // rows of the current row group
	flush := func() {
		layoutGroup(group, out)
		group = nil
	}
	for c := table.FirstChild; c != nil; c = c.NextSibling {
		switch c.DataAtom {
		case atom.Tr:
			group = append(group, c) // rows right in the table form one group until a section starts
		case atom.Thead, atom.Tbody, atom.Tfoot:
			flush()
			for r := c.FirstChild; r != nil; r = r.NextSibling {
				if r.Type == html.ElementNode && r.DataAtom == atom.Tr {
					group = append(group, r)
				}
			}
			flush()
		}
	}
	flush()
	return out
}

// layoutGroup places the cells of one row group's rows.
func layoutGroup(rows []*html.Node, out map[*html.Node][]gridCell) {
	type span struct {
		node *html.Node
		left int // rows still to cover
	}
	var pending []span // by column
	for _, tr := range rows {
		var cells []gridCell
		col := 0
		fill := func() { // the columns held by cells of rows above
			for col < len(pending) && pending[col].left > 0 {
				cells = append(cells, gridCell{pending[col].node, gridInherited})
				pending[col].left--
				col++
			}
		}
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode || (c.DataAtom != atom.Td && c.DataAtom != atom.Th) {
				continue
			}
			fill()
			colspan := spanAttr(c, "colspan", 1, 1, maxColspan)
			rowspan := spanAttr(c, "rowspan", 1, 0, maxRowspan)
			left := rowspan - 1
			if rowspan == 0 {
				left = len(rows) // to the group's end
			}
			for k := range colspan {
				from := gridOwn
				if k > 0 {
					from = gridSpanned
				}
				cells = append(cells, gridCell{c, from})
				for len(pending) <= col {
					pending = append(pending, span{})
				}
				pending[col] = span{c, left}
				col++
			}
		}
		fill()
		out[tr] = cells
	}
}

// spanAttr reads a span attribute as the HTML standard does: a missing or bad value is def,
// values are clamped to lo..hi.
func spanAttr(n *html.Node, key string, def, lo, hi int) int {
	for _, a := range n.Attr {
		if a.Key != key {
			continue
		}
		v, err := strconv.Atoi(strings.TrimSpace(a.Val))
		if err != nil {
			return def
		}
		return min(max(v, lo), hi)
	}
	return def
}

// cloneNode is a deep copy of n, without parent or siblings.
func cloneNode(n *html.Node) *html.Node {
	cp := &html.Node{Type: n.Type, DataAtom: n.DataAtom, Data: n.Data, Namespace: n.Namespace,
		Attr: append([]html.Attribute(nil), n.Attr...)}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		cp.AppendChild(cloneNode(c))
	}
	return cp
}

// gridText is a grid row as `crawler try --dump` shows it: its cells' texts in column order,
// those inherited from a row above marked ↑, a colspan's further columns ←.
func gridText(cells []gridCell) string {
	parts := make([]string, len(cells))
	for i, c := range cells {
		t := site.CleanText(goquery.NewDocumentFromNode(c.node).Text())
		switch c.from {
		case gridInherited:
			t = "↑" + t
		case gridSpanned:
			t = "←"
		}
		parts[i] = t
	}
	return strings.Join(parts, " | ")
}
