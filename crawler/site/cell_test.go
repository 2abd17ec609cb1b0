package site

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// cellSample is a test row's text for one cell: good and other are valid and give different
// listings; bad (when the cell can reject a row) fails with reason.
type cellSample struct {
	good, other string
	bad, reason string
}

// cellSamples holds one sample per row of cellTable; a new cell needs one here, and one of its two
// valid values has one of the cell's shapes (TestNameIsNoOtherCellsShape).
var cellSamples = map[string]cellSample{
	"course":      {"Lake CC", "Hill CC", " ", RejectMissingCourse},
	"course_part": {"East", "West", "", ""},
	"round_date":  {"2026-05-01", "05/02", "not a date", RejectBadRoundDate},
	"tee_time":    {"07:30", "08:00", "25:99", RejectBadTeeTime},
	"price":       {"150,000", "160,000", "abc", RejectBadPrice},
	"players":     {"4", "3", "many", RejectBadPlayers},
}

// Every row of cellTable is whole: a unique name, a way into the listing and out of it (try's
// table), and what suggest recognises it by. A fields key that names no cell is an error naming
// the cells.
func TestCellTableRowsAreWhole(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, c := range cellTable {
		if seen[c.Name] {
			t.Errorf("cell %s is listed twice", c.Name)
		}
		seen[c.Name] = true
		if c.set == nil && c.parse == nil {
			t.Errorf("cell %s never reaches the listing (no set, no parse)", c.Name)
		}
		if c.Columns == nil || len(c.Shapes) == 0 || len(c.hints) == 0 {
			t.Errorf("cell %s needs show, shapes and hints", c.Name)
		}
	}
	var b strings.Builder
	b.WriteString("sites:\n  - name: cells\n    start_urls: [\"http://127.0.0.1:8089/x\"]\n    row: tr.r\n    fields:\n")
	for _, c := range cellTable {
		fmt.Fprintf(&b, "      %s: {selector: td.%s}\n", c.Name, c.Name)
	}
	b.WriteString("      green_speed: {selector: td.green_speed}\n")
	_, err := ParseSites([]byte(b.String()))
	if want := "fields.green_speed is not a cell; the cells are " + cellNames(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("an unknown fields key: %v, want %q", err, want)
	}
}

// cellSite is a sites file reading every cell of cellTable from td.<name>.
func cellSite(t testing.TB) *Site {
	t.Helper()
	var b strings.Builder
	b.WriteString("sites:\n  - name: cells\n    start_urls: [\"http://127.0.0.1:8089/x\"]\n    row: tr.r\n    fields:\n")
	for _, c := range cellTable {
		fmt.Fprintf(&b, "      %s: {selector: td.%s}\n", c.Name, c.Name)
	}
	sites, err := ParseSites([]byte(b.String()))
	if err != nil {
		t.Fatalf("a sites file with every cell key: %v\n%s", err, b.String())
	}
	return sites[0]
}

// cellRow is one raw row of good samples with cell i's text replaced by text (i < 0: none
// replaced), as a page would give it (crawler's TestEveryCellReachesTheRawRow checks that pages do).
func cellRow(t *testing.T, i int, text string) RawRow {
	t.Helper()
	var r RawRow
	for j, c := range cellTable {
		s, ok := cellSamples[c.Name]
		if !ok {
			t.Fatalf("cell %s has no cellSamples entry", c.Name)
		}
		r.v[j] = s.good
		if j == i {
			r.v[j] = text
		}
	}
	return r
}

// Every cell key is accepted in a sites file, reaches the raw row and its log form, changes the
// listing, and rejects a bad value with its reason.
func TestEveryCellIsWired(t *testing.T) {
	t.Parallel()
	site := cellSite(t)
	base := "http://127.0.0.1:8089/x"
	at := time.Date(2026, 4, 20, 9, 0, 0, 0, Seoul())
	parse := func(t *testing.T, i int, text string) (RawRow, string, string, error) {
		t.Helper()
		row := cellRow(t, i, text)
		l, reason, err := site.Listing(row, base, at)
		return row, fmt.Sprintf("%+v", l), reason, err
	}
	_, want, _, err := parse(t, -1, "")
	if err != nil {
		t.Fatalf("the good row is rejected: %v", err)
	}
	for i, c := range cellTable {
		t.Run(c.Name, func(t *testing.T) {
			s := cellSamples[c.Name]
			row, got, _, err := parse(t, i, s.other)
			if err != nil {
				t.Fatalf("%s %q is rejected: %v", c.Name, s.other, err)
			}
			if row.v[i] != s.other || !strings.Contains(row.String(), fmt.Sprintf("=%q", s.other)) {
				t.Errorf("%q is not the raw row's %s: %s", s.other, c.Name, row)
			}
			if got == want {
				t.Errorf("%s %q and %q give the same listing %s", c.Name, s.good, s.other, got)
			}
			if s.reason == "" {
				return
			}
			if _, _, reason, err := parse(t, i, s.bad); reason != s.reason || err == nil {
				t.Errorf("%s %q: reason %q (%v), want %q", c.Name, s.bad, reason, err, s.reason)
			}
		})
	}
}

// A required cell left out of the sites file is an error naming it; an optional one is not.
func TestRequiredCellsAreRequired(t *testing.T) {
	t.Parallel()
	for _, c := range cellTable {
		var b strings.Builder
		b.WriteString("sites:\n  - name: cells\n    start_urls: [\"http://127.0.0.1:8089/x\"]\n    row: tr.r\n    fields:\n")
		for _, o := range cellTable {
			if o.Name != c.Name {
				fmt.Fprintf(&b, "      %s: {selector: td.%s}\n", o.Name, o.Name)
			}
		}
		_, err := ParseSites([]byte(b.String()))
		want := fmt.Sprintf("fields.%s needs a selector, attr, path or value; course, round_date and tee_time are required", c.Name)
		if c.Required && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("without %s: %v, want %q", c.Name, err, want)
		}
		if !c.Required && err != nil {
			t.Errorf("without the optional %s: %v", c.Name, err)
		}
	}
}

// A lenient cell's bad value leaves the cell unknown and keeps the row; the same value in a strict
// cell rejects the row. Not parallel: it flips price's row of the shared table for its duration
// (parallel tests wait until the sequential ones are done).
func TestLenientCellLeavesUnknown(t *testing.T) {
	site := cellSite(t)
	base := "http://127.0.0.1:8089/x"
	at := time.Date(2026, 4, 20, 9, 0, 0, 0, Seoul())
	price := CellIndex("price")
	read := func() (string, error) {
		l, reason, err := site.Listing(cellRow(t, price, "abc"), base, at)
		if err == nil && l.PriceKRW != nil {
			t.Errorf("a bad price kept a value: %d", *l.PriceKRW)
		}
		return reason, err
	}
	if reason, err := read(); reason != RejectBadPrice || err == nil {
		t.Fatalf("strict: reason %q (%v), want %s", reason, err, RejectBadPrice)
	}
	cellTable[price].Lenient = true
	t.Cleanup(func() { cellTable[price].Lenient = false })
	if reason, err := read(); err != nil {
		t.Errorf("lenient: the row is rejected (%s): %v", reason, err)
	}
}

// The identity cells are the ones a listing's key is made of: another value of one is another
// listing, another value of any other cell the same listing changed.
func TestIdentityCellsMakeTheKey(t *testing.T) {
	t.Parallel()
	site := cellSite(t)
	base := "http://127.0.0.1:8089/x"
	at := time.Date(2026, 4, 20, 9, 0, 0, 0, Seoul())
	key := func(i int, text string) string {
		l, _, err := site.Listing(cellRow(t, i, text), base, at)
		if err != nil {
			t.Fatal(err)
		}
		return l.Key()
	}
	want := key(-1, "")
	for i, c := range cellTable {
		if changed := key(i, cellSamples[c.Name].other) != want; changed != c.Identity {
			t.Errorf("cell %s: identity %v, but another value changes the key: %v", c.Name, c.Identity, changed)
		}
	}
}

// Every field of events.Listing is filled from a row of good samples: a field no cell (and not the
// site) sets would be null in every event, so a new field needs its cellTable row.
func TestEveryListingFieldHasACell(t *testing.T) {
	t.Parallel()
	site := cellSite(t)
	base := "http://127.0.0.1:8089/x"
	l, _, err := site.Listing(cellRow(t, -1, ""), base, time.Date(2026, 4, 20, 9, 0, 0, 0, Seoul()))
	if err != nil {
		t.Fatal(err)
	}
	v := reflect.ValueOf(l)
	for _, f := range reflect.VisibleFields(v.Type()) {
		if f.Anonymous {
			continue // Values: its fields are visited one by one
		}
		if v.FieldByIndex(f.Index).IsZero() {
			t.Errorf("events.Listing.%s is set by no cell: give it a row in cellTable (cell.go), or it is null in every event", f.Name)
		}
	}
}
