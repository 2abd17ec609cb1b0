package crawler

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/PuerkitoBio/goquery"
	"github.com/gocolly/colly/v2"
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

// maxRelogins bounds the fresh logins of one crawl: a site that keeps logging us out is failing.
const maxRelogins = 3

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

// isLoginPage reports whether a page answered with the login page.
func (l *Login) isLoginPage(status int, body []byte) bool { return l.Page.matches(status, body) }

// matches reports whether an answer with status and body is the kind m recognises: a status among
// Statuses, or (for a status below 400) Contains in the body or an element matching Selector.
func (m PageMatch) matches(status int, body []byte) bool {
	if slices.Contains(m.Statuses, status) {
		return true
	}
	if status >= 400 {
		return false
	}
	if m.Contains != "" && bytes.Contains(body, []byte(m.Contains)) {
		return true
	}
	if m.Selector != "" {
		doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
		if err == nil && doc.Find(m.Selector).Length() > 0 {
			return true
		}
	}
	return false
}

// isLoopback reports whether host is a loopback address or localhost.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// credentials reads the login's secrets from the environment, else from DevDefaults.
func (l *Login) credentials(getenv func(string) string) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range sortedKeys(l.Credentials) {
		env := l.Credentials[name]
		v := cmp.Or(getenv(env), l.DevDefaults[name])
		if v == "" {
			return nil, fmt.Errorf("login credential %s: environment variable %s is not set", name, env)
		}
		out[name] = v
	}
	return out, nil
}

// session is a crawl's login state: the credentials, the login generation (how many logins so
// far) and the outcome of the last one.
type session struct {
	login   *Login
	creds   map[string]string
	secrets []string
	lc      *colly.Collector

	mu       sync.Mutex
	gen      int
	err      error
	relogins int
	// the last login response, written by lc's callbacks while mu is held
	status int
	hdr    http.Header
	body   []byte
	ferr   error
}

// generation returns the current login generation and whether the last login failed.
func (s *session) generation() (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen, s.err
}

// ensure logs in again unless a login newer than seen already happened. At most maxRelogins
// fresh logins per crawl; after that, and after any failed login, it returns the failure.
func (cr *crawl) relogin(seen int) error {
	s := cr.sess
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || s.gen > seen {
		return s.err
	}
	if s.relogins >= maxRelogins {
		s.err = fmt.Errorf("the site logged us out more than %d times in one crawl", maxRelogins)
		return s.err
	}
	s.relogins++
	cr.mu.Lock()
	cr.res.Relogins++
	cr.mu.Unlock()
	cr.log.InfoContext(cr.ctx, "login expired; logging in again", "login_url", s.login.URL)
	s.err = cr.doLogin()
	s.gen++
	return s.err
}

// doLogin posts the login form, retrying like a page, and checks that the answer is not the login
// page again. Errors name the URL and status, never the form's values.
func (cr *crawl) doLogin() error {
	s := cr.sess
	form := url.Values{}
	for _, f := range cr.site.loginForm {
		v, err := execTemplate(f.t, loginVars{Credentials: s.creds})
		if err != nil {
			return fmt.Errorf("login form.%s does not execute", f.name)
		}
		form.Set(f.name, v)
	}
	body := []byte(form.Encode())
	p := cr.site.Politeness
	for attempt := 0; ; attempt++ {
		s.status, s.hdr, s.body, s.ferr = 0, nil, nil, nil
		h := http.Header{}
		h.Set("Content-Type", "application/x-www-form-urlencoded")
		err := s.lc.Request(s.login.Method, s.login.URL, bytes.NewReader(body), nil, h)
		status, hdr, resp, ferr := s.status, s.hdr, s.body, s.ferr
		cr.deps.Metrics.PageFetched(cr.site.Name, status)
		if err != nil && ferr == nil {
			if errors.Is(err, colly.ErrRobotsTxtBlocked) {
				return fmt.Errorf("login %s refused by robots.txt (set ignore_robots_txt to opt out)", s.login.URL)
			}
			ferr = err
		}
		if ferr == nil {
			if s.login.isLoginPage(status, resp) {
				return fmt.Errorf("login %s: the site answered with its login page again (status %d): are the credentials right?", s.login.URL, status)
			}
			cr.log.InfoContext(cr.ctx, "logged in", "login_url", s.login.URL, "status", status)
			return nil
		}
		if slices.Contains(s.login.Page.Statuses, status) {
			return fmt.Errorf("login %s: status %d: are the credentials right?", s.login.URL, status)
		}
		wait, retry := retryDelay(status, hdr, attempt, p.BackoffBase.D(), p.BackoffCap.D(), cr.deps.Now())
		if !retry || attempt >= p.Retries {
			return fmt.Errorf("login %s: attempt %d of %d: status %d: %s", s.login.URL, attempt+1, p.Retries+1, status, redact(ferr.Error(), s.secrets))
		}
		if err := cr.deps.Sleep(cr.ctx, wait); err != nil {
			return fmt.Errorf("login %s: %w", s.login.URL, err)
		}
		cr.deps.Metrics.Retry(cr.site.Name)
	}
}

// startSession reads the credentials, builds the login collector over the crawl's cookie jar
// and logs in. A failure is returned (and the crawl's pages then fail without being fetched).
func (cr *crawl) startSession(ctx context.Context, transport http.RoundTripper) error {
	l := cr.site.Login
	s := &session{login: l}
	cr.sess = s
	creds, err := l.credentials(cr.deps.Getenv)
	if err != nil {
		s.err = err
		return err
	}
	s.creds = creds
	for _, v := range creds {
		s.secrets = append(s.secrets, v)
	}
	cr.secrets = s.secrets
	cr.log = slog.New(redactHandler{h: cr.log.Handler(), secrets: s.secrets})
	lc, err := newCollector(ctx, cr.site, transport)
	if err != nil {
		s.err = err
		return err
	}
	lc.Async = false
	lc.AllowURLRevisit = true
	lc.SetCookieJar(cr.jar)
	lc.OnResponse(func(r *colly.Response) { // decoded like a page, for login_page's contains
		s.status = r.StatusCode
		s.body, _ = decodeBody(cr.site, responseContentType(r.Headers), r.Body)
	})
	lc.OnError(func(r *colly.Response, err error) {
		s.status, s.ferr = r.StatusCode, err
		if r.Headers != nil {
			s.hdr = *r.Headers
		}
	})
	s.lc = lc
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = cr.doLogin()
	s.gen = 1
	return s.err
}

// redact replaces every secret in s by "***".
func redact(s string, secrets []string) string {
	for _, sec := range secrets {
		if sec != "" && strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, "***")
		}
	}
	return s
}

// Redact replaces every occurrence of the secrets in s by "***" (for `crawler try` output).
func Redact(s string, secrets []string) string { return redact(s, secrets) }

// redactHandler is a slog.Handler that removes the crawl's secrets from every message and
// attribute value, a second line of defence behind never logging a login form at all.
type redactHandler struct {
	h       slog.Handler
	secrets []string
}

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, redact(rec.Message, r.secrets), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, redact(v.String(), r.secrets))
	case slog.KindGroup:
		var as []any
		for _, g := range v.Group() {
			as = append(as, r.attr(g))
		}
		return slog.Group(a.Key, as...)
	case slog.KindAny:
		s := fmt.Sprint(v.Any())
		if red := redact(s, r.secrets); red != s {
			return slog.String(a.Key, red)
		}
	}
	return a
}

func (r redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = r.attr(a)
	}
	return redactHandler{h: r.h.WithAttrs(out), secrets: r.secrets}
}

func (r redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{h: r.h.WithGroup(name), secrets: r.secrets}
}
