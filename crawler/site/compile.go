package site

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/andybalholm/cascadia"
)

// Site is a compiled site: its spec with every default filled in, and what crawling it needs
// compiled once (the URL template, the requests, the login form, each cell's regex and value
// template, the list selector). Only Compile makes one (ParseSites and LoadSites call it), and
// nothing checks it again: crawler.Collect, the host limiter, check, try and practice take it as it is.
// Read its SiteSpec; to change a site, change a copy of the spec and Compile that.
type Site struct {
	SiteSpec

	tmpl      *template.Template
	req       *compiledRequests
	loginForm []namedTemplate
	fields    [len(cellTable)]CompiledField // indexed like cellTable; unset cells are zero
	list      string                        // List, or the one derived from Row; empty: the holder remembered from a page with rows
	times     SiteTimes                     // the site's own times; its schedule is nil without a schedule: key (Times fills in the global one)

	namesDate bool // the requests name the play date: rows of another date are dropped (FromRequest)
}

// ListSelector is the selector of the element that holds the rows: List, or the one derived from
// Row; empty when neither gives one (the holder remembered from a page with rows then stands in).
func (s *Site) ListSelector() string { return s.list }

// compileEmptyWhen checks the HTML empty_when entries.
func (s *Site) compileEmptyWhen(fail func(string, ...any) error) error {
	if len(s.EmptyWhen) > 0 && s.Format == FormatJSON {
		return fail("empty_when is for format html; format json declares json.empty_when")
	}
	for i, m := range s.EmptyWhen {
		if (m.Selector == "") == (m.Contains == "") {
			return fail("empty_when[%d]: set selector or contains (one of them)", i)
		}
		if err := checkSelector(m.Selector); err != nil {
			return fail("empty_when[%d] selector %q is invalid: %v", i, m.Selector, err)
		}
	}
	return nil
}

// CompiledField is a cell's Field with its regex and value template compiled.
type CompiledField struct {
	Field
	re    *regexp.Regexp
	value *template.Template
}

// Narrow is v narrowed by the field's Regex (its one capture group); false when it does not match.
func (f *CompiledField) Narrow(v string) (string, bool) {
	if f.re == nil {
		return v, true
	}
	m := f.re.FindStringSubmatch(v)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// Compile checks s, fills in its defaults (withDefaults) and compiles it. Errors are whole
// sentences naming the site and the key.
func (s SiteSpec) Compile() (*Site, error) {
	site := &Site{SiteSpec: s.withDefaults()}
	if err := site.compile(); err != nil {
		return nil, err
	}
	return site, nil
}

func (s *Site) compile() error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("site %q: "+format, append([]any{s.Name}, args...)...)
	}
	if strings.TrimSpace(s.Name) == "" {
		return errors.New("a site has no name; the name is the events' source and is required")
	}
	if s.Charset != "" {
		if _, _, err := LookupCharset(string(s.Charset)); err != nil {
			return fail("%w", err)
		}
	}
	switch {
	case len(s.Requests) > 0 && (len(s.StartURLs) > 0 || s.URLTemplate != ""):
		return fail("set requests, or start_urls or url_template, not both")
	case len(s.Requests) > 0:
	case len(s.StartURLs) == 0 && s.URLTemplate == "":
		return fail("set either start_urls or url_template, or requests")
	case len(s.StartURLs) > 0 && s.URLTemplate != "":
		return fail("set start_urls or url_template, not both")
	case s.DaysAhead < 0 || s.DaysAhead > 366:
		return fail("days_ahead is %d; it must be between 0 and 366", s.DaysAhead)
	case s.DaysAhead > 0 && s.URLTemplate == "" && len(s.Requests) == 0:
		return fail("days_ahead only applies to url_template and requests")
	}
	for _, u := range s.StartURLs {
		if err := checkURL(u); err != nil {
			return fail("start URL %q is not usable: %v", u, err)
		}
	}
	if s.URLTemplate != "" {
		t, err := template.New(s.Name).Option("missingkey=error").Parse(s.URLTemplate)
		if err != nil {
			return fail("url_template does not parse: %v", err)
		}
		s.tmpl = t
		if _, err := s.URLs(time.Date(2026, 1, 1, 0, 0, 0, 0, Seoul())); err != nil {
			return fail("url_template does not expand to a URL: %v", err)
		}
	}
	if err := s.compileSources(fail); err != nil {
		return err
	}
	if s.Row == "" && s.Format != FormatJSON {
		return fail("row (the selector of one listing) is required")
	}
	if s.Grid && s.Format == FormatJSON {
		return fail("%w", &keyError{key: "grid", err: errors.New("grid reads the rows of an HTML table; format json has no table")})
	}
	for _, sel := range []struct{ name, sel string }{{"row", s.Row}, {"list", s.List}, {"next_page", s.NextPage}, {"follow", s.Follow}} {
		if err := checkSelector(sel.sel); err != nil {
			return fail("%s selector %q is invalid: %v", sel.name, sel.sel, err)
		}
	}
	if err := s.compileEmptyWhen(fail); err != nil {
		return err
	}
	s.list = s.List
	if s.list == "" && s.Format != FormatJSON {
		s.list, _ = deriveList(s.Row)
	}
	if err := s.compileFields(fail); err != nil {
		return err
	}
	if s.MinCompleteRatio < 0 || s.MinCompleteRatio > 1 {
		return fail("min_complete_ratio is %g; it must be between 0 and 1", s.MinCompleteRatio)
	}
	if s.Deadline < 0 || s.Deadline.D() > MaxSiteDeadline {
		return fail("deadline is %s; it must be between 0 (the runner's default) and %s", s.Deadline.D(), MaxSiteDeadline)
	}
	if len(s.AllowedDomains) == 0 {
		s.AllowedDomains = s.hosts()
	}
	if err := s.compileTimes(fail); err != nil {
		return err
	}
	return s.Politeness.check(fail)
}

// hosts are the host names of the start URLs (or of the template's first expansion): the default
// allowed_domains, so that a next link cannot lead the crawl off the site.
func (s *Site) hosts() []string {
	urls, _ := s.URLs(time.Date(2026, 1, 1, 0, 0, 0, 0, Seoul()))
	urls = append(urls, s.RequestURLs()...)
	var out []string
	for _, raw := range urls {
		if u, err := url.Parse(raw); err == nil && !slices.Contains(out, u.Hostname()) {
			out = append(out, u.Hostname())
		}
	}
	return out
}

// check checks the politeness after withDefaults.
func (p Politeness) check(fail func(string, ...any) error) error {
	switch {
	case p.Delay < 0 || p.RandomDelay < 0 || p.Delay.D() > time.Minute || p.RandomDelay.D() > time.Minute:
		return fail("politeness delay and random_delay must be between 0 and 1m")
	case p.Parallelism < 1 || p.Parallelism > MaxParallelism:
		return fail("politeness parallelism is %d; it must be 1 or %d so that we never hammer a site", p.Parallelism, MaxParallelism)
	case p.RequestTimeout < 0 || p.RequestTimeout.D() > 5*time.Minute:
		return fail("politeness request_timeout must be between 0 and 5m")
	case p.Retries < 0 || p.Retries > MaxRetries:
		return fail("politeness retries is %d; it must be between 0 and %d", p.Retries, MaxRetries)
	case p.BackoffBase < 0 || p.BackoffCap < p.BackoffBase:
		return fail("politeness backoff_base must be positive and at most backoff_cap")
	case p.MaxBodyBytes < 1024 || p.MaxBodyBytes > 100<<20:
		return fail("politeness max_body_bytes is %d; it must be between 1024 and 104857600", p.MaxBodyBytes)
	case p.MaxPages < 1 || p.MaxPages > 100000:
		return fail("politeness max_pages is %d; it must be between 1 and 100000", p.MaxPages)
	}
	return nil
}

// URLs returns the start URLs of a crawl at crawledAt: StartURLs, or URLTemplate expanded for the
// crawl's date in Asia/Seoul and each of the DaysAhead days after it.
func (s *Site) URLs(crawledAt time.Time) ([]string, error) {
	if s.URLTemplate == "" {
		return s.StartURLs, nil
	}
	if s.tmpl == nil {
		return nil, fmt.Errorf("site %q: compile the site (SiteSpec.Compile) before URLs", s.Name)
	}
	y, m, d := crawledAt.In(Seoul()).Date()
	var out []string
	for i := 0; i <= s.DaysAhead; i++ {
		var b strings.Builder
		data := struct {
			Date  time.Time
			Index int
		}{time.Date(y, m, d+i, 0, 0, 0, 0, Seoul()), i}
		if err := s.tmpl.Execute(&b, data); err != nil {
			return nil, fmt.Errorf("expand url_template for day %d: %w", i, err)
		}
		if err := checkURL(b.String()); err != nil {
			return nil, fmt.Errorf("url_template gave %q: %w", b.String(), err)
		}
		out = append(out, b.String())
	}
	return out, nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("the scheme must be http or https")
	}
	if u.Host == "" {
		return errors.New("the host is missing")
	}
	return nil
}

// checkSelector compiles a CSS selector. goquery silently matches nothing for an invalid one, so a
// typo would look like an empty site; it must fail at load instead.
func checkSelector(sel string) error {
	if sel == "" {
		return nil
	}
	_, err := cascadia.Compile(sel)
	return err
}
