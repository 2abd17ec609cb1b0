package site

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
)

// Login is a site's optional login step: a form POST (Method POST, the default) to URL with Form
// fields, whose values are templates over {{.Credentials.NAME}}. Credentials maps each NAME to
// the environment variable holding it (e.g. {user: CLUB_USER, password: CLUB_PASSWORD}): the
// secrets never sit in the sites file, and they never appear in logs, errors, metrics or events.
// The cookies the site sets are kept for the crawl. Page says how to recognise the login page;
// a page that answers with it (or with one of its Statuses) gets one fresh login and is fetched
// again.
type Login struct {
	Method      string            `yaml:"method,omitempty"`
	URL         string            `yaml:"url"`
	Form        map[string]string `yaml:"form"`
	Credentials map[string]string `yaml:"credentials,omitempty"`
	// DevDefaults, optional, are values of credentials used when their variable is unset: for a
	// local simulator's documented development login only, so a login URL on a loopback host.
	DevDefaults map[string]string `yaml:"dev_defaults,omitempty"`
	Page        LoginPage         `yaml:"login_page"`
}

// LoginPage recognises the login page (a PageMatch). At least one key is required.
type LoginPage = PageMatch

// PageMatch recognises a kind of answer: an element matching Selector, or Contains in the decoded
// body (script text included), or a status among Statuses (e.g. [401, 403]).
type PageMatch struct {
	Selector string `yaml:"selector,omitempty"`
	Contains string `yaml:"contains,omitempty"`
	Statuses []int  `yaml:"statuses,omitempty"`
}

var reEnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// compile checks the login (after withDefaults) and compiles its form.
func (l *Login) compile() ([]namedTemplate, error) {
	if l.Method != http.MethodPost {
		return nil, fmt.Errorf("method is %q; a login is a form POST", l.Method)
	}
	if err := checkURL(l.URL); err != nil {
		return nil, fmt.Errorf("url %q is not usable: %w", l.URL, err)
	}
	if len(l.Form) == 0 {
		return nil, errors.New("form (the login form's fields) is required")
	}
	for name, env := range l.Credentials {
		if !reEnvName.MatchString(env) {
			return nil, fmt.Errorf("credentials.%s must name an environment variable (letters, digits, _), not hold a value", name)
		}
	}
	for name := range l.DevDefaults {
		if _, ok := l.Credentials[name]; !ok {
			return nil, fmt.Errorf("dev_defaults.%s: no credentials.%s to default", name, name)
		}
	}
	if u, _ := url.Parse(l.URL); len(l.DevDefaults) > 0 && !isLoopback(u.Hostname()) {
		return nil, errors.New("dev_defaults are for a local simulator's development login: the login url must be on a loopback host (127.0.0.1, localhost)")
	}
	if l.Page.Selector == "" && l.Page.Contains == "" && len(l.Page.Statuses) == 0 {
		return nil, errors.New("login_page needs selector, contains or statuses: how else would a logged-out page be recognised")
	}
	if err := checkSelector(l.Page.Selector); err != nil {
		return nil, fmt.Errorf("login_page selector %q is invalid: %w", l.Page.Selector, err)
	}
	for _, s := range l.Page.Statuses {
		if s < 400 || s > 499 {
			return nil, fmt.Errorf("login_page status %d: it must be a 4xx status such as 401 or 403", s)
		}
	}
	form, err := compileMap("form", l.Form)
	if err != nil {
		return nil, err
	}
	dummy := map[string]string{}
	for name := range l.Credentials {
		dummy[name] = "x"
	}
	for _, f := range form {
		if _, err := execTemplate(f.t, loginVars{Credentials: dummy}); err != nil {
			return nil, fmt.Errorf("form.%s does not execute: %w (every {{.Credentials.NAME}} needs credentials.NAME)", f.name, err)
		}
	}
	return form, nil
}

type loginVars struct {
	Credentials map[string]string
}

// isLoopback reports whether host is a loopback address or localhost.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// LoginForm is the site's login form with the credentials' values filled in. The error names the
// field, never a value.
func (s *Site) LoginForm(creds map[string]string) (url.Values, error) {
	form := url.Values{}
	for _, f := range s.loginForm {
		v, err := execTemplate(f.t, loginVars{Credentials: creds})
		if err != nil {
			return nil, fmt.Errorf("login form.%s does not execute", f.name)
		}
		form.Set(f.name, v)
	}
	return form, nil
}
