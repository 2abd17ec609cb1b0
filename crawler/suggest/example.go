package suggest

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// An example is what the golfer's screen shows for one tee time (--example): the one witness
// that tells a green fee from a cart fee. It binds: the entry must read every one of its values
// in one row of the page (the example row: the row that shows all of them, not only its tee
// time), and of a cell's candidates only those that read the value there stay.
type example struct {
	given  string // as given, for what is said
	values []exampleValue
}

// exampleValue is one value of an example: the cell it is given for, or nameCell for a name
// read out of a row of text (the course or its part, whichever column shows it).
type exampleValue struct {
	cell string
	text string
}

// nameCell is the cell of a name in a row of text: course or course_part.
const nameCell = "name"

func (v exampleValue) String() string {
	if v.cell == nameCell {
		return fmt.Sprintf("the name %q", v.text)
	}
	return fmt.Sprintf("%s %q", v.cell, v.text)
}

// forCell reports whether v is a value of cell (a name is the course's or the part's).
func (v exampleValue) forCell(cell string) bool {
	return v.cell == cell || v.cell == nameCell && (cell == "course" || cell == "course_part")
}

// reFieldValue is the field=value form of --example: a cell's name, then its value.
var reFieldValue = regexp.MustCompile(`^\s*([a-z_]+)\s*=\s*(.*?)\s*$`)

// parseExamples reads the --example values: each row of text is one example; every field=value
// one together are one more (what the page shows for one tee time, given cell by cell).
func parseExamples(given []string) ([]example, error) {
	var out []example
	var fields example
	for _, g := range given {
		if m := reFieldValue.FindStringSubmatch(g); m != nil {
			if _, ok := cells[m[1]]; !ok {
				return nil, fmt.Errorf("--example %q: %s is not a cell; give a row of text as the page shows it, or cell=value with a cell of %s",
					g, m[1], strings.Join(cellNamesList(), ", "))
			}
			if strings.TrimSpace(m[2]) == "" {
				return nil, fmt.Errorf("--example %q: no value", g)
			}
			fields.values = append(fields.values, exampleValue{cell: m[1], text: m[2]})
			fields.given = strings.TrimSpace(strings.Join([]string{fields.given, g}, " "))
			continue
		}
		values := splitRow(g)
		if len(values) == 0 {
			return nil, fmt.Errorf("--example %q: no value", g)
		}
		out = append(out, example{given: g, values: values})
	}
	if len(fields.values) > 0 {
		out = append(out, fields)
	}
	return out, nil
}

func cellNamesList() []string {
	var out []string
	for _, c := range site.Cells() {
		out = append(out, c.Name)
	}
	return out
}

// rowShapes are what a word (or a run of up to three words: 06시 30분, 160,000 원) of a row of
// text is, in the order they are tried: the crawler's own shapes, the most telling first, so that
// 0630 is a time, 160000 a price and 4 a player count; what none takes is a name.
var rowShapes = func() []struct {
	cell  string
	shape site.Shape
} {
	var out []struct {
		cell  string
		shape site.Shape
	}
	add := func(cell string, i int) {
		out = append(out, struct {
			cell  string
			shape site.Shape
		}{cell, cells[cell].Shapes[i]})
	}
	add("round_date", 0)
	add("tee_time", 0) // 06:30, 06시 30분
	add("price", 0)    // 160,000원, 14만5천원
	add("players", 0)  // 4, 4명
	add("tee_time", 1) // 0630
	add("price", 1)    // 160000
	return out
}()

// reFullDate is a play date with its year in a row of text (2026-12-06, 2026.12.06, 20261206).
var reFullDate = regexp.MustCompile(`^(?:19|20)\d\d[-./]?(?:0[1-9]|1[0-2])[-./]?(?:0[1-9]|[12]\d|3[01])(?:\s*\(.\))?$`)

// splitRow splits a row of text as the page shows one tee time ('12/06 06:30 샤인코스 160,000원
// 4명') into its values by the crawler's shapes; the words no shape takes, next to each other,
// are one name.
func splitRow(text string) []exampleValue {
	words := strings.Fields(site.CleanText(text))
	var out []exampleValue
	var name []string
	flush := func() {
		if len(name) > 0 {
			out = append(out, exampleValue{cell: nameCell, text: strings.Join(name, " ")})
			name = nil
		}
	}
	for i := 0; i < len(words); {
		cell, n := "", 0
		for span := min(3, len(words)-i); span >= 1 && cell == ""; span-- {
			s := strings.Join(words[i:i+span], " ")
			if reFullDate.MatchString(s) {
				cell, n = "round_date", span
				break
			}
			for _, rs := range rowShapes {
				if rs.shape.Match(s) {
					cell, n = rs.cell, span
					break
				}
			}
		}
		if cell == "" {
			name = append(name, words[i])
			i++
			continue
		}
		flush()
		out = append(out, exampleValue{cell: cell, text: strings.Join(words[i:i+n], " ")})
		i += n
	}
	flush()
	return out
}

// reads reports whether a row's raw value says the example's value: the same value once both are
// normalised as the crawl normalises them (a price, a tee time, a player count, a play date at
// crawledAt), or for a name, one containing the other once cleaned (nameKey).
func (v exampleValue) reads(raw string, cell string, crawledAt time.Time) bool {
	switch cell {
	case "tee_time":
		a, errA := site.ParseTeeTime(v.text)
		b, errB := site.ParseTeeTime(raw)
		return errA == nil && errB == nil && a == b
	case "price":
		a, errA := site.ParsePrice(v.text)
		b, errB := site.ParsePrice(raw)
		return errA == nil && errB == nil && a != nil && b != nil && *a == *b && *a > 0
	case "players":
		a, errA := site.ParsePlayers(v.text)
		b, errB := site.ParsePlayers(raw)
		return errA == nil && errB == nil && a != nil && b != nil && *a == *b
	case "round_date":
		a, errA := exampleDate(v.text, crawledAt)
		b, errB := site.PlayDate(raw, crawledAt)
		return errA == nil && errB == nil && a == b
	}
	a, b := nameKey(v.text), nameKey(raw)
	return a != "" && b != "" && (strings.Contains(a, b) || strings.Contains(b, a))
}

// exampleDate is the play date an example's date says: a full date as it is, a year-less one
// read as the crawl reads a row's (the year inferred at crawledAt).
func exampleDate(text string, crawledAt time.Time) (string, error) {
	s := site.CleanText(text)
	if reFullDate.MatchString(s) {
		digits := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, s)
		if d, err := time.Parse("20060102", digits[:8]); err == nil {
			return d.Format("2006-01-02"), nil
		}
	}
	return site.PlayDate(s, crawledAt)
}

// reNameNoise is what a name drops before two names are compared: 코스, course, CC and spaces
// (샤인코스 and 샤인, "Lake Course" and LAKE, 레이크 CC and 레이크).
var reNameNoise = regexp.MustCompile(`(?i)코스|course|\bc\.?c\b|\s+`)

// nameKey is a name cleaned for comparison: lower case, without reNameNoise.
func nameKey(s string) string {
	return reNameNoise.ReplaceAllString(strings.ToLower(site.CleanText(s)), "")
}

// exampleCells are the cells an example value may be read as, in the order they are bound.
func (v exampleValue) cells() []string {
	if v.cell == nameCell {
		return []string{"course_part", "course"}
	}
	return []string{v.cell}
}

// hasCell reports whether the example gives a value for cell (a name counts for both the course
// and its part).
func (e example) hasCell(cell string) bool {
	return slices.ContainsFunc(e.values, func(v exampleValue) bool { return v.forCell(cell) })
}
