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

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// The play date's spellings a request may carry, as Go layouts, longest first. Year-less ones
// are only looked for when the date is given (--date): "1205" is also a tee time.
var (
	fullLayouts = []string{"2006-01-02", "2006.01.02", "2006/01/02", "01/02/2006", "01-02-2006", "01.02.2006", "20060102"}
	// monthLayouts are the play date's month's spellings: a whole value that spells it (selYM=202612
	// beside selDate=20261205) asks for the date's month.
	monthLayouts    = []string{"200601", "2006-01", "2006.01", "2006/01"}
	yearlessLayouts = []string{"01/02", "01-02", "01.02"}
	reAnyFullDate   = regexp.MustCompile(`(?:^|[^0-9])((?:19|20)\d\d)(-|\.|/|%2F|)(0[1-9]|1[0-2])(-|\.|/|%2F|)(0[1-9]|[12]\d|3[01])(?:$|[^0-9])`)
)

// templated is the copied request made into a request template of the sites file.
type templated struct {
	req       site.RequestTemplate
	dateFound bool
	target    site.Target // the given target whose id the request holds (nil: none)
	dropped   []string    // credentials left out of the output: headers, and "query NAME", "form NAME", ...
	secret    http.Header // the credential headers, for fetching as the browser did
	// full is req with the dropped query, path-parameter, form and JSON credentials kept (as
	// literals), for fetching as the browser did; values are every credential's value, to redact
	// from what is said; passwords are the form's password fields (the login block's hint).
	full      site.RequestTemplate
	values    []string
	passwords []string
	// personal are the golfer's own ids and phone numbers in the query, form or body ("form
	// msNum"), left out of req; withoutPersonal is full without them, to ask whether the page
	// answers the same listings without them.
	personal        []string
	withoutPersonal site.RequestTemplate
	// bare is req with the personal values kept: the request without the credentials alone.
	bare site.RequestTemplate
	// with is req with the credentials and personal values vars names ("form msNum") sent as
	// the variable it gives (".Env.msNum", ".Captured._csrf") instead of left out.
	with func(vars map[string]string) (site.RequestTemplate, error)
}

// secretParts are what a header, query, path-parameter, form or JSON name holding a login,
// session or CSRF token or a password contains; secretWords are shorter ones that must be a
// whole word of the name (sid, not inside; pin, not spin): a session id, a password, a request's
// signature or hash (recomputed per request, useless stale anyway), a one-time code or a PIN.
// secretHeaderWords are whole words that make a header name a credential (X-Access-Key,
// X-Client-Key) but not a query's or form's (a courseKey is a course's id).
var (
	secretParts = []string{"cookie", "authorization", "csrf", "xsrf", "token", "session", "auth", "api-key", "apikey", "api_key",
		"pass", "pwd", "secret", "jsessionid", "phpsessid", "aspsessionid"}
	secretWords       = []string{"sid", "pw", "sig", "signature", "hash", "hmac", "otp", "pin"}
	secretHeaderWords = []string{"key"}
	// passwordParts name a password: such a form field becomes the login block's credential.
	passwordParts = []string{"pass", "pwd"}
)

// isSecretName reports whether a header, query, path-parameter, form or JSON name carries a
// login, session or CSRF token or a password.
func isSecretName(name string) bool {
	n := strings.ToLower(name)
	for _, s := range secretParts {
		if strings.Contains(n, s) {
			return true
		}
	}
	for _, w := range nameWords(name) {
		if slices.Contains(secretWords, w) {
			return true
		}
	}
	return false
}

// isSecretHeader reports whether a header carries a credential: a secret name, or one with a
// key among its words.
func isSecretHeader(name string) bool {
	return isSecretName(name) || slices.ContainsFunc(nameWords(name), func(w string) bool { return slices.Contains(secretHeaderWords, w) })
}

// personWords and idNameWords make a name a person's own id when it has one word of each
// (msNum, memberNo, mem_id, userId, custNo; not memberType); phoneWords a phone number's (tel2,
// mobile). reKoreanPersonal is the same in Korean (회원번호).
var (
	personWords      = []string{"ms", "mem", "member", "user", "usr", "cust", "customer"}
	idNameWords      = []string{"id", "no", "num", "number", "seq", "cd"}
	phoneWords       = []string{"tel", "phone", "mobile", "hp", "handphone", "cellphone"}
	reKoreanPersonal = regexp.MustCompile(`회원번호|회원아이디|전화번호|휴대폰`)
)

// isPersonalName reports whether a query, form or JSON name carries the golfer's own id or phone
// number: a person word and an id word among its whole words, or a phone word.
func isPersonalName(name string) bool {
	if reKoreanPersonal.MatchString(name) {
		return true
	}
	person, id := false, false
	for _, w := range nameWords(name) {
		w = strings.TrimRight(w, "0123456789")
		person = person || slices.Contains(personWords, w)
		id = id || slices.Contains(idNameWords, w)
		if slices.Contains(phoneWords, w) {
			return true
		}
	}
	return person && id
}

// isPasswordName reports whether a form name is a password's.
func isPasswordName(name string) bool {
	n := strings.ToLower(name)
	return slices.ContainsFunc(passwordParts, func(p string) bool { return strings.Contains(n, p) }) ||
		slices.Contains(nameWords(name), "pw")
}

var reWord = regexp.MustCompile(`[A-Z]?[a-z0-9]+|[A-Z]+`)

// nameWords are a name's words, lower case: user_sid, userSid and USER-SID are user and sid.
func nameWords(name string) []string {
	var out []string
	for _, w := range reWord.FindAllString(name, -1) {
		out = append(out, strings.ToLower(w))
	}
	return out
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
			d, err := time.ParseInLocation("20060102", m[1]+m[3]+m[5], site.Seoul())
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
func makeTemplate(r Request, date time.Time, withYearless bool, targets []site.Target, say func(string, ...any)) (templated, error) {
	t, err := buildTemplate(r, date, withYearless, targets, say, true, true, nil)
	if err != nil {
		return t, err
	}
	quiet := func(string, ...any) {}
	full, err := buildTemplate(r, date, withYearless, targets, quiet, false, false, nil)
	if err != nil {
		return t, err
	}
	t.full = full.req
	bare, err := buildTemplate(r, date, withYearless, targets, quiet, true, false, nil)
	if err != nil {
		return t, err
	}
	t.bare = bare.req
	if len(t.personal) > 0 {
		without, err := buildTemplate(r, date, withYearless, targets, quiet, false, true, nil)
		if err != nil {
			return t, err
		}
		t.withoutPersonal = without.req
	}
	t.with = func(vars map[string]string) (site.RequestTemplate, error) {
		w, err := buildTemplate(r, date, withYearless, targets, quiet, true, true, vars)
		return w.req, err
	}
	for _, vs := range t.secret {
		for _, v := range vs {
			t.values = append(t.values, v)
			for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ';' || r == ',' }) {
				if _, val, ok := strings.Cut(part, "="); ok {
					t.values = append(t.values, val)
				} else if !strings.EqualFold(part, "Bearer") && !strings.EqualFold(part, "Basic") {
					t.values = append(t.values, part)
				}
			}
		}
	}
	return t, nil
}

// buildTemplate is makeTemplate's one pass: with drop, the credentials in the query, path
// parameters, form and JSON body are left out (and named), else kept as they are; vars sends
// those it names as a variable instead.
func buildTemplate(r Request, date time.Time, withYearless bool, targets []site.Target, say func(string, ...any), drop, dropPersonal bool,
	vars map[string]string) (templated, error) {
	var t templated
	t.secret = http.Header{}
	t.req.Method = r.Method
	layouts := fullLayouts
	if withYearless {
		layouts = append(append([]string(nil), fullLayouts...), yearlessLayouts...)
	}
	sub := &substituter{date: date, layouts: layouts, targets: targets, say: say, drop: drop, dropPersonal: dropPersonal, vars: vars}
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
	t.dropped = append(sub.dropped, t.dropped...)
	t.values, t.passwords, t.personal = sub.values, sub.passwords, sub.personal
	if t.req.Method == http.MethodGet {
		t.req.Method = ""
	}
	return t, nil
}

// substituter replaces the play date's spellings and the targets' ids with templates.
type substituter struct {
	date      time.Time
	layouts   []string
	targets   []site.Target
	say       func(string, ...any)
	dateFound bool
	target    site.Target
	drop      bool // leave the credentials out
	// dropPersonal leaves the golfer's own ids and phone numbers out
	dropPersonal bool
	// vars are the credentials and personal values sent as a variable, by where and name ("form
	// msNum") → the variable (".Env.msNum")
	vars      map[string]string
	dropped   []string // the credentials found: "query NAME", "form NAME", ...
	personal  []string // the personal values found: "form msNum", ...
	values    []string // their values
	passwords []string // the form's password fields
}

// secret reports whether the value v of name (where: "query", "form", ...) is a credential or
// the golfer's own id or phone number (found), and what this pass writes for it: nothing (keep
// false), the value as it is, or the variable vars sends it as (a query's or path parameter's
// escaped); it records it: a credential's or a personal name, unless v is the play date or a
// target's id.
func (s *substituter) secret(where, name, v string) (found bool, text string, keep bool) {
	if s.holdsVariable(v) {
		return false, "", false
	}
	omit := false
	switch {
	case isSecretName(name):
		s.dropped = append(s.dropped, where+" "+name)
		if where == "form" && isPasswordName(name) {
			s.passwords = append(s.passwords, name)
		}
		omit = s.drop
	case isPersonalName(name) && v != "":
		s.personal = append(s.personal, where+" "+name)
		omit = s.dropPersonal
	default:
		return false, "", false
	}
	if v != "" {
		s.values = append(s.values, v, url.QueryEscape(v), url.PathEscape(v))
	}
	if variable, ok := s.vars[where+" "+name]; ok {
		if where == "query" || where == "path parameter" {
			return true, "{{" + variable + " | urlquery}}", true
		}
		return true, "{{" + variable + "}}", true
	}
	return true, literal(v), !omit
}

// holdsVariable reports whether v is a target's id or holds the play date.
func (s *substituter) holdsVariable(v string) bool {
	for _, tg := range s.targets {
		if id := tg["id"]; id != "" && v == id {
			return true
		}
	}
	if s.date.IsZero() {
		return false
	}
	return slices.ContainsFunc(s.layouts, func(l string) bool { return strings.Contains(v, s.date.Format(l)) })
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
	for _, l := range monthLayouts {
		if v == s.date.Format(l) {
			s.say("date: %s = %s spells the play date's month → {{.Date.Format %q}}", where, v, l)
			pipe := ""
			if escape != nil && escape(v) != v {
				pipe = " | urlquery"
			}
			return fmt.Sprintf("{{.Date.Format %q%s}}", l, pipe)
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
		seg, params, _ := strings.Cut(seg, ";")
		dec, err := url.PathUnescape(seg)
		if err != nil {
			dec = seg
		}
		out := s.text("path segment "+itoa(i), dec, url.PathEscape)
		for _, p := range strings.Split(params, ";") {
			if p == "" {
				continue
			}
			k, v, _ := strings.Cut(p, "=")
			switch found, text, keep := s.secret("path parameter", k, v); {
			case !found || keep && text == literal(v):
				out += ";" + literal(p)
			case keep:
				out += ";" + literal(k) + "=" + text
			}
		}
		segs = append(segs, out)
	}
	out := u.Scheme + "://" + literal(u.Host) + strings.Join(segs, "/")
	if u.RawQuery == "" {
		return out
	}
	var qs []string
	for _, kv := range strings.Split(u.RawQuery, "&") {
		k, v, _ := strings.Cut(kv, "=")
		dv, err := url.QueryUnescape(v)
		if dk, err := url.QueryUnescape(k); err == nil {
			if found, text, keep := s.secret("query", dk, dv); found {
				switch {
				case !keep:
				case text == literal(dv):
					qs = append(qs, literal(kv))
				default:
					qs = append(qs, literal(k)+"="+text)
				}
				continue
			}
		}
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
	if len(qs) == 0 {
		return out
	}
	return out + "?" + strings.Join(qs, "&")
}

func (s *substituter) body(rt *site.RequestTemplate, r Request) error {
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
		if found, text, keep := s.secret("form", k, vals[k][0]); found {
			if keep {
				rt.Form[k] = text
			}
			continue
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
			v, scalar := t[k].(string)
			if n, number := t[k].(json.Number); number {
				v, scalar = n.String(), true
			}
			if found, text, keep := s.secret("JSON member", strings.TrimPrefix(where+"."+k, "body."), v); scalar && found {
				switch {
				case !keep:
				case text != literal(v):
					out[k] = text // a variable: sent as a string
				default:
					out[k] = t[k]
					if str, ok := t[k].(string); ok {
						out[k] = literal(str)
					}
				}
				continue
			}
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
