package site

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// Where a cell's value comes from, beyond one selector or path: fallback sources tried in order
// (`path: [BK_S_CHARGE_NM, BK_B_CHARGE_NM]`, value last), a column of a table read as its grid
// (column: N with grid: true), and the group a JSON row was found in (group: N with path,
// group_key: N).

// Sources are the field's row sources in order: its selector or path, then its fallbacks.
func (f Field) Sources() []string {
	first := f.Path
	if first == "" {
		first = f.Selector
	}
	if first == "" {
		return nil
	}
	return append([]string{first}, f.Fallbacks...)
}

// fromRow reports whether the field reads the row: a selector, attr, column, path or group key.
func (f Field) fromRow() bool { return f.Configured() || f.Path != "" || f.GroupKey > 0 }

// hasFallback reports whether the field names more than one source: several selectors or paths,
// or value after a row source.
func (f Field) hasFallback() bool {
	return len(f.Fallbacks) > 0 || (f.Value != "" && f.fromRow())
}

// compileSourcesOf checks the keys of a field beyond one selector or path. It runs before the
// other field checks, whose messages assume one source.
func (s *Site) compileSourcesOf(c *Cell, f *CompiledField) error {
	name := c.Name
	switch {
	case f.hasFallback() && c.Identity:
		return fmt.Errorf("fields.%s: fallback sources (%s) are for cells that identify nothing, such as price and players: "+
			"%s is part of a listing's key, and a switch between sources would change the key and its event ids", name, f.describeSources(), name)
	case len(f.Fallbacks) > 0 && f.Path == "" && f.Selector == "":
		return fmt.Errorf("fields.%s: fallbacks follow a selector or a path", name)
	case strings.Contains(f.Value, ".Captured"):
		return fmt.Errorf("fields.%s: value reads a captured value, which is a secret: it never goes into a listing", name)
	case strings.Contains(f.Value, ".Env"):
		return fmt.Errorf("fields.%s: value reads an env value, the golfer's own and a secret: it never goes into a listing", name)
	case f.Column < 0:
		return fmt.Errorf("fields.%s: column is %d; columns count from 1", name, f.Column)
	case f.Column > 0 && !s.Grid:
		return fmt.Errorf("fields.%s: column counts the columns of the rendered grid: set grid: true on the site", name)
	case f.Column > 0 && f.Path != "":
		return fmt.Errorf("fields.%s: column is a table's (format html); path is format json's", name)
	}
	if f.Group == 0 && f.GroupKey == 0 {
		return nil
	}
	levels := 0
	if s.JSON != nil {
		levels = len(s.JSON.RowsLevels()) - 1
	}
	switch {
	case s.Format != FormatJSON:
		return fmt.Errorf("fields.%s: group and group_key read the groups of a JSON rows path", name)
	case levels < 2:
		return fmt.Errorf("fields.%s: group and group_key read the groups of a rows path that flattens groups, such as data[].times[] (json.rows is %q)", name, s.JSON.Rows)
	case f.Group != 0 && f.GroupKey != 0:
		return fmt.Errorf("fields.%s: set group (with path: a member of the group) or group_key (the group's key), not both", name)
	case f.Group != 0 && (f.Group < 1 || f.Group >= levels):
		return fmt.Errorf("fields.%s: group is %d; json.rows %q has groups 1 to %d (%d is the row itself: use path alone)", name, f.Group, s.JSON.Rows, levels-1, levels)
	case f.Group != 0 && f.Path == "":
		return fmt.Errorf("fields.%s: group %d reads path in that group: set path", name, f.Group)
	case f.GroupKey != 0 && (f.GroupKey < 1 || f.GroupKey > levels):
		return fmt.Errorf("fields.%s: group_key is %d; json.rows %q has groups 1 to %d", name, f.GroupKey, s.JSON.Rows, levels)
	case f.GroupKey != 0 && f.Path != "":
		return fmt.Errorf("fields.%s: group_key is the group's key; path reads a member: set one of them", name)
	}
	return nil
}

// describeSources is the field's sources as written, for a message: path [a, b], value.
func (f Field) describeSources() string {
	var parts []string
	switch {
	case f.Path != "":
		parts = append(parts, "path "+strings.Join(f.Sources(), ", "))
	case f.Selector != "":
		parts = append(parts, "selector "+strings.Join(f.Sources(), ", "))
	case f.Column > 0:
		parts = append(parts, "column "+strconv.Itoa(f.Column))
	case f.GroupKey > 0:
		parts = append(parts, "group_key "+strconv.Itoa(f.GroupKey))
	}
	if f.Value != "" {
		parts = append(parts, "value")
	}
	return strings.Join(parts, " then ")
}

// gives reports whether raw, the text one of the cell's sources read, is a value: not absent,
// empty, a dash, 마감 or the like (null reads as empty), accepted by the cell's normaliser, and
// for a number cell (price, players) not 0.
func (c *Cell) gives(raw string, at time.Time) bool {
	if unknownValues[cleanForParse(raw)] {
		return false
	}
	if c.parse == nil {
		return true
	}
	var l events.Listing
	if c.parse(&l, raw, at) != nil {
		return false
	}
	for _, col := range c.Columns {
		if v := col.Value(l); v == "" || v == "-" || v == "0" {
			return false
		}
	}
	return true
}

// Read fills the cell of r from the row. read(i) is what the field's i-th source (Sources; a
// field without one, such as column: N alone, has the one source "") reads in the row, false
// when it is absent there; each is narrowed by the field's regex. With one source and no value,
// that source's text, as always (absent or not matching: the cell is missing). With fallbacks,
// the first text that gives a value (gives); when none does, value if the field has one (filled
// in by FromRequest), else the first text present. It reports the source that gave the value in
// r (Sources).
func (c RowCell) Read(r *RawRow, crawledAt time.Time, read func(i int) (string, bool)) {
	n := max(1, len(c.Field.Sources()))
	if !c.Field.hasFallback() {
		v, ok := read(0)
		if ok {
			v, ok = c.Field.Narrow(v)
		}
		if !ok {
			r.Missing = append(r.Missing, c.Name)
			return
		}
		*c.Dst = v
		return
	}
	first, have := "", false
	for i := range n {
		v, ok := read(i)
		if ok {
			v, ok = c.Field.Narrow(v)
		}
		if !ok {
			continue
		}
		if cellTable[c.i].gives(v, crawledAt) {
			*c.Dst, r.given[c.i], r.src[c.i] = v, true, c.Field.sourceLabel(i)
			return
		}
		if !have {
			first, have = v, true
		}
	}
	switch {
	case c.Field.value != nil:
		// FromRequest fills it in
	case have:
		*c.Dst, r.src[c.i] = first, c.Field.sourceLabel(0)
	default:
		r.Missing = append(r.Missing, c.Name)
	}
}

// sourceLabel names the field's i-th source as crawler try shows it.
func (f Field) sourceLabel(i int) string {
	if srcs := f.Sources(); i < len(srcs) {
		return srcs[i]
	}
	if f.Column > 0 {
		return "column " + strconv.Itoa(f.Column)
	}
	return "the row"
}

// Sources are the sources that gave the row's cells, by cell name, for the cells whose field has
// fallbacks: a selector, a path or "value".
func (r RawRow) Sources() map[string]string {
	var out map[string]string
	for i, src := range r.src {
		if src == "" {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[cellTable[i].Name] = src
	}
	return out
}

// FromGroup is what a field with group or group_key reads in a row found in groups: the group's
// key (keys: each group's, "" for an array's element), or which group's member Path names.
func (f Field) FromGroup() (group int, key bool) {
	if f.GroupKey > 0 {
		return f.GroupKey, true
	}
	return f.Group, false
}

// RowsLevels are the parts of a rows path that flattens groups, split at its []
// ("dates[][].times[]" → "dates", "", ".times", ""): the value at the first part, each of its
// elements (or an object's members) read at the next, ...; the last part, after the last [], is
// empty. nil for a rows path without [] (one array of rows).
func (j *JSONPage) RowsLevels() []string {
	if !strings.Contains(j.Rows, "[]") {
		return nil
	}
	return strings.Split(j.Rows, "[]")
}

// checkRowsLevels checks a rows path with []: every part a path (the first may be empty: the
// answer itself), and nothing after the last [].
func (j *JSONPage) checkRowsLevels() error {
	parts := j.RowsLevels()
	if parts[len(parts)-1] != "" {
		return &keyError{key: "json.rows", err: fmt.Errorf("rows path %q: the rows are the elements of the last []: nothing may follow it", j.Rows)}
	}
	for i, p := range parts[:len(parts)-1] {
		p = strings.TrimPrefix(p, ".")
		if p == "" && i == 0 {
			continue
		}
		if p == "" && parts[i] != "" {
			return &keyError{key: "json.rows", err: fmt.Errorf("rows path %q: a lone . between [] and []", j.Rows)}
		}
		if p == "" {
			continue // [][]: the elements of each element
		}
		if err := CheckPath(p); err != nil {
			return &keyError{key: "json.rows", err: fmt.Errorf("rows path %q, part %q: %w", j.Rows, p, err)}
		}
	}
	return nil
}
