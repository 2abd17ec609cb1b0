package site

import (
	"errors"
	"fmt"
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
//
// Rows nested in groups are flattened by a rows path with []: each [] takes the elements of an
// array (or the members of an object) at that point, "dates[][].times[]" the times of every course
// of every date (RowsLevels); a field reads a group's key or member with group_key and group.
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
	if j.RowsLevels() != nil {
		if err := j.checkRowsLevels(); err != nil {
			return err
		}
	} else if err := CheckPath(j.Rows); err != nil {
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
