package suggest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
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
