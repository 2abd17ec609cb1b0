package crawler

import (
	"errors"
	"fmt"
	"html"
	"math"
	"strconv"
	"strings"
	"time"

	// gjson reads a value out of a JSON document by a dotted path ("data.teeTimeList",
	// "list.#.bookTime") without decoding the whole document into maps. It was chosen over
	// itchyny/gojq because a sites file needs paths, not a query language: gjson's syntax is what a
	// user writes in minutes, it keeps numbers as their raw text (so "130000" and 130000 read the
	// same), it has no dependencies beyond two small tidwall packages, and it never fails on
	// content, which keeps the decision "does this page look like we expect" in our own code
	// (JSONPage's rows, success and empty_when), where it is explicit and tested.
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/tidwall/gjson"
)

// holds reports whether c holds in doc.
func holds(c site.JSONCondition, doc gjson.Result) bool {
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

// cellTeeTime is the tee_time cell, which a JSON row may give as a number: 630 is 06:30.
var cellTeeTime = site.CellIndex("tee_time")

// errEmptyPage is not an error: parseJSONPage's signal that empty_when matched.
var errEmptyPage = errors.New("empty answer")

// notOpen reports whether a JSON answer is one not_open_when recognises.
func notOpen(j *site.JSONPage, body []byte) bool {
	if len(j.NotOpenWhen) == 0 || !gjson.ValidBytes(body) {
		return false
	}
	doc := gjson.ParseBytes(body)
	for _, c := range j.NotOpenWhen {
		if holds(c, doc) {
			return true
		}
	}
	return false
}

// parseJSONPage reads the rows of a JSON response of site. It returns errEmptyPage when one of
// empty_when holds; any other error fails the page.
func parseJSONPage(st *site.Site, body []byte, crawledAt time.Time) ([]site.RawRow, error) {
	if !gjson.ValidBytes(body) {
		return nil, fmt.Errorf("the response is not JSON (starts %q)", truncate(string(body), 64))
	}
	doc := gjson.ParseBytes(body)
	j := st.JSON
	// An explicit code ("msg equals NO_DATA") may come with a failure code, so it is checked first;
	// a shape (null, empty) only means "sold out" in an answer that succeeded.
	for _, c := range j.EmptyWhen {
		if c.Is == "" && holds(c, doc) {
			return nil, errEmptyPage
		}
	}
	if j.Success != nil && !holds(*j.Success, doc) {
		got := doc.Get(j.Success.Path)
		return nil, fmt.Errorf("success condition %s does not hold (the value is %s)", j.Success, truncate(got.Raw, 64))
	}
	for _, c := range j.EmptyWhen {
		// Without success, only a present value is a shape: an error answer that lacks the path
		// ({"msg":"SERVER_BUSY"} for `list is empty`) is no sold-out date.
		if c.Is != "" && holds(c, doc) && (j.Success != nil || doc.Get(c.Path).Exists()) {
			return nil, errEmptyPage
		}
	}
	rows, err := jsonRows(j, doc)
	if err != nil {
		return nil, err
	}
	out := make([]site.RawRow, 0, len(rows))
	for _, jr := range rows {
		var r site.RawRow
		for ci, c := range st.RowCells(&r) {
			f := c.Field
			if f.Path == "" && f.GroupKey == 0 {
				continue
			}
			read := func(k int) (string, bool) { return readJSON(f, jr, k, ci == cellTeeTime) }
			if _, ok := read(0); !ok && c.Required {
				return nil, fmt.Errorf("row %d has no %s at path %q: the response changed shape (row %s)", jr.index, c.Name, f.Path, truncate(jr.row().Raw, 128))
			}
			c.Read(&r, crawledAt, read)
		}
		out = append(out, r)
	}
	return out, nil
}

// jsonRows are the rows of doc at the page's rows path: the elements of the array there, or of a
// path that flattens groups (flattenRows). No rows and no empty_when holding fails the page.
func jsonRows(j *site.JSONPage, doc gjson.Result) ([]jsonRow, error) {
	if parts := j.RowsLevels(); parts != nil {
		rows, err := flattenRows(doc, parts)
		if err == nil && len(rows) == 0 {
			err = fmt.Errorf("rows path %q has no rows and no empty_when holds; declare empty_when if that is how the site answers a sold-out date", j.Rows)
		}
		return rows, err
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
	out := make([]jsonRow, len(elems))
	for i, e := range elems {
		out[i] = jsonRow{groups: []gjson.Result{e}, index: i}
	}
	return out, nil
}

// readJSON is what the field's k-th source reads in a row: the text at that path in the row, or
// in the group the field names (group), or the group's key (group_key); false when absent. A
// tee time sent as a number of three digits is HHMM without its leading zero (630 is 06:30).
func readJSON(f *site.CompiledField, jr jsonRow, k int, teeTime bool) (string, bool) {
	group, key := f.FromGroup()
	if key {
		v := jr.keys[group-1]
		return v, v != ""
	}
	base := jr.row()
	if group > 0 {
		base = jr.groups[group-1]
	}
	v := base.Get(f.Sources()[k])
	if !v.Exists() {
		return "", false
	}
	s := jsonText(v)
	if teeTime && v.Type == gjson.Number && len(s) == 3 {
		s = "0" + s // 630 → 0630
	}
	return s, true
}
