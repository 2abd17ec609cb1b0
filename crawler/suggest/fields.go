package suggest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
)

// pick is how one field is read: from a row's column (where) or from the request (value).
type pick struct {
	where string // a gjson path or a CSS selector within the row
	value string // a template over the request's variables
}

// assignment is the fields found in the rows, with what was said about them.
type assignment struct {
	fields   map[string]pick
	missing  []string // required fields not found
	yearless bool     // round_date is a year-less date read from the rows
}

// assignFields decides which column is which field, by value shape first and name second,
// telling its evidence on say: a column is a candidate for a cell only if the crawl's normaliser
// reads all its values (column.fits), and among the candidates a more telling shape wins (a time
// with ":" or 시 over a four-digit code, a price with 원 or a separator over a bare number).
// targetNames are the given targets' names (nil: none given); crawledAt is the crawl's time a
// year-less date is read at.
func assignFields(cols []column, targetNames []string, crawledAt time.Time, say func(format string, args ...any)) assignment {
	a := assignment{fields: map[string]pick{}}
	used := map[int]bool{}
	choose := func(field string, byHint bool) int {
		best, bestF, bestH := -1, fit{}, 0
		for i, c := range cols {
			if used[i] {
				continue
			}
			f := c.fits(cells[field], crawledAt)
			if !f.ok {
				continue
			}
			h := hint(field, c.name)
			byShape := f.rank < bestF.rank || (f.rank == bestF.rank && f.n > bestF.n)
			sameShape := f.rank == bestF.rank && f.n == bestF.n
			better := byShape || (sameShape && h > bestH)
			if byHint {
				better = h > bestH || (h == bestH && byShape)
			}
			if best < 0 || better {
				best, bestF, bestH = i, f, h
			}
		}
		if best >= 0 {
			used[best] = true
			a.fields[field] = pick{where: cols[best].where}
			say("%s ← %s: %d of %d rows look like %s%s", field, cols[best].label(), bestF.n, bestF.rows, bestF.shape.Name, hintNote(field, cols[best].name))
		}
		return best
	}
	if choose("tee_time", false) < 0 {
		a.missing = append(a.missing, "tee_time")
		say("tee_time: no column looks like tee times (06:30, 0630, 06:30:00, 6:30, 06시 30분, 6:30 AM)")
	}
	if choose("price", true) < 0 {
		say("price: no column looks like prices (130000, 130,000, 130,000원, 14만5천원); the listings will have none")
	}
	if choose("players", true) < 0 {
		say("players: no column looks like player counts (1 to 9, 4명); the listings will have none")
	}
	if choose("round_date", false) >= 0 {
		a.yearless = true
	}
	a.assignCourse(cols, used, targetNames, crawledAt, say)
	return a
}

func (a *assignment) assignCourse(cols []column, used map[int]bool, targetNames []string, crawledAt time.Time, say func(string, ...any)) {
	var names []int
	for i, c := range cols {
		if c.fits(cells["course"], crawledAt).ok && !used[i] {
			names = append(names, i)
		}
	}
	course := -1
	for _, i := range names {
		n, total := 0, 0
		for _, v := range cols[i].values {
			if v == "" {
				continue
			}
			total++
			switch {
			case len(targetNames) > 0 && slices.Contains(targetNames, crawler.CleanText(v)):
				n++
			case len(targetNames) == 0 && (looksLikeClub(v) || hint("course", cols[i].name) > 0 && hint("course_part", cols[i].name) == 0):
				n++
			}
		}
		if n > 0 && n*5 >= total*4 {
			course = i
			what := "read like a club's name"
			if len(targetNames) > 0 {
				what = "are a given target's name"
			}
			say("course ← %s: %d of %d rows %s", cols[i].label(), n, total, what)
			break
		}
	}
	switch {
	case course >= 0:
		a.fields["course"] = pick{where: cols[course].where}
		used[course] = true
	case len(targetNames) > 0:
		a.fields["course"] = pick{value: "{{.Target.name}}"}
		say("course ← {{.Target.name}}: no column names a given target, so the club's name comes from the target")
	default:
		a.missing = append(a.missing, "course")
		say("course: no column reads like a club's name and no --target was given; give --target 'id=...,name=...'")
	}
	part, partH := -1, -1
	for _, i := range names {
		if used[i] {
			continue
		}
		if h := hint("course_part", cols[i].name); h > partH {
			part, partH = i, h
		}
	}
	if part >= 0 {
		a.fields["course_part"] = pick{where: cols[part].where}
		f := cols[part].fits(cells["course_part"], crawledAt)
		say("course_part ← %s: %d of %d rows hold a name beside the club's (%s)", cols[part].label(), f.n, f.rows, sample(cols[part].values))
		return
	}
	// A club without parts sends the part's member empty: one named like a course still is the
	// part, for the clubs that have them.
	for i, c := range cols {
		if used[i] || sample(c.values) != "" || hint("course", c.name)+hint("course_part", c.name) == 0 {
			continue
		}
		a.fields["course_part"] = pick{where: c.where}
		say("course_part ← %s: empty in all %d rows, but named like a course: the part, for clubs that have parts (low confidence)", c.label(), len(c.values))
		return
	}
}

func (c column) label() string {
	if c.name != "" && c.name != c.where {
		return fmt.Sprintf("%s (%s)", c.where, c.name)
	}
	return c.where
}

func hintNote(field, name string) string {
	if hint(field, name) > 0 {
		return ", and its name says so"
	}
	return ""
}

// sample is up to three distinct values, for the evidence.
func sample(values []string) string {
	var out []string
	for _, v := range values {
		v = crawler.CleanText(v)
		if v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
		if len(out) == 3 {
			break
		}
	}
	return strings.Join(out, ", ")
}
