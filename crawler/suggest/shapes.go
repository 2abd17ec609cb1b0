package suggest

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// The cells are the crawler's (site.Cells): their names, value shapes, name hints and
// normalisers. suggest adds no cell of its own and no detector of its own, so that it proposes
// a column for a cell only when the crawl reads it as that cell.
var cells = func() map[string]site.Cell {
	m := map[string]site.Cell{}
	for _, c := range site.Cells() {
		m[c.Name] = c
	}
	return m
}()

// reClubName is how a club's name ends ("레이크 CC", "오션뷰 골프클럽"): it tells the course
// column from a course part's when no target names the club.
var reClubName = regexp.MustCompile(`(?i)(\bcc|\bgc|c\.c|골프|컨트리|클럽|club|country|golf|레저|리조트|resort)\s*$`)

// looksLikeClub reports whether a name reads like a club's ("레이크 CC", "오션뷰 골프클럽").
func looksLikeClub(s string) bool {
	return reClubName.MatchString(strings.TrimSpace(site.CleanText(s)))
}

// hint returns how well name matches the name hints of the cell field (site.Cell.Hint).
func hint(field, name string) int { return cells[field].Hint(name) }

// column is one candidate member of the rows: its name (JSON member, or the HTML cell's header
// and class), where to read it (a path or selector) and its values, one per row ("" when absent).
type column struct {
	name   string
	where  string
	values []string
	// struck is how many of its cells are struck through (HTML <del>, <s>): a list price's
	struck int
	// sources, for a fallback made of two columns (the sale price, else the list price), are the
	// columns read in order; values are then the fallback's reading.
	sources []string
}

// fit is how a column's values fit a cell.
type fit struct {
	ok    bool       // the column can be the cell
	n     int        // values with one of the cell's shapes
	rows  int        // the column's values (rows), empty ones included
	rank  int        // the index of the least telling shape needed: lower is better
	shape site.Shape // that shape
}

// fits reports how the column fits cell c at crawledAt. It fits only if the crawl's normaliser
// reads every non-empty value (site.Cell.Reads) and at least 80 % of them (and at least one)
// have one of the cell's shapes, counting the values read as unknown (마감, 문의) as fitting.
// rank is the first shape of the cell's list down to which that holds.
func (c column) fits(cell site.Cell, crawledAt time.Time) fit {
	shapes := cell.Shapes
	best := make([]int, len(shapes)) // values whose best shape is shapes[i]
	unknown, nonEmpty := 0, 0
	for _, v := range c.values {
		if strings.TrimSpace(site.CleanText(v)) == "" {
			continue
		}
		nonEmpty++
		known, err := cell.Reads(v, crawledAt)
		if err != nil {
			return fit{rows: len(c.values)}
		}
		matched := false
		for i, sh := range shapes {
			if sh.Match(v) {
				best[i]++
				matched = true
				break
			}
		}
		if !matched && !known {
			unknown++
		}
	}
	n := 0
	for i := range shapes {
		n += best[i]
		if n > 0 && (n+unknown)*5 >= nonEmpty*4 {
			for _, k := range best[i+1:] {
				n += k
			}
			return fit{ok: true, n: n, rows: len(c.values), rank: i, shape: shapes[i]}
		}
	}
	return fit{n: n, rows: len(c.values)}
}

func itoa(n int) string { return strconv.Itoa(n) }
