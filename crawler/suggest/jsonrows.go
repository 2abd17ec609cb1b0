package suggest

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"sort"
	"strings"
	"time"
)

// jsonRows is the array of rows found in a JSON answer: its gjson path and its columns.
type jsonRows struct {
	path string
	rows int
	cols []column
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
	if err := ctx.Err(); err != nil {
		return jsonRows{}, false, err
	}
	return best, bestN > 0, nil
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
	return cols
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
