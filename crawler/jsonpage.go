package crawler

import (
	"errors"
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"

	// gjson reads a value out of a JSON document by a dotted path ("data.teeTimeList",
	// "list.#.bookTime") without decoding the whole document into maps. It was chosen over
	// itchyny/gojq because a sites file needs paths, not a query language: gjson's syntax is what a
	// user writes in minutes, it keeps numbers as their raw text (so "130000" and 130000 read the
	// same), it has no dependencies beyond two small tidwall packages, and it never fails on
	// content, which keeps the decision "does this page look like we expect" in our own code
	// (JSONPage's rows, success and empty_when), where it is explicit and tested.
	"github.com/tidwall/gjson"
)

// JSONPage says how to read a JSON response (format json).
//
// Rows is the gjson path of the array of rows; each field's path is read relative to one row.
// Success, optional, is a condition the response must meet (e.g. resultCode equals "0000"), else
// the page fails. EmptyWhen lists what a sold-out answer looks like (`"list":[]`, `null`, a
// message code): when any holds, the page is complete and has no rows. An equals condition (a
// message code) is tested before Success, since such a code may come with a failure resultCode;
// an is condition (null, empty) only after Success held, and without Success only where its path
// is present (`"list": []`, `"data": null`), so that an error answer lacking it fails. Anything else that is not
// a non-empty array at Rows fails the page, so a changed response never reads as "everything
// sold out" and closes every listing. A row that lacks a required field's path fails the page too
// (the shape changed); a value that does not parse rejects only its row.
type JSONPage struct {
	Rows      string          `yaml:"rows"`
	Success   *JSONCondition  `yaml:"success,omitempty"`
	EmptyWhen []JSONCondition `yaml:"empty_when,omitempty"`
	// NotOpenWhen, shaped like EmptyWhen, recognises the answer for a date not open for booking
	// yet (see SiteSpec.NotOpen): one condition holding is enough.
	NotOpenWhen []JSONCondition `yaml:"not_open_when,omitempty"`
}

// JSONCondition is a test on the value at Path: Equals compares its text (a number's or a
// string's, so "0000" matches "0000" and 0 matches "0"); Is is "null" (null or absent), "absent",
// "empty" (null, absent, "", [] or {}) or "present". Exactly one of Equals and Is is set.
type JSONCondition struct {
	Path   string `yaml:"path"`
	Equals string `yaml:"equals,omitempty"`
	Is     string `yaml:"is,omitempty"`
}

func (j *JSONPage) validate() error {
	if j.Rows == "" {
		return errors.New("rows (the path of the rows array) is required")
	}
	if err := CheckPath(j.Rows); err != nil {
		return fmt.Errorf("rows path %q: %w", j.Rows, err)
	}
	if j.Success != nil {
		if err := j.Success.validate(); err != nil {
			return fmt.Errorf("success: %w", err)
		}
	}
	for i := range j.EmptyWhen {
		if err := j.EmptyWhen[i].validate(); err != nil {
			return fmt.Errorf("empty_when[%d]: %w", i, err)
		}
	}
	for i := range j.NotOpenWhen {
		if err := j.NotOpenWhen[i].validate(); err != nil {
			return fmt.Errorf("not_open_when[%d]: %w", i, err)
		}
	}
	return nil
}

func (c *JSONCondition) validate() error {
	if err := CheckPath(c.Path); err != nil {
		return fmt.Errorf("path %q: %w", c.Path, err)
	}
	switch {
	case c.Equals != "" && c.Is != "":
		return errors.New("set equals or is, not both")
	case c.Equals == "" && c.Is == "":
		return errors.New("set equals (a value) or is (null, absent, empty or present)")
	}
	switch c.Is {
	case "", "null", "absent", "empty", "present":
		return nil
	}
	return fmt.Errorf("is %q: it must be null, absent, empty or present", c.Is)
}

func (c JSONCondition) holds(doc gjson.Result) bool {
	v := doc.Get(c.Path)
	switch c.Is {
	case "null":
		return !v.Exists() || v.Type == gjson.Null
	case "absent":
		return !v.Exists()
	case "present":
		return v.Exists() && v.Type != gjson.Null
	case "empty":
		switch {
		case !v.Exists() || v.Type == gjson.Null:
			return true
		case v.IsArray():
			return len(v.Array()) == 0
		case v.IsObject():
			return len(v.Map()) == 0
		case v.Type == gjson.String:
			return v.Str == ""
		}
		return false
	}
	return v.Exists() && jsonText(v) == c.Equals
}

func (c JSONCondition) String() string {
	if c.Is != "" {
		return c.Path + " is " + c.Is
	}
	return fmt.Sprintf("%s equals %q", c.Path, c.Equals)
}

// maxPathLen bounds a path of the sites file.
const maxPathLen = 256

// CheckPath reports whether p is a gjson path this crawler accepts: non-empty, at most 256 bytes,
// dot-separated non-empty components (an escaped "\." is part of a component), brackets and
// parentheses of #(...) queries balanced, and no modifiers ("@reverse") or pipes, which would make
// a path a program. gjson itself accepts any string and silently matches nothing, so a typo would
// look like an empty page; it must fail at load instead.
func CheckPath(p string) error {
	switch {
	case p == "":
		return errors.New("the path is empty")
	case len(p) > maxPathLen:
		return fmt.Errorf("the path is longer than %d bytes", maxPathLen)
	}
	depth := 0
	comp := 0 // bytes in the current component
	inQuote := false
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case ch == '\\':
			if i+1 == len(p) {
				return errors.New("the path ends with a lone backslash")
			}
			i++
			comp++
		case inQuote:
			if ch == '"' {
				inQuote = false
			}
		case ch == '"' && depth > 0:
			inQuote = true
		case ch == '(' || ch == '[' || ch == '{':
			depth++
			comp++
		case ch == ')' || ch == ']' || ch == '}':
			depth--
			if depth < 0 {
				return fmt.Errorf("unbalanced %q at byte %d", ch, i)
			}
			comp++
		case depth > 0:
			comp++
		case ch == '.':
			if comp == 0 {
				return fmt.Errorf("empty component at byte %d", i)
			}
			comp = 0
		case ch == '|':
			return errors.New("pipes (|) are not supported; write one path")
		case ch == '@' && comp == 0:
			return errors.New("modifiers (@...) are not supported; write a plain path")
		case ch < 0x20 || ch == 0x7f:
			return fmt.Errorf("control character at byte %d", i)
		default:
			comp++
		}
	}
	switch {
	case inQuote:
		return errors.New("unterminated string in a query")
	case depth != 0:
		return errors.New("unbalanced brackets or parentheses")
	case comp == 0:
		return errors.New("the path ends with a dot")
	}
	return nil
}

// jsonText is a JSON value as the normalisers read it: a string's text with HTML entities decoded,
// an integral number without a fraction or exponent ("130000" for 130000.0), any other number or
// literal as written, null as "" (an unknown value).
func jsonText(v gjson.Result) string {
	switch v.Type {
	case gjson.Null:
		return ""
	case gjson.String:
		if strings.Contains(v.Str, "&") {
			return html.UnescapeString(v.Str)
		}
		return v.Str
	case gjson.Number:
		f := v.Num
		if f == math.Trunc(f) && math.Abs(f) < 1e15 {
			return strconv.FormatInt(int64(f), 10)
		}
		return v.Raw
	default:
		return v.Raw
	}
}

// errEmptyPage is not an error: parseJSONPage's signal that empty_when matched.
var errEmptyPage = errors.New("empty answer")

// notOpen reports whether a JSON answer is one not_open_when recognises.
func (j *JSONPage) notOpen(body []byte) bool {
	if len(j.NotOpenWhen) == 0 || !gjson.ValidBytes(body) {
		return false
	}
	doc := gjson.ParseBytes(body)
	for _, c := range j.NotOpenWhen {
		if c.holds(doc) {
			return true
		}
	}
	return false
}

// parseJSONPage reads the rows of a JSON response of site. It returns errEmptyPage when one of
// empty_when holds; any other error fails the page.
func parseJSONPage(site *Site, body []byte) ([]rawRow, error) {
	if !gjson.ValidBytes(body) {
		return nil, fmt.Errorf("the response is not JSON (starts %q)", truncate(string(body), 64))
	}
	doc := gjson.ParseBytes(body)
	j := site.JSON
	// An explicit code ("msg equals NO_DATA") may come with a failure code, so it is checked first;
	// a shape (null, empty) only means "sold out" in an answer that succeeded.
	for _, c := range j.EmptyWhen {
		if c.Is == "" && c.holds(doc) {
			return nil, errEmptyPage
		}
	}
	if j.Success != nil && !j.Success.holds(doc) {
		got := doc.Get(j.Success.Path)
		return nil, fmt.Errorf("success condition %s does not hold (the value is %s)", j.Success, truncate(got.Raw, 64))
	}
	for _, c := range j.EmptyWhen {
		// Without success, only a present value is a shape: an error answer that lacks the path
		// ({"msg":"SERVER_BUSY"} for `list is empty`) is no sold-out date.
		if c.Is != "" && c.holds(doc) && (j.Success != nil || doc.Get(c.Path).Exists()) {
			return nil, errEmptyPage
		}
	}
	rows := doc.Get(j.Rows)
	if !rows.IsArray() {
		what := "absent"
		if rows.Exists() {
			what = truncate(rows.Raw, 64)
		}
		return nil, fmt.Errorf("rows path %q is %s, not an array: the response changed shape", j.Rows, what)
	}
	elems := rows.Array()
	if len(elems) == 0 {
		return nil, fmt.Errorf("rows path %q is an empty array and no empty_when holds; declare empty_when if that is how the site answers a sold-out date", j.Rows)
	}
	out := make([]rawRow, 0, len(elems))
	for i, row := range elems {
		var r rawRow
		for j, c := range site.cells(&r) {
			if c.field.Path == "" {
				continue
			}
			v := row.Get(c.field.Path)
			if !v.Exists() {
				if c.required {
					return nil, fmt.Errorf("row %d has no %s at path %q: the response changed shape (row %s)", i, c.name, c.field.Path, truncate(row.Raw, 128))
				}
				r.Missing = append(r.Missing, c.name)
				continue
			}
			s := jsonText(v)
			if j == cellTeeTime && v.Type == gjson.Number && len(s) == 3 {
				s = "0" + s // 630 → 0630
			}
			s, ok := c.field.narrow(s)
			if !ok {
				r.Missing = append(r.Missing, c.name)
				continue
			}
			*c.dst = s
		}
		out = append(out, r)
	}
	return out, nil
}
