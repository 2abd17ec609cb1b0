package site

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// Cell is one cell a site row yields (course, tee time, price, ...), the one place a cell is
// declared: its key under fields in the sites file (also its name in Missing, in the log's raw
// row and in the reject reasons), whether a listing needs it, whether it is part of a listing's
// identity (events.Listing.Key), what a bad value does, how its text becomes part of the
// listing, and what crawler suggest recognises it by (its value shapes and name hints).
type Cell struct {
	Name     string // its key under fields in the sites file
	label    string // its key in the log's raw row (RawRow.String); empty: Name
	Required bool   // a listing needs it (a site must map it)
	Identity bool   // it is part of a listing's identity (events.Listing.Key)
	// Lenient: a value its parse rejects leaves the cell unknown instead of rejecting the row (for
	// a cell that informs and identifies nothing).
	Lenient bool
	// set copies the text into the listing before the bounds check; an error rejects the row as
	// missing_<name>. parse reads the value after the bounds check; an error rejects the row as
	// bad_<name> (or, lenient, leaves the cell unknown). Either may be nil.
	set   func(l *events.Listing, raw string) error
	parse func(l *events.Listing, raw string, crawledAt time.Time) error
	// Columns are the cell's columns in a table of listings (crawler try): one, or for round_date
	// the play date and the text shown; each a header and the value.
	Columns []ShownColumn
	// Shapes are what the cell's values look like, the most telling first; hints are lower-cased
	// substrings of a column's name (JSON member, header, class) that suggest the cell, the
	// strongest first (Hint).
	Shapes []Shape
	hints  []string
}

// cellTable is the one list of cells, in report order: it drives the sites file's fields keys and
// their validation, the raw row and its log form, the reject reasons, the listing, try's table
// and crawler suggest's column assignment. A new cell is a row here and its field in
// events.Listing.
var cellTable = [...]Cell{
	{Name: "course", Required: true, Identity: true,
		set: func(l *events.Listing, raw string) error {
			if l.CourseName = CleanText(raw); l.CourseName == "" {
				return errors.New("the course cell is empty")
			}
			return nil
		},
		Columns: []ShownColumn{{"course", func(l events.Listing) string { return l.CourseName }}},
		Shapes:  []Shape{shapeName},
		hints:   []string{"club", "golf", "골프장", "course_name", "cc_name", "gc", "course"}},
	{Name: "course_part", label: "part", Identity: true,
		set:     func(l *events.Listing, raw string) error { l.CoursePart = CleanText(raw); return nil },
		Columns: []ShownColumn{{"part", func(l events.Listing) string { return l.CoursePart }}},
		Shapes:  []Shape{shapeName},
		hints:   []string{"part", "cos", "코스", "hole", "sub"}},
	{Name: "round_date", Required: true, Identity: true,
		set: func(l *events.Listing, raw string) error { l.RoundDate = strings.TrimSpace(raw); return nil },
		parse: func(l *events.Listing, _ string, at time.Time) (err error) {
			l.PlayDate, err = PlayDate(l.RoundDate, at)
			return err
		},
		Columns: []ShownColumn{{"play_date", func(l events.Listing) string { return l.PlayDate }},
			{"round_date", func(l events.Listing) string { return l.RoundDate }}},
		Shapes: []Shape{shapeYearlessDate},
		hints:  []string{"date", "day", "일자", "날짜", "ymd"}},
	{Name: "tee_time", Required: true, Identity: true,
		parse: func(l *events.Listing, raw string, _ time.Time) (err error) {
			l.TeeTime, err = ParseTeeTime(raw)
			return err
		},
		Columns: []ShownColumn{{"tee_time", func(l events.Listing) string { return l.TeeTime }}},
		Shapes:  []Shape{shapeClockTime, shapeCompactTime},
		hints:   []string{"teetime", "tee_time", "booktime", "time", "시간", "tm", "hour"}},
	// A missing optional cell is an unknown value, like an empty one.
	{Name: "price",
		parse: func(l *events.Listing, raw string, _ time.Time) (err error) {
			l.PriceKRW, err = ParsePrice(raw)
			return err
		},
		Columns: []ShownColumn{{"price", func(l events.Listing) string { return showNumber(l.PriceKRW) }}},
		Shapes:  []Shape{shapeMarkedPrice, shapeBarePrice},
		hints:   []string{"greenfee", "green_fee", "fee", "cost", "price", "amt", "amount", "그린피", "요금", "금액", "charge"}},
	{Name: "players",
		parse: func(l *events.Listing, raw string, _ time.Time) (err error) {
			l.Players, err = ParsePlayers(raw)
			return err
		},
		Columns: []ShownColumn{{"players", func(l events.Listing) string { return showNumber(l.Players) }}},
		Shapes:  []Shape{shapePlayers},
		hints:   []string{"visitor", "people", "player", "person", "cnt", "count", "인원", "pax", "member"}},
}

// ShownColumn is one column of a table of listings: its header and its value in a listing.
type ShownColumn struct {
	Header string
	Value  func(l events.Listing) string
}

// showNumber is an optional number as a table shows it: "-" when unknown.
func showNumber[T int | int64](v *T) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

// The cells that some source reads in a way of its own.
var (
	cellCourse    = CellIndex("course")     // from the request: the page set's course
	cellRoundDate = CellIndex("round_date") // from the request: the page set's play date
)

// CellIndex is the index of the named cell in the cell table (Cells, RawRow); it panics for an
// unknown name (a typo in the caller, found by any test).
func CellIndex(name string) int {
	if i := cellRank(name); i < len(cellTable) {
		return i
	}
	panic("site: no cell " + name)
}

// cellRank is the index of the named cell in cellTable, len(cellTable) for no cell.
func cellRank(name string) int {
	for i, c := range cellTable {
		if c.Name == name {
			return i
		}
	}
	return len(cellTable)
}

// The reasons a row is rejected (crawler.Metrics.RowRejected, and the reason key in the log). The
// missing_<cell> and bad_<cell> reasons are derived from the cell's name in cellTable (cell.go);
// the constants name the ones of today's cells.
const (
	RejectMissingField  = "missing_field" // a required cell is absent or its regex did not match
	RejectMissingCourse = "missing_course"
	RejectBadRoundDate  = "bad_round_date"
	RejectBadTeeTime    = "bad_tee_time"
	RejectBadPrice      = "bad_price"
	RejectBadPlayers    = "bad_players"
	RejectFieldTooLong  = "field_too_long" // a text cell or the listing key is over its events.Max*Bytes bound
)

// rejectReason is the Reject* reason of a cell's failure: missing_<name> when set fails,
// bad_<name> when parse does.
func rejectReason(kind string, c *Cell) string { return kind + "_" + c.Name }

// requiredCells names the required cells for an error message: "course, round_date and tee_time".
func requiredCells() string {
	var names []string
	for _, c := range cellTable {
		if c.Required {
			names = append(names, c.Name)
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// RawRow is one row's cells as the page shows them (entities decoded, not yet trimmed), indexed
// like cellTable; Missing names the configured cells that were absent or did not match their regex.
type RawRow struct {
	v       [len(cellTable)]string
	Missing []string
	Marked  bool // the row matches an empty_when entry (SoldOutMarker)
	// for the cells whose field has fallbacks (sources.go): whether a row source gave a value,
	// and which source gave the cell's text
	given [len(cellTable)]bool
	src   [len(cellTable)]string
}

// SoldOutMarker reports whether a row that did not make a listing (reason) is a sold-out date's
// marker row: it matches empty_when and failed for want of a required cell.
func SoldOutMarker(r RawRow, reason string) bool {
	if !r.Marked {
		return false
	}
	if reason == RejectMissingField {
		return true
	}
	for i := range cellTable {
		c := &cellTable[i]
		if c.Required && (reason == rejectReason("missing", c) || reason == rejectReason("bad", c)) {
			return true
		}
	}
	return false
}

// String renders the row for the log's raw key.
func (r RawRow) String() string {
	var b strings.Builder
	for i, c := range cellTable {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%q", cmp.Or(c.label, c.Name), r.v[i])
	}
	if len(r.Missing) > 0 {
		b.WriteString(" missing=" + strings.Join(r.Missing, ","))
	}
	return b.String()
}

// RowCell is one cell of a raw row: its name (as Missing reports it), the compiled Field that
// reads it, where the row keeps it, and whether a listing needs it.
type RowCell struct {
	Name     string
	Field    *CompiledField
	Dst      *string
	Required bool
	i        int // its index in the cell table
}

// RowCells lists r's cells as the site declares them, in report order.
func (s *Site) RowCells(r *RawRow) []RowCell {
	out := make([]RowCell, len(cellTable))
	for i := range cellTable {
		c := &cellTable[i]
		out[i] = RowCell{c.Name, &s.fields[i], &r.v[i], c.Required, i}
	}
	return out
}

// Listing turns a raw row into a listing of site seen on pageURL during a crawl at crawledAt. On
// error, reason is one of the Reject* constants.
func (s *Site) Listing(r RawRow, pageURL string, crawledAt time.Time) (events.Listing, string, error) {
	for _, m := range r.Missing {
		if cellTable[CellIndex(m)].Required {
			return events.Listing{}, RejectMissingField, fmt.Errorf("required cell %s is missing", m)
		}
	}
	l := events.Listing{Source: s.Name, URL: pageURL}
	for i := range cellTable {
		if c := &cellTable[i]; c.set != nil {
			if err := c.set(&l, r.v[i]); err != nil {
				return events.Listing{}, rejectReason("missing", c), err
			}
		}
	}
	// Bounds first: an overlong cell is junk whatever else it holds, and the key must fit an index.
	if err := l.CheckBounds(); err != nil {
		return events.Listing{}, RejectFieldTooLong, err
	}
	for i := range cellTable {
		c := &cellTable[i]
		if c.parse == nil {
			continue
		}
		read := l
		if err := c.parse(&read, r.v[i], crawledAt); err != nil {
			if c.Lenient {
				continue // the cell stays unknown
			}
			return events.Listing{}, rejectReason("bad", c), err
		}
		l = read
	}
	if err := l.CheckBounds(); err != nil { // the key, now that it has its play date and tee time
		return events.Listing{}, RejectFieldTooLong, err
	}
	return l, "", nil
}

// compileFields checks the fields keys against cellTable and every cell's Field (required ones
// mapped, selectors and regexes valid, the keys of its source), and compiles its regex and value
// template.
func (s *Site) compileFields(fail func(string, ...any) error) error {
	for _, name := range sortedKeys(s.Fields) {
		if cellRank(name) == len(cellTable) {
			return fail("fields.%s is not a cell; the cells are %s", name, cellNames())
		}
	}
	for i := range cellTable {
		name := cellTable[i].Name
		f := &s.fields[i]
		f.Field = s.Fields[name]
		bad := func(err error) error { return fail("%w", &keyError{key: "fields." + name, err: err}) }
		if cellTable[i].Required && !f.mapped() {
			return fail("fields.%s needs a selector, attr, path or value; %s are required", name, requiredCells())
		}
		if err := s.compileSourcesOf(&cellTable[i], f); err != nil {
			return bad(err)
		}
		if err := s.compileField(name, f); err != nil {
			return bad(err)
		}
		if f.Path == "" {
			for _, sel := range f.Sources() {
				if err := checkSelector(sel); err != nil {
					return bad(fmt.Errorf("fields.%s selector %q is invalid: %v", name, sel, err))
				}
			}
		}
		if f.Regex != "" {
			re, err := regexp.Compile(f.Regex)
			if err != nil {
				return bad(fmt.Errorf("fields.%s regex %q does not compile: %v", name, f.Regex, err))
			}
			if re.NumSubexp() != 1 {
				return bad(fmt.Errorf("fields.%s regex %q has %d capture groups; it needs exactly one, the value", name, f.Regex, re.NumSubexp()))
			}
			f.re = re
		}
	}
	return nil
}

// cellNames lists every cell's name, for an error message.
func cellNames() string {
	names := make([]string, len(cellTable))
	for i, c := range cellTable {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// mapped reports whether the field is read from somewhere: the row (selector, attr, path) or the
// request (value).
func (f Field) mapped() bool { return f.fromRow() || f.Value != "" }

// compileField checks the keys of one field that request.go and jsonpage.go added and compiles
// its value template.
func (s *Site) compileField(name string, f *CompiledField) error {
	switch {
	case s.Format == FormatJSON && (f.Selector != "" || f.Attr != ""):
		return fmt.Errorf("fields.%s: format json reads path, not selector or attr", name)
	case s.Format != FormatJSON && f.Path != "":
		return fmt.Errorf("fields.%s: path only applies to format json", name)
	}
	if f.Path != "" {
		for _, p := range f.Sources() {
			if err := CheckPath(p); err != nil {
				return fmt.Errorf("fields.%s path %q: %w", name, p, err)
			}
		}
	}
	if f.Value == "" {
		return nil
	}
	if len(s.Requests) == 0 {
		return fmt.Errorf("fields.%s: value (a field from the request) needs requests", name)
	}
	t, err := parseTemplate("fields."+name, f.Value)
	if err != nil {
		return fmt.Errorf("fields.%s value does not parse: %w", name, err)
	}
	targets := s.Targets
	if len(targets) == 0 {
		targets = []Target{nil}
	}
	for _, tg := range targets {
		if _, err := execTemplate(t, RequestVars{Date: sampleDate, Target: tg}); err != nil {
			return fmt.Errorf("fields.%s value does not execute%s: %w", name, targetLabel(tg), err)
		}
	}
	f.value = t
	return nil
}

// ListingOrReject is one row's outcome: its listing, or why it made none (Reason, a Reject*
// constant, and Err) with its raw cells (RawRow.String).
type ListingOrReject struct {
	Listing events.Listing
	Reason  string
	Err     error
	Raw     string
	// Sources are the sources that gave the cells whose field has fallbacks (RawRow.Sources).
	Sources map[string]string
	// OtherDate: the row is of another play date than its request's (a date read from the row,
	// of a site whose requests name the date): it is no listing of this page, nor a reject.
	OtherDate bool
}

// FromRequest fills the row's cells declared with value from the request's variables, then makes
// the listing. With round_date from the request, play_date is the requested date itself (no year
// inference) and round_date the rendered text.
func (s *Site) FromRequest(r RawRow, vars *RequestVars, pageURL string, crawledAt time.Time) (l ListingOrReject) {
	for _, c := range s.RowCells(&r) {
		if c.Field.value == nil || r.given[c.i] {
			continue
		}
		if c.Field.hasFallback() {
			r.src[c.i] = "value"
		}
		if vars == nil {
			r.Missing = append(r.Missing, c.Name)
			continue
		}
		v, err := execTemplate(c.Field.value, *vars)
		if err != nil {
			r.Missing = append(r.Missing, c.Name)
			continue
		}
		v, ok := c.Field.Narrow(v)
		if !ok {
			r.Missing = append(r.Missing, c.Name)
			continue
		}
		*c.Dst = v
	}
	shown := r.v[cellRoundDate]
	fromReq := s.fields[cellRoundDate].value != nil && vars != nil && !vars.Date.IsZero()
	if fromReq {
		r.v[cellRoundDate] = vars.Date.Format("2006-01-02")
	}
	lst, reason, err := s.Listing(r, pageURL, crawledAt)
	if err == nil && fromReq {
		lst.RoundDate = CleanText(shown)
	}
	if fromReq {
		r.v[cellRoundDate] = shown
	}
	other := err == nil && !fromReq && vars != nil && !vars.Date.IsZero() && s.namesDate &&
		lst.PlayDate != vars.Date.Format("2006-01-02")
	return ListingOrReject{Listing: lst, Reason: reason, Err: err, Raw: r.String(), Sources: r.Sources(), OtherDate: other}
}

// Attribution is what a page set's request names of its listings: the play date when round_date
// comes from the request, the course (cleaned) when course does; empty otherwise.
func (s *Site) Attribution(vars RequestVars) (playDate, course string) {
	if s.fields[cellRoundDate].value != nil && !vars.Date.IsZero() {
		playDate = vars.Date.Format("2006-01-02")
	}
	if t := s.fields[cellCourse].value; t != nil {
		if v, err := execTemplate(t, vars); err == nil {
			if re := s.fields[cellCourse].re; re != nil {
				if m := re.FindStringSubmatch(v); m != nil {
					v = m[1]
				} else {
					v = ""
				}
			}
			course = CleanText(v)
		}
	}
	return playDate, course
}
