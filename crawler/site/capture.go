package site

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"strings"
)

// A value from an earlier answer: a request with capture reads values out of its answer (a CSRF
// token in a form page, a session id in a link) for the requests after it, as
// {{.Captured.NAME}}. The crawl (crawler's requestcrawl.go) sends a page set's requests in order,
// the capturing ones first and once per crawl for each distinct request. Captured values are
// secrets: a request's key and its listings' URL leave them out (***, the parameter dropped),
// and the crawl removes them from its log, its errors and crawler try's output.

// Capture reads one value of an answer: the text (or attribute Attr) of the first element
// matching Selector (HTML), or the value at Path (JSON), or with Regex alone the answer's text;
// Regex, whose one capture group is the value, narrows the first two.
type Capture struct {
	Selector string `yaml:"selector,omitempty"`
	Attr     string `yaml:"attr,omitempty"`
	Path     string `yaml:"path,omitempty"`
	Regex    string `yaml:"regex,omitempty"`

	re *regexp.Regexp
}

// Re is the capture's compiled regex; nil without one.
func (c Capture) Re() *regexp.Regexp { return c.re }

// capturedShown is how a captured value shows in a request's key: never the value.
const capturedShown = "***"

var reCaptureName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// compileCaptures checks the captures of every request (after the requests compiled): their
// names and keys, and that a request reads only values an earlier request captures. Errors name
// the line.
func (s *Site) compileCaptures() error {
	seen := map[string]bool{}
	rows := 0
	for j := range s.Requests {
		rt := &s.Requests[j]
		if len(rt.Capture) == 0 {
			rows++
		}
		for _, name := range sortedKeys(rt.Capture) {
			c := rt.Capture[name]
			at := fmt.Sprintf("requests[%d].capture.%s", j, name)
			bad := func(format string, args ...any) error {
				return &keyError{key: at, err: fmt.Errorf(at+": "+format, args...)}
			}
			switch {
			case !reCaptureName.MatchString(name):
				return bad("a capture's name is letters, digits and _ ({{.Captured.%s}} must parse)", name)
			case seen[name]:
				return bad("%s is captured by an earlier request already", name)
			case c.Selector == "" && c.Path == "" && c.Regex == "":
				return bad("set selector (HTML, with attr for an attribute), path (JSON) or regex (over the answer's text)")
			case c.Selector != "" && c.Path != "":
				return bad("set selector (HTML) or path (JSON), not both")
			case c.Attr != "" && c.Selector == "":
				return bad("attr is an attribute of the element selector matches: set selector")
			}
			if err := checkSelector(c.Selector); err != nil {
				return bad("selector %q is invalid: %v", c.Selector, err)
			}
			if c.Path != "" {
				if err := CheckPath(c.Path); err != nil {
					return bad("path %q: %w", c.Path, err)
				}
			}
			if c.Regex != "" {
				re, err := regexp.Compile(c.Regex)
				if err != nil {
					return bad("regex %q does not compile: %v", c.Regex, err)
				}
				if re.NumSubexp() != 1 {
					return bad("regex %q has %d capture groups; it needs exactly one, the value", c.Regex, re.NumSubexp())
				}
				c.re = re
			}
			rt.Capture[name] = c
			seen[name] = true
		}
	}
	if len(seen) == 0 {
		return nil
	}
	if rows == 0 {
		return errors.New("every request captures: at least one, after the captures, must answer the rows")
	}
	// A request reads only what an earlier one captured: expand each with those, hidden.
	var captured map[string]string
	for j := range s.Requests {
		v := RequestVars{Date: sampleDate, Captured: captured, Env: s.HiddenEnv()}
		if len(s.Targets) > 0 {
			v.Target = s.Targets[0]
		}
		if _, err := s.Expand(j, v); err != nil {
			at := fmt.Sprintf("requests[%d]", j)
			return &keyError{key: at, err: fmt.Errorf("%s: %w (a request reads {{.Captured.NAME}} of an earlier request's capture only)", at, err)}
		}
		captured = hidden(captured, s.Requests[j].Capture)
	}
	return nil
}

// hidden is captured with the names of more added, each as ***.
func hidden(captured map[string]string, more map[string]Capture) map[string]string {
	if len(more) == 0 {
		return captured
	}
	out := maps.Clone(captured)
	if out == nil {
		out = map[string]string{}
	}
	for name := range more {
		out[name] = capturedShown
	}
	return out
}

// Captures reports whether a request of the site captures values for the requests after it.
func (s *Site) Captures() bool {
	for _, rt := range s.Requests {
		if len(rt.Capture) > 0 {
			return true
		}
	}
	return false
}

// Expand is the site's j-th request for vars, vars.Captured holding the values the requests before
// it captured and vars.Env the env block's (env.go). A request that carries any has its key (***)
// and its listings' URL (the parameters dropped) without them.
func (s *Site) Expand(j int, vars RequestVars) (PageRequest, error) {
	pr, err := s.req.reqs[j].expand(vars)
	if err != nil {
		return pr, err
	}
	pr.Tmpl = j
	if len(vars.Captured) == 0 && len(vars.Env) == 0 {
		return pr, nil
	}
	shown := vars
	shown.Captured, shown.Env = map[string]string{}, s.HiddenEnv()
	for name := range vars.Captured {
		shown.Captured[name] = capturedShown
	}
	sp, err := s.req.reqs[j].expand(shown)
	if err != nil {
		return pr, err
	}
	pr.key = sp.Key()
	pr.public = DropParams(sp.URL, func(v string) bool { return strings.Contains(v, capturedShown) })
	return pr, nil
}

// DropParams is raw without the query parameters (and ;name=value path parameters) whose value
// secret reports: a listing's URL without a session id or a token. raw is returned as it is
// when there is none, so that an ordinary URL is never rewritten.
func DropParams(raw string, secret func(value string) bool) string {
	rest, frag, hasFrag := strings.Cut(raw, "#")
	path, query, hasQuery := strings.Cut(rest, "?")
	dropped := false
	keep := func(params []string) []string {
		var kept []string
		for _, p := range params {
			_, v, _ := strings.Cut(p, "=")
			if u, err := url.QueryUnescape(v); err == nil {
				v = u
			}
			if secret(v) {
				dropped = true
				continue
			}
			kept = append(kept, p)
		}
		return kept
	}
	segs := strings.Split(path, "/")
	for i := 3; i < len(segs); i++ { // after scheme:, "" and the host: ;jsessionid=… in a segment
		if parts := strings.Split(segs[i], ";"); len(parts) > 1 {
			segs[i] = strings.Join(append(parts[:1:1], keep(parts[1:])...), ";")
		}
	}
	out := strings.Join(segs, "/")
	if hasQuery {
		if kept := keep(strings.Split(query, "&")); len(kept) > 0 {
			out += "?" + strings.Join(kept, "&")
		}
	}
	if !dropped {
		return raw
	}
	if hasFrag {
		out += "#" + frag
	}
	return out
}
