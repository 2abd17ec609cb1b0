package suggest

import (
	"bytes"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"github.com/golfcrawler/golf-crawler/crawler"
)

// htmlRows is the repeated element found in an HTML answer.
type htmlRows struct {
	list string // the selector of the element holding the rows
	row  string // the selector of one row
	rows int
	cols []column
	next string // the selector of the next-page link ("" none)
	// nextHref is where it leads on the page read
	nextHref string
}

// findHTMLRows looks for the siblings of one kind (same tag and classes: table rows, list items,
// cards) whose cells hold tee times; the group with the most such rows wins.
func findHTMLRows(body []byte) (best htmlRows, ok bool, err error) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(crawler.TableFragment(body)))
	if err != nil {
		return htmlRows{}, false, err
	}
	bestN := 0
	doc.Find("*").Each(func(_ int, parent *goquery.Selection) {
		groups := map[string][]*goquery.Selection{}
		var order []string
		parent.Children().Each(func(_ int, c *goquery.Selection) {
			sig := signature(c)
			if _, seen := groups[sig]; !seen {
				order = append(order, sig)
			}
			groups[sig] = append(groups[sig], c)
		})
		for _, sig := range order {
			rows := groups[sig]
			cols := cellColumns(rows)
			n := 0
			for _, c := range cols {
				if f := c.fits(cells["tee_time"], time.Time{}); f.ok && f.n > n {
					n = f.n
				}
			}
			if n > bestN {
				best, bestN = htmlRows{list: listSelector(parent), rows: len(rows), cols: cols}, n
				best.row = rowSelector(best.list, rows[0], sig)
			}
		}
	})
	if bestN == 0 {
		return htmlRows{}, false, nil
	}
	best.next, best.nextHref = nextLink(doc)
	return best, true, nil
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
	return goquery.NodeName(s)
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
// elements with a class.
func cellColumns(rows []*goquery.Selection) []column {
	var cols []column
	idx := map[string]int{}
	headers := headerNames(rows[0])
	for r, row := range rows {
		cells := row.Children().Filter("td")
		if goquery.NodeName(row) != "tr" {
			cells = row.Find("*").FilterFunction(func(_ int, s *goquery.Selection) bool {
				return s.Children().Length() == 0 && s.AttrOr("class", "") != ""
			})
		}
		seen := map[string]bool{}
		cells.Each(func(i int, c *goquery.Selection) {
			where := cellSelector(c, i, row)
			if where == "" || seen[where] {
				return
			}
			seen[where] = true
			k, ok := idx[where]
			if !ok {
				k = len(cols)
				idx[where] = k
				name := where
				if i < len(headers) && goquery.NodeName(row) == "tr" {
					name = headers[i] + " " + where
				}
				cols = append(cols, column{name: name, where: where, values: make([]string, len(rows))})
			}
			cols[k].values[r] = crawler.CleanText(c.Text())
		})
	}
	return cols
}

func cellSelector(c *goquery.Selection, i int, row *goquery.Selection) string {
	tag := goquery.NodeName(c)
	if cls := strings.Fields(c.AttrOr("class", "")); len(cls) > 0 {
		sel := tag + "." + cls[0]
		if row.Find(sel).Length() == 1 {
			return sel
		}
	}
	if tag == "td" {
		return "td:nth-child(" + itoa(i+1) + ")"
	}
	return ""
}

// headerNames are the texts of the th cells of the rows' table, by position.
func headerNames(row *goquery.Selection) []string {
	table := row.Closest("table")
	var out []string
	table.Find("tr").First().Find("th").Each(func(_ int, th *goquery.Selection) {
		out = append(out, crawler.CleanText(th.Text()))
	})
	return out
}

var nextTexts = []string{"다음", "다음페이지", "next", "›", "»", ">", "다음 페이지"}

// nextLink finds the link to the next page: a link whose text or class says next.
func nextLink(doc *goquery.Document) (sel, href string) {
	doc.Find("a[href]").EachWithBreak(func(_ int, a *goquery.Selection) bool {
		text := strings.ToLower(crawler.CleanText(a.Text()))
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
			own = `a:contains("` + crawler.CleanText(a.Text()) + `")`
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
