package site

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/template"
	"time"
)

// The response formats of a site (Site.Format).
const (
	FormatHTML = "html" // rows are elements selected by CSS (the default)
	FormatJSON = "json" // rows are the elements of an array found by a gjson path (see JSONPage)
)

// Target is one entry of a site's targets, typically a club: named values that request templates
// and request-derived fields read as {{.Target.id}}, {{.Target.name}}. A site with targets sends
// every request template once per target and play date.
type Target map[string]string

// RequestTemplate is one request a site sends per play date (and per target): Method GET (the
// default) or POST, URL, Headers, and for POST a body of Form fields (form-encoded) or JSON (a
// YAML mapping encoded as JSON; its string values are templates, other values are sent as they
// are). URL, header values, form values and JSON strings are Go templates over RequestVars, e.g.
// `{{.Date.Format "20060102"}}`, `{{.Target.id}}`, `{{.Target.name | urlquery}}`.
type RequestTemplate struct {
	Method  string            `yaml:"method,omitempty"`
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers,omitempty"`
	Form    map[string]string `yaml:"form,omitempty"`
	JSON    map[string]any    `yaml:"json,omitempty"`
	// Capture, optional, makes the request's answer a source of values for the requests after it
	// ({{.Captured.NAME}}), not of rows (capture.go): a CSRF token in a form page, a session id
	// in a link. Captured values are secrets.
	Capture map[string]Capture `yaml:"capture,omitempty"`
}

// RequestVars are the variables of one request, the data of its templates and of the fields
// declared with value: Date is the play date (midnight, Asia/Seoul), Index its day offset from the
// crawl's date, Target the target (nil when the site declares none), Captured the values the
// requests before it captured (capture.go; never a field's), Env the env block's values (env.go;
// never a field's either).
type RequestVars struct {
	Date     time.Time
	Index    int
	Target   Target
	Captured map[string]string
	Env      map[string]string
}

// PageRequest is one expanded request of a crawl.
type PageRequest struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
	Set    int // index of its page set (its RequestVars) in the crawl
	Tmpl   int // index of its template in the site's requests

	// key and public are the request's key and URL with every captured value left out
	// (capture.go); empty when it carries none.
	key, public string
}

// Key identifies the request in a crawl and in crawler.Result.FailedPages: the URL for a GET,
// the method, URL and body for anything else; a captured value shows as ***.
func (p PageRequest) Key() string {
	if p.key != "" {
		return p.key
	}
	if p.Method == http.MethodGet && len(p.Body) == 0 {
		return p.URL
	}
	return p.Method + " " + p.URL + " " + string(p.Body)
}

// ListingURL is the URL a listing read from the request's answer carries: the request's URL
// without the parameters that hold a captured value.
func (p PageRequest) ListingURL() string { return cmp.Or(p.public, p.URL) }

type compiledRequest struct {
	method  string
	url     *template.Template
	headers []namedTemplate
	form    []namedTemplate
	json    any // the JSON body with *template.Template in place of strings; nil: none
}

type namedTemplate struct {
	name string
	t    *template.Template
}

type compiledRequests struct {
	reqs []compiledRequest
}

// sampleDate is the play date templates are tried on when a site is compiled.
var sampleDate = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func parseTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Option("missingkey=error").Parse(text)
}

// compileSources checks and compiles the keys of request.go, jsonpage.go and login.go.
func (s *Site) compileSources(fail func(string, ...any) error) error {
	switch s.Format {
	case FormatHTML, FormatJSON:
	default:
		return fail("format is %q; it must be html or json", s.Format)
	}
	if s.Format == FormatJSON {
		if s.JSON == nil {
			return fail("format json needs a json block with at least rows (the path of the rows array)")
		}
		if s.Row != "" || s.List != "" || s.NextPage != "" || s.Follow != "" {
			return fail("row, list, next_page and follow are CSS selectors of format html; format json reads json.rows")
		}
		if err := s.JSON.validate(); err != nil {
			return fail("json: %w", err)
		}
	} else if s.JSON != nil {
		return fail("the json block only applies to format json")
	}
	if len(s.Targets) > 0 && len(s.Requests) == 0 {
		return fail("targets only apply to requests")
	}
	for i, t := range s.Targets {
		if len(t) == 0 {
			return fail("targets[%d] is empty; a target needs at least one key, such as id", i)
		}
	}
	if len(s.Requests) > 0 && s.Follow != "" {
		return fail("follow does not apply to requests: a followed page could be of another date or target, so its failure could not be attributed")
	}
	if err := s.compileEnv(); err != nil {
		return fail("%w", err)
	}
	if len(s.Requests) > 0 {
		cr := &compiledRequests{}
		for i, rt := range s.Requests {
			c, err := rt.compile()
			if err != nil {
				return fail("requests[%d]: %v", i, err)
			}
			cr.reqs = append(cr.reqs, c)
		}
		s.req = cr
		if err := s.compileCaptures(); err != nil {
			return fail("%w", err)
		}
		reqs, _, err := s.PageRequests(sampleDate)
		if err != nil {
			return fail("requests do not expand for the sample date %s: %v", sampleDate.Format("2006-01-02"), err)
		}
		next, _, _ := s.PageRequests(sampleDate.AddDate(0, 0, 1))
		for i := range reqs {
			s.namesDate = s.namesDate || i < len(next) && reqs[i].Key() != next[i].Key()
		}
	}
	if err := s.compileNotOpen(fail); err != nil {
		return err
	}
	if s.Login != nil {
		if len(s.Requests) == 0 {
			return fail("login needs requests (declare the pages as requests)")
		}
		form, err := s.Login.compile()
		if err != nil {
			return fail("login: %v", err)
		}
		s.loginForm = form
	}
	return nil
}

// compileNotOpen checks not_open and json.not_open_when: request pages only, so that a not-open
// answer is its date's (its page set's).
func (s *Site) compileNotOpen(fail func(string, ...any) error) error {
	jsonNotOpen := s.JSON != nil && len(s.JSON.NotOpenWhen) > 0
	if (s.NotOpen != nil || jsonNotOpen) && len(s.Requests) == 0 {
		return fail("not_open needs requests (declare the pages as requests), so that a not-open answer is attributed to its date")
	}
	if s.NotOpen == nil {
		return nil
	}
	m := s.NotOpen
	switch {
	case s.Format == FormatJSON:
		return fail("not_open is for format html; format json declares json.not_open_when")
	case m.Selector == "" && m.Contains == "" && len(m.Statuses) == 0:
		return fail("not_open needs selector, contains or statuses: how else would a date not open yet be recognised")
	}
	if err := checkSelector(m.Selector); err != nil {
		return fail("not_open selector %q is invalid: %v", m.Selector, err)
	}
	for _, st := range m.Statuses {
		if st < 400 || st > 599 {
			return fail("not_open status %d: it must be an error status (4xx, 5xx); a 200 answer is recognised by selector or contains", st)
		}
	}
	return nil
}

func (rt RequestTemplate) compile() (compiledRequest, error) {
	var c compiledRequest
	c.method = strings.ToUpper(strings.TrimSpace(rt.Method))
	switch c.method {
	case "":
		c.method = http.MethodGet
	case http.MethodGet, http.MethodPost:
	default:
		return c, fmt.Errorf("method is %q; it must be GET or POST", rt.Method)
	}
	if rt.URL == "" {
		return c, errors.New("url is required")
	}
	if (len(rt.Form) > 0 || len(rt.JSON) > 0) && c.method != http.MethodPost {
		return c, errors.New("form and json are request bodies: they need method POST")
	}
	if len(rt.Form) > 0 && len(rt.JSON) > 0 {
		return c, errors.New("set form or json, not both")
	}
	var err error
	if c.url, err = parseTemplate("url", rt.URL); err != nil {
		return c, fmt.Errorf("url does not parse: %w", err)
	}
	if c.headers, err = compileMap("headers", rt.Headers); err != nil {
		return c, err
	}
	if c.form, err = compileMap("form", rt.Form); err != nil {
		return c, err
	}
	if len(rt.JSON) > 0 {
		if c.json, err = compileJSON("json", rt.JSON); err != nil {
			return c, err
		}
	}
	return c, nil
}

func compileMap(what string, m map[string]string) ([]namedTemplate, error) {
	var out []namedTemplate
	for _, k := range sortedKeys(m) {
		t, err := parseTemplate(what+"."+k, m[k])
		if err != nil {
			return nil, fmt.Errorf("%s.%s does not parse: %w", what, k, err)
		}
		out = append(out, namedTemplate{k, t})
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// compileJSON replaces every string of a JSON body by its template.
func compileJSON(path string, v any) (any, error) {
	return mapJSON(path, v, func(path string, leaf any) (any, error) {
		switch leaf := leaf.(type) {
		case string:
			t, err := parseTemplate(path, leaf)
			if err != nil {
				return nil, fmt.Errorf("%s does not parse: %w", path, err)
			}
			return t, nil
		case nil, bool, int, int64, uint64, float64:
			return leaf, nil
		default:
			return nil, fmt.Errorf("%s has a value of type %T, which JSON cannot carry", path, leaf)
		}
	})
}

func expandJSON(v any, vars RequestVars) (any, error) {
	return mapJSON("json", v, func(_ string, leaf any) (any, error) {
		if t, ok := leaf.(*template.Template); ok {
			return execTemplate(t, vars)
		}
		return leaf, nil
	})
}

// mapJSON copies the JSON tree v (maps and slices), replacing every other value by what leaf
// returns for it; path names the value as "json.a[0].b".
func mapJSON(path string, v any, leaf func(path string, v any) (any, error)) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			x, err := mapJSON(path+"."+k, e, leaf)
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			x, err := mapJSON(fmt.Sprintf("%s[%d]", path, i), e, leaf)
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	default:
		return leaf(path, v)
	}
}

func execTemplate(t *template.Template, data any) (string, error) {
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("%s: %w", t.Name(), err)
	}
	return b.String(), nil
}

// expand renders the request for vars.
func (c compiledRequest) expand(vars RequestVars) (PageRequest, error) {
	pr := PageRequest{Method: c.method, Header: http.Header{}}
	u, err := execTemplate(c.url, vars)
	if err != nil {
		return pr, err
	}
	if err := checkURL(u); err != nil {
		return pr, fmt.Errorf("url %q is not usable: %w", u, err)
	}
	pr.URL = u
	for _, h := range c.headers {
		v, err := execTemplate(h.t, vars)
		if err != nil {
			return pr, err
		}
		pr.Header.Set(h.name, v)
	}
	switch {
	case len(c.form) > 0:
		form := url.Values{}
		for _, f := range c.form {
			v, err := execTemplate(f.t, vars)
			if err != nil {
				return pr, err
			}
			form.Set(f.name, v)
		}
		pr.Body = []byte(form.Encode())
		if pr.Header.Get("Content-Type") == "" {
			pr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	case c.json != nil:
		v, err := expandJSON(c.json, vars)
		if err != nil {
			return pr, err
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return pr, fmt.Errorf("encode the json body: %w", err)
		}
		pr.Body = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		if pr.Header.Get("Content-Type") == "" {
			pr.Header.Set("Content-Type", "application/json")
		}
	}
	return pr, nil
}

// PageRequests expands the site's request templates for a crawl at crawledAt: per play date from
// the crawl's date in Asia/Seoul through DaysAhead days later, per target (or once without), each
// template. sets are the page sets' variables; PageRequest.Set indexes them. A site without
// requests has none.
func (s *Site) PageRequests(crawledAt time.Time) (reqs []PageRequest, sets []RequestVars, err error) {
	if s.req == nil {
		return nil, nil, nil
	}
	y, m, d := crawledAt.In(Seoul()).Date()
	targets := s.Targets
	if len(targets) == 0 {
		targets = []Target{nil}
	}
	for i := 0; i <= s.DaysAhead; i++ {
		for _, t := range targets {
			vars := RequestVars{Date: time.Date(y, m, d+i, 0, 0, 0, 0, Seoul()), Index: i, Target: t, Env: s.HiddenEnv()}
			sets = append(sets, vars)
			var captured map[string]string // what the requests so far capture, as ***
			for j := range s.req.reqs {
				v := vars
				v.Captured = captured
				pr, err := s.Expand(j, v)
				if err != nil {
					return nil, nil, fmt.Errorf("request %d for %s%s: %w", j, vars.Date.Format("2006-01-02"), targetLabel(t), err)
				}
				pr.Set = len(sets) - 1
				reqs = append(reqs, pr)
				captured = hidden(captured, s.Requests[j].Capture)
			}
		}
	}
	return reqs, sets, nil
}

func targetLabel(t Target) string {
	if t == nil {
		return ""
	}
	var parts []string
	for _, k := range sortedKeys(t) {
		parts = append(parts, k+"="+t[k])
	}
	return " target {" + strings.Join(parts, ", ") + "}"
}

// RequestURLs are the URLs of the sample expansion of the requests and the login URL.
func (s *Site) RequestURLs() []string {
	var urls []string
	reqs, _, _ := s.PageRequests(sampleDate)
	for _, r := range reqs {
		urls = append(urls, r.URL)
	}
	if s.Login != nil {
		urls = append(urls, s.Login.URL)
	}
	return urls
}
