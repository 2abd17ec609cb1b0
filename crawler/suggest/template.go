package suggest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
)

// The play date's spellings a request may carry, as Go layouts, longest first. Year-less ones
// are only looked for when the date is given (--date): "1205" is also a tee time.
var (
	fullLayouts     = []string{"2006-01-02", "2006.01.02", "2006/01/02", "20060102"}
	yearlessLayouts = []string{"01/02", "01-02", "01.02"}
	reAnyFullDate   = regexp.MustCompile(`(?:^|[^0-9])((?:19|20)\d\d)(-|\.|/|%2F|)(0[1-9]|1[0-2])(-|\.|/|%2F|)(0[1-9]|[12]\d|3[01])(?:$|[^0-9])`)
)

// templated is the copied request made into a request template of the sites file.
type templated struct {
	req       crawler.RequestTemplate
	dateFound bool
	target    crawler.Target // the given target whose id the request holds (nil: none)
	dropped   []string       // credential headers left out of the output
	secret    http.Header    // those headers, for fetching as the browser did
}

// isSecretHeader reports whether a header carries a login, session or CSRF token.
func isSecretHeader(name string) bool {
	n := strings.ToLower(name)
	for _, s := range []string{"cookie", "authorization", "csrf", "xsrf", "token", "session", "auth", "api-key", "apikey"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// isBrowserHeader reports whether a header only describes the browser (left out, unsaid).
func isBrowserHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "user-agent", "accept-language", "accept-encoding", "connection", "origin", "referer", "priority",
		"cache-control", "pragma", "dnt", "upgrade-insecure-requests", "te", "host", "content-length":
		return true
	}
	return strings.HasPrefix(n, "sec-") || strings.HasPrefix(n, "if-")
}

// findDate returns the play date a request names in a full-year spelling, the first found in its
// URL, then its body.
func findDate(r Request) (time.Time, string, bool) {
	for _, where := range []struct{ name, s string }{{"the URL", r.URL}, {"the body", r.Body}} {
		for _, m := range reAnyFullDate.FindAllStringSubmatch(where.s, -1) {
			if m[2] != m[4] {
				continue
			}
			d, err := time.ParseInLocation("20060102", m[1]+m[3]+m[5], crawler.Seoul())
			if err == nil {
				return d, where.name, true
			}
		}
	}
	return time.Time{}, "", false
}

// makeTemplate turns r into a request template: the play date's spellings become templates over
// {{.Date}}, a given target's id {{.Target.id}}; credential headers are dropped (and kept aside
// in secret), browser headers left out.
func makeTemplate(r Request, date time.Time, withYearless bool, targets []crawler.Target, say func(string, ...any)) (templated, error) {
	var t templated
	t.secret = http.Header{}
	t.req.Method = r.Method
	layouts := fullLayouts
	if withYearless {
		layouts = append(append([]string(nil), fullLayouts...), yearlessLayouts...)
	}
	sub := &substituter{date: date, layouts: layouts, targets: targets, say: say}
	t.req.URL = sub.url(r.URL)
	names := make([]string, 0, len(r.Header))
	for k := range r.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	var quiet []string
	for _, k := range names {
		v := strings.Join(r.Header[k], "; ")
		switch {
		case isSecretHeader(k):
			t.dropped = append(t.dropped, k)
			t.secret[k] = r.Header[k]
		case isBrowserHeader(k):
			quiet = append(quiet, k)
		case k == "Content-Type" && r.Body != "":
			// the body's kind says it (form or json)
		case k == "Accept" && !strings.Contains(v, "json"):
			quiet = append(quiet, k)
		default:
			if t.req.Headers == nil {
				t.req.Headers = map[string]string{}
			}
			t.req.Headers[k] = literal(v)
		}
	}
	if len(quiet) > 0 {
		say("headers left out (they describe the browser, not the question): %s", strings.Join(quiet, ", "))
	}
	if err := sub.body(&t.req, r); err != nil {
		return t, err
	}
	t.dateFound, t.target = sub.dateFound, sub.target
	if t.req.Method == http.MethodGet {
		t.req.Method = ""
	}
	return t, nil
}

// substituter replaces the play date's spellings and the targets' ids with templates.
type substituter struct {
	date      time.Time
	layouts   []string
	targets   []crawler.Target
	say       func(string, ...any)
	dateFound bool
	target    crawler.Target
}

// text makes one value (a query value, a form value, a JSON string) a template. whole: the
// value is a target id only when it is the whole value.
func (s *substituter) text(where, v string, escape func(string) string) string {
	if s.target == nil {
		for _, tg := range s.targets {
			if id := tg["id"]; id != "" && v == id {
				s.target = tg
				s.say("target: %s = %s is the id of target %s → {{.Target.id}}", where, v, tg["name"])
			}
		}
	}
	if s.target != nil && v == s.target["id"] {
		return "{{.Target.id}}"
	}
	if s.date.IsZero() {
		return literal(v)
	}
	for _, l := range s.layouts {
		spelled := s.date.Format(l)
		if i := strings.Index(v, spelled); i >= 0 {
			s.dateFound = true
			s.say("date: %s = %s holds the play date as %q → {{.Date.Format %q}}", where, v, spelled, l)
			pipe := ""
			if escape != nil && escape(spelled) != spelled {
				pipe = " | urlquery"
			}
			return literal(v[:i]) + fmt.Sprintf("{{.Date.Format %q%s}}", l, pipe) + s.text(where, v[i+len(spelled):], escape)
		}
	}
	return literal(v)
}

func (s *substituter) url(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return literal(raw)
	}
	base := *u
	base.RawQuery, base.Fragment = "", ""
	var segs []string
	for i, seg := range strings.Split(base.EscapedPath(), "/") {
		if i == 0 || seg == "" {
			segs = append(segs, seg)
			continue
		}
		dec, err := url.PathUnescape(seg)
		if err != nil {
			dec = seg
		}
		segs = append(segs, s.text("path segment "+itoa(i), dec, url.PathEscape))
	}
	out := u.Scheme + "://" + literal(u.Host) + strings.Join(segs, "/")
	if u.RawQuery == "" {
		return out
	}
	var qs []string
	for _, kv := range strings.Split(u.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		dv, err := url.QueryUnescape(v)
		if err != nil {
			qs = append(qs, literal(kv))
			continue
		}
		tv := s.text("query "+k, dv, url.QueryEscape)
		if tv == literal(dv) {
			tv = literal(v)
		}
		qs = append(qs, literal(k)+"="+tv)
	}
	return out + "?" + strings.Join(qs, "&")
}

func (s *substituter) body(rt *crawler.RequestTemplate, r Request) error {
	if r.Body == "" {
		return nil
	}
	trimmed := strings.TrimSpace(r.Body)
	if strings.HasPrefix(trimmed, "{") {
		dec := json.NewDecoder(strings.NewReader(trimmed))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			return fmt.Errorf("the body looks like JSON but does not parse: %w", err)
		}
		rt.JSON = s.jsonValue("body", m).(map[string]any)
		return nil
	}
	if strings.HasPrefix(trimmed, "[") {
		return errors.New("the body is a JSON array; the sites file sends JSON objects or forms")
	}
	vals, err := url.ParseQuery(r.Body)
	if err != nil {
		return fmt.Errorf("the body is neither JSON nor a form: %w", err)
	}
	rt.Form = map[string]string{}
	for _, k := range sortedKeys(vals) {
		if len(vals[k]) > 1 {
			s.say("form field %s is sent %d times; the sites file sends it once (%q)", k, len(vals[k]), vals[k][0])
		}
		rt.Form[k] = s.text("form "+k, vals[k][0], nil)
	}
	return nil
}

func (s *substituter) jsonValue(where string, v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for _, k := range sortedKeys(t) {
			out[k] = s.jsonValue(where+"."+k, t[k])
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = s.jsonValue(where+"."+itoa(i), e)
		}
		return out
	case string:
		return s.text(where, t, nil)
	case json.Number:
		if tv := s.text(where, t.String(), nil); strings.Contains(tv, "{{") {
			s.say("%s was the number %s; the sites file sends it as the string %q", where, t, tv)
			return tv
		}
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	}
	return v
}

// literal escapes template syntax in a value that is meant as it is.
func literal(s string) string {
	if !strings.Contains(s, "{{") && !strings.Contains(s, "}}") {
		return s
	}
	var b bytes.Buffer
	for _, part := range strings.SplitAfter(s, "{{") {
		if strings.HasSuffix(part, "{{") {
			b.WriteString(part[:len(part)-2])
			b.WriteString(`{{"{{"}}`)
			continue
		}
		b.WriteString(part)
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
