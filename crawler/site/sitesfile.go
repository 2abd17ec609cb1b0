package site

import (
	"encoding"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The sites file's own checks, before it is decoded: every key a mapping may not hold and every value
// of the wrong kind, each with its line, where it is in the file (site "name", politeness,
// fields.course, requests[0]) and what is allowed there, in the file's words rather than Go's. The
// keys allowed are the yaml tags of the type the mapping decodes into, so they cannot drift.

// shapeErrors walks the YAML document against the type it decodes into and returns its mistakes.
func shapeErrors(doc *yaml.Node) []error {
	w := &shapeWalker{}
	if len(doc.Content) > 0 {
		w.walk(doc.Content[0], reflect.TypeFor[sitesFile](), "", "")
	}
	return w.errs
}

type shapeWalker struct{ errs []error }

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
var textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()

// walk checks n against t. site names the site n is in (`site "s"`, "" at the top), path where in
// it (fields.course, requests[0]).
func (w *shapeWalker) walk(n *yaml.Node, t reflect.Type, site, path string) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if shape, ok := writtenAs[t]; ok {
		t = shape // a type that reads itself, whose keys are checked here all the same
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textUnmarshalerType) {
		return // reads itself (durations, charsets) and says what is wrong in its own words
	}
	switch t.Kind() {
	case reflect.Struct:
		keys, fields := yamlKeys(t)
		if n.Kind != yaml.MappingNode {
			w.add(n, site, path, "a mapping of %s goes here, not %s", strings.Join(keys, ", "), kindOf(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Tag == "!!merge" {
				w.walk(v, t, site, path)
				continue
			}
			f, ok := fields[k.Value]
			if !ok {
				w.add(k, site, path, "unknown key %q%s; the keys allowed here: %s", k.Value, didYouMean(k.Value, keys), strings.Join(keys, ", "))
				continue
			}
			w.walk(v, f.Type, site, join(path, k.Value))
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			w.add(n, site, path, "a mapping goes here, not %s", kindOf(n))
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			w.walk(n.Content[i+1], t.Elem(), site, join(path, n.Content[i].Value))
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			w.add(n, site, path, "a list goes here, not %s", kindOf(n))
			return
		}
		for i, e := range n.Content {
			s := site
			if t.Elem() == reflect.TypeFor[SiteSpec]() {
				s = siteName(e, i)
			}
			p := path + "[" + strconv.Itoa(i) + "]"
			if s != site {
				p = ""
			}
			w.walk(e, t.Elem(), s, p)
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		if !decodes(n, t) {
			w.add(n, site, path, "%s is not a whole number", valueOf(n))
		}
	case reflect.Float64, reflect.Float32:
		if !decodes(n, t) {
			w.add(n, site, path, "%s is not a number", valueOf(n))
		}
	case reflect.Bool:
		if !decodes(n, t) {
			w.add(n, site, path, "%s is not true or false", valueOf(n))
		}
	case reflect.String:
		if !decodes(n, t) {
			w.add(n, site, path, "a text goes here, not %s", kindOf(n))
		}
	}
}

// decodes says whether the scalar n decodes into a value of type t as the decoder will read it.
func decodes(n *yaml.Node, t reflect.Type) bool {
	return n.Kind == yaml.ScalarNode && n.Decode(reflect.New(t).Interface()) == nil
}

func (w *shapeWalker) add(n *yaml.Node, site, path, format string, a ...any) {
	where := site
	if path != "" {
		where = join2(where, path)
	}
	msg := fmt.Sprintf(format, a...)
	if where != "" {
		msg = where + ": " + msg
	}
	w.errs = append(w.errs, fmt.Errorf("line %d: %s", n.Line, msg))
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func join2(site, path string) string {
	if site == "" {
		return path
	}
	return site + ": " + path
}

// siteName is how an error names the i-th site: by its name, else by its place.
func siteName(n *yaml.Node, i int) string {
	if n.Kind == yaml.MappingNode {
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == "name" && n.Content[j+1].Kind == yaml.ScalarNode && n.Content[j+1].Value != "" {
				return "site " + strconv.Quote(n.Content[j+1].Value)
			}
		}
	}
	return "sites[" + strconv.Itoa(i) + "]"
}

// yamlKeys are the keys of struct t as its yaml tags name them, in field order, and their fields.
func yamlKeys(t reflect.Type) ([]string, map[string]reflect.StructField) {
	var keys []string
	fields := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			k, fs := yamlKeys(f.Type)
			keys = append(keys, k...)
			for n, sf := range fs {
				fields[n] = sf
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		keys = append(keys, name)
		fields[name] = f
	}
	return keys, fields
}

func kindOf(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return valueOf(n)
}

func valueOf(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return strconv.Quote(n.Value)
	}
	return kindOf(n)
}

// didYouMean names the allowed key nearest to k when k looks like a misspelling of it (at most two
// edits, and fewer than half of k's letters).
func didYouMean(k string, keys []string) string {
	best, bestD := "", 3
	for _, c := range keys {
		if d := editDistance(k, c); d < bestD && 2*d < len(k) {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// editDistance is the optimal string alignment distance (insertions, deletions, substitutions and
// transpositions of adjacent letters) between a and b.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}

// yamlErrors is err, a yaml.v3 decode error, as the file's lines ("line N: ...") without yaml's
// own wrapping.
func yamlErrors(err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		errs := make([]error, len(te.Errors))
		for i, e := range te.Errors {
			errs[i] = errors.New(e)
		}
		return errors.Join(errs...)
	}
	return fmt.Errorf("not YAML: %w", err)
}
