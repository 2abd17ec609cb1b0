package crawler

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/PuerkitoBio/goquery"
	"github.com/gocolly/colly/v2"
	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// maxRelogins bounds the fresh logins of one crawl: a site that keeps logging us out is failing.
const maxRelogins = 3

// isLoginPage reports whether a page answered with the login page.
func isLoginPage(l *site.Login, status int, body []byte) bool {
	return pageMatches(l.Page, status, body)
}

// pageMatches reports whether an answer with status and body is the kind m recognises: a status
// among Statuses, or (for a status below 400) Contains in the body or an element matching Selector.
func pageMatches(m site.PageMatch, status int, body []byte) bool {
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

// credentials reads the login's secrets from the environment, else from DevDefaults.
func credentials(l *site.Login, getenv func(string) string) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(l.Credentials)) {
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
	login   *site.Login
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
	form, err := cr.site.LoginForm(s.creds)
	if err != nil {
		return err
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
			if isLoginPage(s.login, status, resp) {
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
	creds, err := credentials(l, cr.deps.Getenv)
	if err != nil {
		s.err = err
		return err
	}
	s.creds = creds
	for _, v := range creds {
		s.secrets = append(s.secrets, v)
	}
	cr.secrets.add(s.secrets...)
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
	secrets *secretSet
}

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.secrets.redact(rec.Message), rec.PC)
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
		return slog.String(a.Key, r.secrets.redact(v.String()))
	case slog.KindGroup:
		var as []any
		for _, g := range v.Group() {
			as = append(as, r.attr(g))
		}
		return slog.Group(a.Key, as...)
	case slog.KindAny:
		s := fmt.Sprint(v.Any())
		if red := r.secrets.redact(s); red != s {
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
