package crawler

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/andybalholm/cascadia"
	"github.com/golfcrawler/golf-crawler/internal/defaults"
	"gopkg.in/yaml.v3"
)

// DefaultSitesFile is the sites file used when neither --sites nor CRAWLER_SITES names one.
const DefaultSitesFile = "compose/dev/sites.yaml"

// Politeness defaults. One request a second per site with up to half a second of jitter and two
// requests in flight is what a small booking site tolerates without noticing us; retries back off
// exponentially from 500 ms, capped at 10 s, and a Retry-After longer than MaxRetryAfter is capped
// there too, so one crawl never stalls for minutes on one page.
const (
	DefaultDelay          = time.Second
	DefaultRandomDelay    = 500 * time.Millisecond
	DefaultParallelism    = 2
	MaxParallelism        = 2
	DefaultRequestTimeout = 10 * time.Second
	DefaultRetries        = 3
	MaxRetries            = 10
	DefaultBackoffBase    = 500 * time.Millisecond
	DefaultBackoffCap     = 10 * time.Second
	MaxRetryAfter         = 60 * time.Second
	DefaultMaxBodyBytes   = 5 << 20
	DefaultMaxPages       = 500
	DefaultUserAgent      = "golf-crawler/1.0 (+https://github.com/golfcrawler/golf-crawler)"
	MaxSiteDeadline       = 24 * time.Hour
)

// Site is one booking site: where its pages are and how to read a listing out of them. Its Name is
// the events' source. Build it with LoadSites (which validates and fills defaults) or by hand
// followed by Validate.
type Site struct {
	Name string `yaml:"name"`
	// StartURLs are crawled as given. Alternatively URLTemplate is expanded for each play date
	// from the crawl's date (in Asia/Seoul) through DaysAhead days later; its data is
	// {Date time.Time, Index int}, e.g. `http://host/tee?date={{.Date.Format "20060102"}}&page=1`.
	StartURLs   []string `yaml:"start_urls"`
	URLTemplate string   `yaml:"url_template"`
	DaysAhead   int      `yaml:"days_ahead"`
	// Follow, optional, selects links (a[href]) to crawl from every page, e.g. date tabs.
	Follow string `yaml:"follow"`
	// Row selects one element per listing; Fields are read relative to it.
	Row    string `yaml:"row"`
	Fields Fields `yaml:"fields"`
	// List, optional (HTML), selects the element that holds the rows: a page without rows counts
	// as sold out only when it shows it; otherwise the page fails (FailNoList). Default: derived
	// from Row (deriveList), else the holder of the rows on the site's last page with rows
	// (Snapshot.ListSeen).
	List string `yaml:"list"`
	// NextPage, optional, selects the link to the next page of the same list.
	NextPage       string     `yaml:"next_page"`
	AllowedDomains []string   `yaml:"allowed_domains"`
	Politeness     Politeness `yaml:"politeness"`
	// MinCompleteRatio, optional (0..1), is carried for the caller's completeness gate: the
	// fraction of the previous crawl's listing count below which a crawl should be distrusted.
	MinCompleteRatio float64 `yaml:"min_complete_ratio"`
	// Deadline, optional, bounds one crawl of the site (Runner.SiteDeadline when zero): after it
	// the crawl is cancelled and incomplete with reason deadline, so it closes nothing.
	Deadline Duration `yaml:"deadline"`

	// Requests, Targets, Format, JSON and Login declare the sources that are not one HTML page per
	// GET (see request.go, jsonpage.go, login.go): request templates instead of start_urls or
	// url_template, expanded per play date and per target; JSON responses; a login step.
	Requests []RequestTemplate `yaml:"requests"`
	Targets  []Target          `yaml:"targets"`
	Format   string            `yaml:"format"` // "html" (the default) or "json"
	JSON     *JSONPage         `yaml:"json"`
	Login    *Login            `yaml:"login"`
	// Charset, optional, is the encoding of the site's pages (a label such as euc-kr or cp949); it
	// overrides every declaration the pages make (BOM, HTTP charset, <meta>). See decodeBody.
	Charset Charset `yaml:"charset"`

	tmpl *template.Template
	req  *compiledRequests
	list string // List, or the one derived from Row; empty: the holder remembered from a page with rows
}

// Fields are the selectors of a listing's cells. Course, RoundDate and TeeTime are required.
type Fields struct {
	Course     Field `yaml:"course"`
	CoursePart Field `yaml:"course_part"`
	RoundDate  Field `yaml:"round_date"`
	TeeTime    Field `yaml:"tee_time"`
	Price      Field `yaml:"price"`
	Players    Field `yaml:"players"`
}

// Field says how to read one cell: the text (or attribute Attr) of the first element matching
// Selector within the row (an empty Selector means the row itself), optionally narrowed by Regex,
// whose one capture group is the value.
type Field struct {
	Selector string `yaml:"selector"`
	Attr     string `yaml:"attr"`
	Regex    string `yaml:"regex"`
	// Path (format json only) is the gjson path of the value within a row. Value is a template over
	// the request's variables ({{.Date}}, {{.Target.name}}, ...) or a constant: the field then comes
	// from the request, not the row (see request.go).
	Path  string `yaml:"path"`
	Value string `yaml:"value"`

	re    *regexp.Regexp
	value *template.Template
}

func (f Field) configured() bool { return f.Selector != "" || f.Attr != "" }

// Politeness bounds how hard a crawl presses on the site. Zero values mean the defaults above,
// except where noted.
type Politeness struct {
	Delay          Duration `yaml:"delay"`        // between requests per slot; default 1 s
	RandomDelay    Duration `yaml:"random_delay"` // extra jitter up to this; default 500 ms
	Parallelism    int      `yaml:"parallelism"`  // default 2, at most 2
	RequestTimeout Duration `yaml:"request_timeout"`
	Retries        int      `yaml:"retries"`      // after the first attempt; default 3, at most 10
	BackoffBase    Duration `yaml:"backoff_base"` // default 500 ms
	BackoffCap     Duration `yaml:"backoff_cap"`  // default 10 s
	MaxBodyBytes   int      `yaml:"max_body_bytes"`
	MaxPages       int      `yaml:"max_pages"`
	UserAgent      string   `yaml:"user_agent"`
	// IgnoreRobotsTxt opts out of robots.txt, which is obeyed by default.
	IgnoreRobotsTxt bool `yaml:"ignore_robots_txt"`
	// NoDelay makes Delay and RandomDelay really zero instead of their defaults (tests, own sites).
	NoDelay bool `yaml:"no_delay"`
	// NoRetry makes Retries really zero instead of the default.
	NoRetry bool `yaml:"no_retry"`
}

// Duration is a time.Duration read from YAML as a Go duration string ("1s", "500ms"); a bare
// number is rejected because its unit would be a guess.
type Duration time.Duration

// UnmarshalYAML reads a duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return fmt.Errorf("line %d: a duration must be a string with a unit, such as \"1s\" or \"500ms\", not %q", n.Line, n.Value)
	}
	v, err := time.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML writes d as UnmarshalYAML reads it ("1s", "500ms").
func (d Duration) MarshalYAML() (any, error) { return d.D().String(), nil }

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

type sitesFile struct {
	Sites []Site `yaml:"sites"`
}

// LoadSites reads and validates a sites file: YAML with one top-level key, sites, a list of Site.
// Unknown keys are errors (a typo must not silently drop a selector).
func LoadSites(path string) ([]Site, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read sites file: %w", err)
	}
	sites, err := ParseSites(b)
	if err != nil {
		return nil, fmt.Errorf("sites file %s: %w", path, err)
	}
	return sites, nil
}

// ParseSites parses and validates the contents of a sites file (see LoadSites).
func ParseSites(b []byte) ([]Site, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var f sitesFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the file is empty; it must list at least one site under \"sites\"")
		}
		return nil, fmt.Errorf("parse YAML: %w", err)
	}
	if len(f.Sites) == 0 {
		return nil, errors.New("no sites are listed under \"sites\"")
	}
	seen := map[string]bool{}
	for i := range f.Sites {
		if err := f.Sites[i].Validate(); err != nil {
			return nil, err
		}
		if seen[f.Sites[i].Name] {
			return nil, fmt.Errorf("site name %q is used twice; names are event sources and must be unique", f.Sites[i].Name)
		}
		seen[f.Sites[i].Name] = true
	}
	return f.Sites, nil
}

// Validate checks s, fills in defaults and compiles its template, regexes and selectors. Errors
// are whole sentences naming the site and the field.
func (s *Site) Validate() error {
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
	if err := s.validateSources(fail); err != nil {
		return err
	}
	if s.Row == "" && s.Format != FormatJSON {
		return fail("row (the selector of one listing) is required")
	}
	for _, sel := range []struct{ name, sel string }{{"row", s.Row}, {"list", s.List}, {"next_page", s.NextPage}, {"follow", s.Follow}} {
		if err := checkSelector(sel.sel); err != nil {
			return fail("%s selector %q is invalid: %v", sel.name, sel.sel, err)
		}
	}
	s.list = s.List
	if s.list == "" && s.Format != FormatJSON {
		s.list, _ = deriveList(s.Row)
	}
	if err := s.validateFields(fail); err != nil {
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
	return s.Politeness.validate(fail)
}

// hosts are the host names of the start URLs (or of the template's first expansion): the default
// allowed_domains, so that a next link cannot lead the crawl off the site.
func (s *Site) hosts() []string {
	urls, _ := s.URLs(time.Date(2026, 1, 1, 0, 0, 0, 0, Seoul()))
	urls = append(urls, s.requestURLs()...)
	var out []string
	for _, raw := range urls {
		if u, err := url.Parse(raw); err == nil && !slices.Contains(out, u.Hostname()) {
			out = append(out, u.Hostname())
		}
	}
	return out
}

func (p *Politeness) validate(fail func(string, ...any) error) error {
	if !p.NoDelay {
		defaults.Zero(&p.Delay, Duration(DefaultDelay))
		defaults.Zero(&p.RandomDelay, Duration(DefaultRandomDelay))
	}
	defaults.Zero(&p.Parallelism, DefaultParallelism)
	defaults.Zero(&p.RequestTimeout, Duration(DefaultRequestTimeout))
	if !p.NoRetry {
		defaults.Zero(&p.Retries, DefaultRetries)
	}
	defaults.Zero(&p.BackoffBase, Duration(DefaultBackoffBase))
	defaults.Zero(&p.BackoffCap, Duration(DefaultBackoffCap))
	defaults.Zero(&p.MaxBodyBytes, DefaultMaxBodyBytes)
	defaults.Zero(&p.MaxPages, DefaultMaxPages)
	defaults.Zero(&p.UserAgent, DefaultUserAgent)
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
		return nil, fmt.Errorf("site %q: call Validate before URLs", s.Name)
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
