package site

import (
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// Shape is a kind of value a cell shows ("a price", "a year-less date"): crawler suggest ranks
// the columns of a page by the shapes of their values to tell which cell each one is. Shapes are
// narrower than the normalisers on purpose (ParsePrice reads "4" as 4 won; only prices ≥ 1,000
// look like prices), and a column is a candidate for a cell only if the cell's normaliser reads
// every value too (Cell.Reads).
type Shape struct {
	Name  string // what the evidence calls it: "a price (130,000원, 14만5천원)"
	match func(s string) bool
	// residual: the shape is what its match takes less what any other shape of the cell table
	// takes (a name is text that is no time, price, count or date), so a new cell's shape is
	// excluded from it without a list to keep ("18홀" is no name once a holes cell has its shape).
	residual bool
}

// Match reports whether v, cleaned (CleanText) and trimmed, has the shape; empty text has none.
func (sh Shape) Match(v string) bool {
	s := strings.TrimSpace(CleanText(v))
	if s == "" || !sh.match(s) {
		return false
	}
	return !sh.residual || !valueShaped(s)
}

// valueShaped reports whether a shape of the cell table that is not residual takes s (cleaned and
// trimmed): the shapes a residual one excludes, read from the table.
func valueShaped(s string) bool {
	for i := range cellTable {
		for _, sh := range cellTable[i].Shapes {
			if !sh.residual && sh.match(s) {
				return true
			}
		}
	}
	return false
}

var (
	reClockMark   = regexp.MustCompile(`(?i)\d\s*(:|시)|오전|오후|\b[ap]\.?m\b`)
	reCompactTime = regexp.MustCompile(`^(0[4-9]|1\d|2[01])[0-5]\d$`)
	rePriceMark   = regexp.MustCompile(`\d,\d{3}|원|[₩￦]|만|천|KRW`)
	reBarePrice   = regexp.MustCompile(`^\d{4,7}$`)
	rePlayerCount = regexp.MustCompile(`^([1-9])\s*(명|인|people|pax)?$`)
	reYearless    = regexp.MustCompile(`^(0?[1-9]|1[0-2])[/.-](0?[1-9]|[12]\d|3[01])(\s*\(.\))?$`)
	reDigitsOnly  = regexp.MustCompile(`^[\d\s.,:/()-]*$`)
)

func teeTimeReads(s string) bool { _, err := ParseTeeTime(s); return err == nil }

func priceAtLeast1000(s string) bool {
	p, err := ParsePrice(s)
	return err == nil && p != nil && *p >= 1000
}

// The shapes of cellTable's cells, each list the most telling first.
var (
	shapeClockTime = Shape{Name: "a time (06:30, 06시 30분, 오전 6:30, 6:30 AM)",
		match: func(s string) bool { return reClockMark.MatchString(s) && teeTimeReads(s) }}
	shapeCompactTime = Shape{Name: "a time (0630)", match: reCompactTime.MatchString}
	shapeMarkedPrice = Shape{Name: "a price (130,000원, ₩150,000, 14만5천원)",
		match: func(s string) bool { return rePriceMark.MatchString(s) && priceAtLeast1000(s) }}
	shapeBarePrice = Shape{Name: "a price (130000)",
		match: func(s string) bool { return reBarePrice.MatchString(s) && priceAtLeast1000(s) }}
	shapePlayers      = Shape{Name: "a player count (1 to 9, 4명)", match: rePlayerCount.MatchString}
	shapeYearlessDate = Shape{Name: "a year-less date (12/05)", match: reYearless.MatchString}
	// A name is text that no other shape of the cell table takes (residual) and that is not a value
	// a site shows instead of a price or count (마감, 문의): a course, a part.
	shapeName = Shape{Name: "a name", residual: true, match: func(s string) bool {
		return !reDigitsOnly.MatchString(s) && len([]rune(s)) <= 40 && !unknownValues[strings.ToLower(s)]
	}}
)

// Cells are the cells in report order (the order of a sites file's fields): the rows of the cell
// table (a copy), as other packages read them: crawler suggest assigns columns to cells by them,
// crawler try shows a listing by them.
func Cells() []Cell { return slices.Clone(cellTable[:]) }

// Hint is how strongly a column's name (a JSON member, a header, a class) suggests the cell: 0
// for none, more for a hint earlier in the cell's list.
func (c Cell) Hint(name string) int {
	n := strings.ToLower(name)
	hs := c.hints
	for i, h := range hs {
		if strings.Contains(n, h) {
			return len(hs) - i
		}
	}
	return 0
}

// Reads reports whether the crawl reads raw as this cell's value at crawledAt, with the same
// normaliser: known is false for a value read as unknown (마감, 문의, a dash). An error is what
// the crawl would reject the row for (or, for a lenient cell, leave unknown).
func (c Cell) Reads(raw string, crawledAt time.Time) (known bool, err error) {
	var l events.Listing
	if c.set != nil {
		if err := c.set(&l, raw); err != nil {
			return false, err
		}
	}
	if c.parse != nil {
		if err := c.parse(&l, raw, crawledAt); err != nil {
			return false, err
		}
	}
	v := c.Columns[0].Value(l)
	return v != "" && v != "-", nil
}
