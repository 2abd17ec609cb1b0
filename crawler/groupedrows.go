package crawler

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// jsonRow is one row of a JSON answer with the groups it was found in (a rows path with []):
// the element taken at each [] of the rows path, outermost first, and its key there (an object
// member's name; "" for an array's element). The row itself is the last.
type jsonRow struct {
	groups []gjson.Result
	keys   []string
	index  int // its place among the answer's rows
}

func (r jsonRow) row() gjson.Result { return r.groups[len(r.groups)-1] }

// flattenRows reads the rows of doc at a rows path split at its [] (rowsPathLevels): the value at
// the first part, each of its elements (or members) read at the next part, and so on; the
// elements taken at the last [] are the rows. A value that is neither an array nor an object
// where rows or groups should be is the answer changing shape: an error; a group without the
// next part (absent or null) has no rows.
func flattenRows(doc gjson.Result, parts []string) ([]jsonRow, error) {
	top := doc
	if parts[0] != "" {
		top = doc.Get(parts[0])
	}
	if !top.IsArray() && !top.IsObject() {
		what := "absent"
		if top.Exists() {
			what = truncate(top.Raw, 64)
		}
		return nil, fmt.Errorf("rows path %q: %s is %s, not an array or object: the response changed shape", strings.Join(parts, "[]"), parts[0], what)
	}
	level := []jsonRow{{groups: []gjson.Result{top}}} // a root whose one group is the top value
	for i := 1; i < len(parts); i++ {
		var next []jsonRow
		for _, g := range level {
			v := g.row()
			if i > 1 && parts[i-1] != "" {
				v = v.Get(strings.TrimPrefix(parts[i-1], "."))
			}
			if !v.Exists() || v.Type == gjson.Null {
				continue
			}
			if !v.IsArray() && !v.IsObject() {
				return nil, fmt.Errorf("rows path %q: a group's %q is %s, not an array or object: the response changed shape",
					strings.Join(parts, "[]"), parts[i-1], truncate(v.Raw, 64))
			}
			v.ForEach(func(k, e gjson.Result) bool {
				key := ""
				if v.IsObject() {
					key = k.String()
				}
				next = append(next, jsonRow{groups: append(g.groups[:len(g.groups):len(g.groups)], e), keys: append(g.keys[:len(g.keys):len(g.keys)], key)})
				return true
			})
		}
		level = next
	}
	for i := range level {
		level[i].groups = level[i].groups[1:] // without the root
		level[i].index = i
	}
	return level, nil
}
