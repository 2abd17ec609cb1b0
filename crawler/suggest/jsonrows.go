package suggest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// jsonRows is the array of rows found in a JSON answer: its gjson path and its columns.
type jsonRows struct {
	path string
	rows int
	cols []column
	// grouped: path flattens groups (dates[][].times[]); the groups' members and keys are columns
	grouped bool
}

// findJSONRows walks a JSON document for arrays of objects and returns the one whose members look
// most like tee times (the most rows with one, then the most rows), with its evidence; ok false
// when no array has a member that looks like a tee time.
func findJSONRows(ctx context.Context, body []byte) (best jsonRows, ok bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return jsonRows{}, false, err
	}
	bestN, seen := 0, 0
	walkJSON(doc, nil, func(path []string, arr []any) {
		if seen++; seen%ctxEvery == 0 && ctx.Err() != nil {
			return
		}
		cols := objectColumns(arr[:min(len(arr), SampleRows)])
		if cols == nil {
			return
		}
		n := 0
		for _, c := range cols {
			if f := c.fits(cells["tee_time"], time.Time{}); f.ok && f.n > n {
				n = f.n
			}
		}
		if n > bestN || (n == bestN && n > 0 && len(arr) > best.rows) {
			best, bestN = jsonRows{path: gjsonPath(path), rows: len(arr), cols: cols}, n
		}
	})
	// Rows nested in groups (dates → courses → times): the rows of every group at once, under a
	// rows path that flattens them (dates[][].times[]), with the groups' members and keys as
	// columns of their own.
	for _, g := range groupedRowSets(doc) {
		cols := groupedColumns(g.rows[:min(len(g.rows), SampleRows)])
		n := teeTimes(cols)
		if n > bestN || (n == bestN && n > 0 && len(g.rows) > best.rows) {
			best, bestN = jsonRows{path: g.path, rows: len(g.rows), cols: cols, grouped: true}, n
		}
	}
	if err := ctx.Err(); err != nil {
		return jsonRows{}, false, err
	}
	return best, bestN > 0, nil
}

// groupedRow is a row found in groups: its object and, outermost first, each group's element and
// key (an object member's name; "" for an array's element).
type groupedRow struct {
	row    map[string]any
	groups []any
	keys   []string
}

// groupedSet is the rows under one rows path that flattens groups.
type groupedSet struct {
	path string
	rows []groupedRow
}

// reGroupKey is a member name that is a group's key rather than a name of the answer's shape: a
// date (2025-12-29, 20251229) or a number.
var reGroupKey = regexp.MustCompile(`^(?:\d{4}-?\d{2}-?\d{2}|\d+)$`)

// groupedRowSets finds the arrays of objects that sit in groups: in an array's elements, or in
// the members of an object keyed by dates; their rows path has a [] for each group level (an
// array's elements or an object's members) and for the rows (the language's grouped rows path),
// and the sets of one path are one (every group's rows).
func groupedRowSets(doc any) []groupedSet {
	byPath := map[string]*groupedSet{}
	var order []string
	var walk func(v any, path string, groups []any, keys []string)
	walk = func(v any, path string, groups []any, keys []string) {
		switch t := v.(type) {
		case map[string]any:
			grouping := len(t) > 0
			for k := range t {
				grouping = grouping && reGroupKey.MatchString(k)
			}
			for _, k := range sortedKeys(t) {
				if grouping {
					walk(t[k], path+"[]", append(slices.Clone(groups), t[k]), append(slices.Clone(keys), k))
					continue
				}
				sub := gjsonPath([]string{k})
				if path != "" {
					sub = path + "." + sub
				}
				walk(t[k], sub, groups, keys)
			}
		case []any:
			if len(t) == 0 {
				return
			}
			if _, isObj := t[0].(map[string]any); !isObj {
				return
			}
			if len(groups) > 0 {
				set, ok := byPath[path+"[]"]
				if !ok {
					set = &groupedSet{path: path + "[]"}
					byPath[set.path] = set
					order = append(order, set.path)
				}
				for _, e := range t {
					if obj, ok := e.(map[string]any); ok {
						set.rows = append(set.rows, groupedRow{row: obj, groups: groups, keys: keys})
					}
				}
			}
			for _, e := range t {
				walk(e, path+"[]", append(slices.Clone(groups), e), append(slices.Clone(keys), ""))
			}
		}
	}
	walk(doc, "", nil, nil)
	out := make([]groupedSet, 0, len(order))
	for _, p := range order {
		out = append(out, *byPath[p])
	}
	return out
}

// groupWhere is where a grouped row's group member or key is read: "<L>path" (group: L, path) or
// "<L>#" (group_key: L), L counted from the outermost group, 1 first.
func groupWhere(level int, path string) string { return fmt.Sprintf("<%d>%s", level, path) }

// splitGroupWhere reads groupWhere's form: the level (0: not a group's), the path, and whether it
// is the group's key.
func splitGroupWhere(where string) (level int, path string, key bool) {
	if !strings.HasPrefix(where, "<") {
		return 0, where, false
	}
	l, rest, ok := strings.Cut(where[1:], ">")
	if !ok {
		return 0, where, false
	}
	n, err := strconv.Atoi(l)
	if err != nil {
		return 0, where, false
	}
	return n, rest, rest == "#"
}

// groupedColumns are a grouped set's columns: the rows' own members, then each group's scalar
// members and (for an object's members) its keys.
func groupedColumns(rows []groupedRow) []column {
	objs := make([]any, len(rows))
	for i, r := range rows {
		objs[i] = r.row
	}
	cols := objectColumns(objs)
	if len(rows) == 0 {
		return cols
	}
	for level := range rows[0].groups {
		idx := map[string]int{}
		var added []column
		for r, gr := range rows {
			if level >= len(gr.groups) {
				continue
			}
			if key := gr.keys[level]; key != "" {
				k, ok := idx["#"]
				if !ok {
					k = len(added)
					idx["#"] = k
					added = append(added, column{name: fmt.Sprintf("group %d's key", level+1), where: groupWhere(level+1, "#"), values: make([]string, len(rows))})
				}
				added[k].values[r] = key
			}
			obj, ok := gr.groups[level].(map[string]any)
			if !ok {
				continue
			}
			for _, name := range sortedKeys(obj) {
				var v string
				switch x := obj[name].(type) {
				case string:
					v = html.UnescapeString(x)
				case json.Number:
					v = x.String()
				default:
					continue
				}
				k, ok := idx[name]
				if !ok {
					k = len(added)
					idx[name] = k
					added = append(added, column{name: name, where: groupWhere(level+1, gjsonPath([]string{name})), values: make([]string, len(rows))})
				}
				added[k].values[r] = v
			}
		}
		cols = append(cols, added...)
	}
	return cols
}

// walkJSON calls visit for every array in v (depth first, members in sorted order).
func walkJSON(v any, path []string, visit func(path []string, arr []any)) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			walkJSON(t[k], append(append([]string(nil), path...), k), visit)
		}
	case []any:
		visit(path, t)
		if len(t) > 0 {
			if _, isObj := t[0].(map[string]any); !isObj {
				for i, e := range t {
					walkJSON(e, append(append([]string(nil), path...), itoa(i)), visit)
				}
			}
		}
	}
}

// objectColumns are the scalar members of the objects of arr (one level of nested objects
// flattened to "a.b"), in the order of their first appearance; nil when arr holds no objects.
func objectColumns(arr []any) []column {
	var order []string
	idx := map[string]int{}
	var cols []column
	for r, e := range arr {
		obj, ok := e.(map[string]any)
		if !ok {
			return nil
		}
		flat := map[string]string{}
		var keys []string
		flatten(obj, "", flat, &keys)
		for _, k := range keys {
			i, seen := idx[k]
			if !seen {
				i = len(cols)
				idx[k] = i
				order = append(order, k)
				cols = append(cols, column{name: k, where: gjsonPath(strings.Split(k, "\x00")), values: make([]string, len(arr))})
			}
			cols[i].values[r] = flat[k]
		}
	}
	for i := range cols {
		cols[i].name = strings.ReplaceAll(order[i], "\x00", ".")
	}
	return append(append(cols, listParts(cols)...), derivedParts(cols)...)
}

// A derivation reads a part of every value of a column that has its shape: a column of its own,
// read by the column's path and a regex whose one group is that part.
type derivation struct {
	suffix string         // added to the column's name
	whole  *regexp.Regexp // the shape every non-empty value has; its first group is the part
	regex  string         // the field's regex that reads the part
}

// derivations: the time of a date and a time in one (2025-12-29 06:30, 2025-12-29T06:30:00: the
// crawl's tee time reads a time alone), and an amount without its cents (150000.00, as a
// database's decimal column prints it: the crawl's price reads whole won).
var derivations = []derivation{
	{" (its time)", regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[ T](\d{1,2}:\d{2})(?::\d{2})?$`), `[ T]([0-9]{1,2}:[0-9]{2})`},
	{" (whole won)", regexp.MustCompile(`^(\d+)\.\d{1,2}$`), `^([0-9]+)\.`},
}

// derivedParts are the columns of the derivations whose shape every non-empty value of a column
// has (one value at least).
func derivedParts(cols []column) []column {
	var out []column
	for _, d := range derivations {
		for _, c := range cols {
			n := 0
			for _, v := range c.values {
				if v == "" {
					continue
				}
				if !d.whole.MatchString(v) {
					n = -1
					break
				}
				n++
			}
			if n <= 0 {
				continue
			}
			part := column{name: c.name + d.suffix, where: c.where + regexSep + d.regex, values: make([]string, len(c.values))}
			for r, v := range c.values {
				if m := d.whole.FindStringSubmatch(v); m != nil {
					part.values[r] = m[1]
				}
			}
			out = append(out, part)
		}
	}
	return out
}

// listParts are the parts of the columns whose values are comma-separated lists of one length
// ("21,136000,N": a code, the amount, a flag, as one member): each part a column of its own,
// read by the member's path and a regex whose group is that part. A value that is a price as a
// whole (130,000) is no list.
func listParts(cols []column) []column {
	var out []column
	for _, c := range cols {
		n := 0
		for _, v := range c.values {
			if v == "" {
				continue
			}
			k := strings.Count(v, ",") + 1
			if _, err := site.ParsePrice(v); err == nil || k < 2 || n != 0 && k != n {
				n = -1
				break
			}
			n = k
		}
		if n < 2 {
			continue
		}
		for k := range n {
			part := column{name: fmt.Sprintf("%s[%d]", c.name, k+1), where: c.where + regexSep + listPartRegex(k), values: make([]string, len(c.values))}
			for r, v := range c.values {
				if v != "" {
					part.values[r] = strings.TrimSpace(strings.Split(v, ",")[k])
				}
			}
			out = append(out, part)
		}
	}
	return out
}

// listPartRegex is the regex whose group is part k (0-based) of a comma-separated list.
func listPartRegex(k int) string {
	return `^` + strings.Repeat(`[^,]*,`, k) + `\s*([^,]*?)\s*(?:,|$)`
}

func flatten(obj map[string]any, prefix string, out map[string]string, keys *[]string) {
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		key := prefix + k
		switch v := obj[k].(type) {
		case map[string]any:
			if prefix == "" {
				flatten(v, key+"\x00", out, keys)
			}
		case []any:
		case nil:
			*keys = append(*keys, key)
			out[key] = ""
		case json.Number:
			*keys = append(*keys, key)
			out[key] = v.String()
		case string:
			*keys = append(*keys, key)
			out[key] = html.UnescapeString(v) // as the crawler reads JSON text
		case bool:
			*keys = append(*keys, key)
			if v {
				out[key] = "true"
			} else {
				out[key] = "false"
			}
		}
	}
}

// gjsonPath joins path components into a gjson path, escaping what gjson would read as syntax.
func gjsonPath(path []string) string {
	parts := make([]string, len(path))
	for i, p := range path {
		var b strings.Builder
		for _, r := range p {
			if strings.ContainsRune(`.*?|#@!\=<>%[]{}(),"`+"`", r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		parts[i] = b.String()
	}
	return strings.Join(parts, ".")
}
