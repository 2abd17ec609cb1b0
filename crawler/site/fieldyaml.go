package site

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// The YAML form of a field, whose selector and path may be lists of sources, and the line of a
// key that a site's compile error names (withLine). Field's UnmarshalYAML decodes it alone,
// without the sites file's strict decoder, so it checks its keys itself (strictKeys) and reports
// every problem with its line, as the strict decoder does.

// strictKeys reports n's keys that are not among known, as yaml's strict decoder words it.
func strictKeys(n *yaml.Node, typ string, known ...string) []string {
	var errs []string
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		ok := false
		for _, name := range known {
			ok = ok || k.Value == name
		}
		if !ok {
			errs = append(errs, fmt.Sprintf("line %d: field %s not found in type %s", k.Line, k.Value, typ))
		}
	}
	return errs
}

// typeErrors is errs as the yaml decoder reports unmarshal errors (nil for none), so that the
// decoder goes on and reports the rest of the file's too.
func typeErrors(errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return &yaml.TypeError{Errors: errs}
}

// fieldShape is a field as a sites file writes it: the keys the shape check (sitesfile.go) walks
// for a Field, which reads itself.
type fieldShape struct {
	Selector sourcesShape `yaml:"selector"`
	Column   int          `yaml:"column"`
	Attr     string       `yaml:"attr"`
	Regex    string       `yaml:"regex"`
	Path     sourcesShape `yaml:"path"`
	Group    int          `yaml:"group"`
	GroupKey int          `yaml:"group_key"`
	Value    string       `yaml:"value"`
}

// sourcesShape is a selector or path as written: a text, or a list of texts in order. The shape
// check leaves it to Field's UnmarshalYAML (sourceList), which says what is wrong with it.
type sourcesShape struct{}

func (*sourcesShape) UnmarshalYAML(*yaml.Node) error { return nil }

// writtenAs are the types whose YAML the shape check walks as another type's: those that read
// themselves but whose keys it still checks.
var writtenAs = map[reflect.Type]reflect.Type{reflect.TypeFor[Field](): reflect.TypeFor[fieldShape]()}

// fieldKeys are a field's keys, in the order a field is written.
var fieldKeys, _ = yamlKeys(reflect.TypeFor[fieldShape]())

// UnmarshalYAML reads a field: selector and path are one source (`path: BK_CHARGE`) or a list of
// them in order (`path: [BK_S_CHARGE_NM, BK_B_CHARGE_NM]`: Path and Fallbacks).
func (f *Field) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return typeErrors([]string{fmt.Sprintf("line %d: a field is a mapping, such as {selector: td.time} or {path: bookTime}", n.Line)})
	}
	errs := strictKeys(n, "site.Field", fieldKeys...)
	*f = Field{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		var err error
		switch k {
		case "selector", "path":
			var srcs []string
			if srcs, err = sourceList(k, v); err == nil {
				if k == "selector" {
					f.Selector = srcs[0]
				} else {
					f.Path = srcs[0]
				}
				f.Fallbacks = append(f.Fallbacks, srcs[1:]...)
			}
		case "attr":
			err = v.Decode(&f.Attr)
		case "regex":
			err = v.Decode(&f.Regex)
		case "value":
			err = v.Decode(&f.Value)
		case "column":
			err = v.Decode(&f.Column)
		case "group":
			err = v.Decode(&f.Group)
		case "group_key":
			err = v.Decode(&f.GroupKey)
		}
		if te, ok := errors.AsType[*yaml.TypeError](err); ok {
			errs = append(errs, te.Errors...)
		} else if err != nil {
			errs = append(errs, err.Error())
		}
	}
	return typeErrors(errs)
}

// sourceList reads a selector or path: a string, or a non-empty list of strings.
func sourceList(key string, v *yaml.Node) ([]string, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		return []string{v.Value}, nil
	case yaml.SequenceNode:
		var out []string
		for _, e := range v.Content {
			if e.Kind != yaml.ScalarNode || e.Value == "" {
				return nil, fmt.Errorf("line %d: %s: every source of the list is a non-empty string", e.Line, key)
			}
			out = append(out, e.Value)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("line %d: %s: an empty list; give one source, or several in order", v.Line, key)
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: %s is a string, or a list of strings tried in order", v.Line, key)
}

// fieldYAML is a field as it is written: a single source as a string (so that an entry without
// fallbacks reads as it always did), several as a flow list.
type fieldYAML struct {
	Selector any    `yaml:"selector,omitempty"`
	Column   int    `yaml:"column,omitempty"`
	Attr     string `yaml:"attr,omitempty"`
	Regex    string `yaml:"regex,omitempty"`
	Path     any    `yaml:"path,omitempty"`
	Group    int    `yaml:"group,omitempty"`
	GroupKey int    `yaml:"group_key,omitempty"`
	Value    string `yaml:"value,omitempty"`
}

// MarshalYAML writes the field as UnmarshalYAML reads it.
func (f Field) MarshalYAML() (any, error) {
	out := fieldYAML{Column: f.Column, Attr: f.Attr, Regex: f.Regex, Group: f.Group, GroupKey: f.GroupKey, Value: f.Value}
	sources := func(first string) any {
		if len(f.Fallbacks) == 0 {
			return first
		}
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, s := range append([]string{first}, f.Fallbacks...) {
			seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
		}
		return seq
	}
	switch {
	case f.Path != "":
		out.Path = sources(f.Path)
		if f.Selector != "" {
			out.Selector = f.Selector
		}
	case f.Selector != "":
		out.Selector = sources(f.Selector)
	}
	return out, nil
}

// keyError is a compile error about one key of a site (fields.price, requests[1].capture.csrf,
// json.rows): withLine names the line where the sites file writes it.
type keyError struct {
	key string // dot-separated, [N] for a list's element
	err error
}

func (e *keyError) Error() string { return e.err.Error() }
func (e *keyError) Unwrap() error { return e.err }

// withLine is the compile error err of the i-th site of the sites file b, named name, with the
// line of the key it is about ("line 12: site "s": fields.price: ..."); err as it is when it is
// about no key or the key is not written in b.
func withLine(b []byte, i int, name string, err error) error {
	ke, ok := errors.AsType[*keyError](err)
	if !ok {
		return err
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil {
		return err
	}
	n := lookup(&doc, "sites")
	if n = element(n, i); n == nil {
		return err
	}
	for _, part := range strings.Split(ke.key, ".") {
		k, idx, _ := strings.Cut(part, "[")
		if n = lookup(n, k); n != nil && idx != "" {
			j, _ := strconv.Atoi(strings.TrimSuffix(idx, "]"))
			n = element(n, j)
		}
		if n == nil {
			return err
		}
	}
	return fmt.Errorf("line %d: site %q: %w", n.Line, name, ke)
}

// lookup is the value of key in the mapping n (a document, aliases followed); nil without one.
func lookup(n *yaml.Node, key string) *yaml.Node {
	n = resolve(n)
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = resolve(n.Content[0])
	}
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		if n.Content[j].Value == key {
			return resolve(n.Content[j+1])
		}
	}
	return nil
}

// element is the i-th element of the sequence n; nil without one.
func element(n *yaml.Node, i int) *yaml.Node {
	if n = resolve(n); n == nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
		return nil
	}
	return resolve(n.Content[i])
}

// resolve follows an alias to its anchor's node.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}
