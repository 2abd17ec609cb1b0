package suggest

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
)

// boundExample is an example with its rows on the page: the sampled rows that show every one of
// its values (a row shows a value when one of its columns reads it).
type boundExample struct {
	example
	rows []int
}

// bindExamples finds each example's rows among the sampled rows. A value is shown by a row when
// a column reads it there as its cell (exampleValue.reads); a date the rows do not carry is the
// play date's, and a name the rows do not show may be a given target's or --name's. An example
// no row shows whole is an error that names, for the row that shows most of it, each value no
// column reads and the closest the row's columns read.
func bindExamples(cols []column, exs []example, crawledAt, playDate time.Time, clubNames []string) ([]boundExample, error) {
	var out []boundExample
	n := 0
	if len(cols) > 0 {
		n = len(cols[0].values)
	}
	for _, e := range exs {
		shown := func(v exampleValue, r int) bool {
			for _, cell := range v.cells() {
				for _, c := range cols {
					if c.fits(cells[cell], crawledAt).ok && v.reads(c.values[r], cell, crawledAt) {
						return true
					}
				}
			}
			switch v.cell {
			case "round_date":
				d, err := exampleDate(v.text, crawledAt)
				return err == nil && d == playDate.Format("2006-01-02")
			case nameCell, "course":
				return slices.ContainsFunc(clubNames, func(name string) bool { return v.reads(name, "course", crawledAt) })
			}
			return false
		}
		be := boundExample{example: e}
		best, bestN := -1, -1
		for r := range n {
			k := 0
			for _, v := range e.values {
				if shown(v, r) {
					k++
				}
			}
			if k == len(e.values) {
				be.rows = append(be.rows, r)
			}
			// the closest row: the most values, the tee time's first
			if teeFirst := k*2 + boolRank(e.hasTee() && shown(e.tee(), r)); teeFirst > bestN {
				best, bestN = r, teeFirst
			}
		}
		if len(be.rows) > 0 {
			out = append(out, be)
			continue
		}
		if best < 0 {
			return nil, fmt.Errorf("--example %q: the page has no rows to find it in", e.given)
		}
		var missing []string
		for _, v := range e.values {
			if !shown(v, best) {
				missing = append(missing, fmt.Sprintf("nothing reads %s (closest: %s)", v, closest(cols, v, best, crawledAt)))
			}
		}
		return nil, fmt.Errorf("--example %q: no row of the page shows all of it; in the closest, the row of %s, %s",
			e.given, rowLabel(cols, best, crawledAt), strings.Join(missing, "; "))
	}
	return out, nil
}

// hasTee and tee are the example's tee time, if it gives one.
func (e example) hasTee() bool { return e.hasCell("tee_time") }

func (e example) tee() exampleValue {
	for _, v := range e.values {
		if v.cell == "tee_time" {
			return v
		}
	}
	return exampleValue{}
}

// rowLabel names a sampled row by the tee times its columns read (the first one), for an error.
func rowLabel(cols []column, r int, crawledAt time.Time) string {
	for _, c := range cols {
		if c.fits(cells["tee_time"], crawledAt).ok {
			if v := site.CleanText(c.values[r]); v != "" {
				return v
			}
		}
	}
	return fmt.Sprintf("row %d", r+1)
}

// closest names up to three columns that read v's cell in row r, with their values there,
// nearest first (by amount for a price or count, by time for a tee time).
func closest(cols []column, v exampleValue, r int, crawledAt time.Time) string {
	type near struct {
		label string
		dist  float64
	}
	var out []near
	for _, cell := range v.cells() {
		for _, c := range cols {
			raw := site.CleanText(c.values[r])
			if raw == "" || !c.fits(cells[cell], crawledAt).ok {
				continue
			}
			out = append(out, near{c.label() + " " + raw, distance(cell, v.text, raw)})
		}
	}
	if len(out) == 0 {
		return "no column of that row reads as " + strings.Join(v.cells(), " or ")
	}
	slices.SortStableFunc(out, func(a, b near) int { return cmp.Compare(a.dist, b.dist) })
	var names []string
	for _, n := range out[:min(3, len(out))] {
		names = append(names, n.label)
	}
	return strings.Join(names, ", ")
}

// distance is how far apart two raw values of cell read (a price's, a count's won or players; a
// tee time's minutes); 0 for names.
func distance(cell, a, b string) float64 {
	num := func(s string) (float64, bool) {
		switch cell {
		case "price":
			if p, err := site.ParsePrice(s); err == nil && p != nil {
				return float64(*p), true
			}
		case "players":
			if p, err := site.ParsePlayers(s); err == nil && p != nil {
				return float64(*p), true
			}
		case "tee_time":
			if t, err := site.ParseTeeTime(s); err == nil {
				h, _ := strconv.Atoi(t[:2]) // ParseTeeTime gives HH:MM
				m, _ := strconv.Atoi(t[3:])
				return float64(h*60 + m), true
			}
		}
		return 0, false
	}
	x, okX := num(a)
	y, okY := num(b)
	if !okX || !okY {
		return 0
	}
	return math.Abs(x - y)
}

// exampleCandidates narrows a cell's candidates to those that read every example's value for it
// in one of the example's rows; by says which examples decided ("" when none gives the cell). When
// none of them reads it but a candidate a name rule left out does (all), that one stays, and it
// is said: the golfer's screen wins over a rule. When nothing reads it, the error names the
// closest.
func exampleCandidates(cols []column, cands, all []candidate, field string, ex []boundExample, crawledAt time.Time, say func(string, ...any)) (out []candidate, err error) {
	var given []string
	for _, e := range ex {
		if e.hasCell(field) {
			given = append(given, fmt.Sprintf("%q", e.given))
		}
	}
	if len(given) == 0 {
		return cands, nil
	}
	keep := func(cs []candidate) []candidate {
		var out []candidate
		for _, c := range cs {
			if exampleReadsColumn(ex, cols[c.i], field, crawledAt) {
				out = append(out, c)
			}
		}
		return out
	}
	by := strings.Join(given, ", ")
	if out = keep(cands); len(out) > 0 {
		if len(out) < len(cands) {
			var not []string
			for _, c := range cands {
				if !slices.ContainsFunc(out, func(o candidate) bool { return o.i == c.i }) {
					not = append(not, cols[c.i].label())
				}
			}
			say("%s: decided by the golfer's example (%s): %s reads it; not %s", field, by, cols[out[0].i].label(), strings.Join(not, ", "))
		}
		return out, nil
	}
	if out = keep(all); len(out) > 0 {
		say("%s: decided by the golfer's example (%s): only %s reads it, which a rule above left out: the page wins", field, by, cols[out[0].i].label())
		return out, nil
	}
	for _, e := range ex {
		for _, v := range e.values {
			if v.cell == field {
				return nil, fmt.Errorf("--example %q: no column that reads as %s reads %s in the row of %s (closest: %s)",
					e.given, field, v, rowLabel(cols, e.rows[0], crawledAt), closest(cols, v, e.rows[0], crawledAt))
			}
		}
	}
	return nil, fmt.Errorf("--example %s: nothing reads it as %s", by, field)
}

// exampleGiven reports whether an example row was given: then what it leaves out (players on a
// page that shows none) the page does not show.
func exampleGiven(ex []boundExample) bool { return len(ex) > 0 }

// exampleReadsColumn reports whether column c reads, as cell, the value every example gives for
// it (a name for the course or its part) in one of the example's rows.
func exampleReadsColumn(ex []boundExample, c column, cell string, crawledAt time.Time) bool {
	for _, e := range ex {
		for _, v := range e.values {
			if !v.forCell(cell) {
				continue
			}
			if !slices.ContainsFunc(e.rows, func(r int) bool { return v.reads(c.values[r], cell, crawledAt) }) {
				return false
			}
		}
	}
	return true
}

// exampleNames are the examples that give a name, for what is said; ok when one does.
func exampleNames(ex []boundExample) (string, bool) {
	var out []string
	for _, e := range ex {
		if slices.ContainsFunc(e.values, func(v exampleValue) bool { return v.cell == nameCell || v.cell == "course_part" }) {
			out = append(out, fmt.Sprintf("%q", e.given))
		}
	}
	return strings.Join(out, ", "), len(out) > 0
}

// meaningful drops the candidates a column's name rules out for field, saying why: a fee per
// team (cart, caddie) is no price; a flag or a code (*_YN, *ROUNDF*, *_DIV, *_CD, *_GU, *FLAG*)
// is no player count, nor is a column whose name does not say players and whose values do not
// vary across the tee times (a constant 1 or 2 that counts nothing, a business-day code: a site
// that shows no players leaves them out); a constant 4 (every tee time open for a team of four)
// is returned in constant, for the cell to be undecided rather than left out.
func meaningful(cols []column, cands []candidate, field string, say func(string, ...any)) (out []candidate, constant []int) {
	for _, c := range cands {
		col := cols[c.i]
		if w, ok := idName(col.name); ok && (field == "price" || field == "players") {
			say("%s: %s is no candidate: its name says an id (%s), a number that names something", field, col.label(), w)
			continue
		}
		switch field {
		case "price":
			if w, ok := perTeamFee(col.name); ok {
				say("price: %s is no candidate: its name says a fee per team (%s), never the price of a tee time", col.label(), w)
				continue
			}
		case "players":
			if w, ok := partName(col.name); ok {
				say("players: %s is no candidate: its name says a course part (%s), not a count", col.label(), w)
				continue
			}
			if w, ok := flagName(col.name); ok {
				say("players: %s is no candidate: its name says a flag or a code (%s), not a count", col.label(), w)
				continue
			}
			if hint("players", col.name) == 0 && distinct(col.values) < 2 {
				say("players: %s is no candidate: its name does not say players and its values do not vary across the tee times (%s)", col.label(), sample(col.values))
				if p, err := site.ParsePlayers(sample(col.values)); err == nil && p != nil && *p == 4 {
					constant = append(constant, c.i) // 4 may be the players of tee times all open, a team of four each
				}
				continue
			}
		}
		out = append(out, c)
	}
	return out, constant
}

// withFallback adds the sale-else-list fallback to price's candidates when one column (the sale
// price) is empty in some rows where another (the list price) has a value, has a value in some,
// and is at most the other wherever both do (below it in one row at least): the page's price is
// the sale price, else the list price. It is a column of its own (its values the fallback's
// reading, its sources the two), read and decided like any other.
func withFallback(cols []column, cands []candidate, say func(string, ...any)) ([]column, []candidate) {
	priced := func(v string) (int64, bool) {
		p, err := site.ParsePrice(v)
		return derefPrice(p), err == nil && p != nil && *p > 0
	}
	for _, s := range cands {
		for _, l := range cands {
			sale, list := cols[s.i], cols[l.i]
			if s.i == l.i || !plainSource(sale) || !plainSource(list) {
				continue
			}
			gaps, both, below, above := 0, 0, 0, 0
			values := make([]string, len(sale.values))
			for r := range sale.values {
				sv, sok := priced(sale.values[r])
				lv, lok := priced(list.values[r])
				switch {
				case sok && lok:
					both++
					if sv < lv {
						below++
					}
					if sv > lv {
						above++
					}
				case !sok && lok:
					gaps++
				}
				values[r] = sale.values[r]
				if !sok {
					values[r] = list.values[r]
				}
			}
			if gaps == 0 || both == 0 || below == 0 || above > 0 {
				continue
			}
			fb := column{name: sale.name + " else " + list.name, where: sale.where + " else " + list.where, values: values,
				sources: []string{sale.where, list.where}}
			cols = append(cols, fb)
			// First: it is read with the candidates it is made of (decide reads the best three).
			cands = append([]candidate{{i: len(cols) - 1, f: fb.fits(cells["price"], time.Time{}), hint: max(s.hint, l.hint)}}, cands...)
			say("price: %s is empty in %d row(s) where %s has a price, and below it in %d of the %d that show both: the sale price, else the list price (the fallback %s)",
				sale.label(), gaps, list.label(), below, both, fb.label())
			return cols, cands
		}
	}
	return cols, cands
}

// plainSource reports whether a column is read by a path or selector alone (no attribute, regex
// or fallback of its own): what a fallback's list of sources can name.
func plainSource(c column) bool {
	return len(c.sources) == 0 && !strings.Contains(c.where, regexSep) && !strings.Contains(c.where, linkSep) && !strings.HasPrefix(c.where, linkSep[1:])
}

func derefPrice(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// readBy reports whether listing l shows every value of the example: its tee time, price,
// players and play date as the crawl read them, and each name within its course or part.
func (e example) readBy(l events.Listing, crawledAt time.Time) bool {
	for _, v := range e.values {
		ok := false
		switch v.cell {
		case "tee_time":
			t, err := site.ParseTeeTime(v.text)
			ok = err == nil && t == l.TeeTime
		case "price":
			p, err := site.ParsePrice(v.text)
			ok = err == nil && p != nil && l.PriceKRW != nil && *p == *l.PriceKRW
		case "players":
			p, err := site.ParsePlayers(v.text)
			ok = err == nil && p != nil && l.Players != nil && *p == *l.Players
		case "round_date":
			d, err := exampleDate(v.text, crawledAt)
			ok = err == nil && d == l.PlayDate
		case "course":
			ok = v.reads(l.CourseName, "course", crawledAt)
		case "course_part":
			ok = v.reads(l.CoursePart, "course_part", crawledAt)
		default:
			ok = v.reads(l.CourseName, "course", crawledAt) || v.reads(l.CoursePart, "course_part", crawledAt)
		}
		if !ok {
			return false
		}
	}
	return true
}
