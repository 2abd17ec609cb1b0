package site

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

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

// SiteSpec is one site of a sites file as written: the YAML schema, with nothing compiled and no
// defaults filled in. Compile (or ParseSites, LoadSites) checks it and makes the *Site that
// crawls. Its Name is the events' source. Keys left at their zero value are left out when a spec
// is written (crawler suggest marshals one).
type SiteSpec struct {
	Name string `yaml:"name"`
	// StartURLs are crawled as given. Alternatively URLTemplate is expanded for each play date
	// from the crawl's date (in Asia/Seoul) through DaysAhead days later; its data is
	// {Date time.Time, Index int}, e.g. `http://host/tee?date={{.Date.Format "20060102"}}&page=1`.
	StartURLs   []string `yaml:"start_urls,omitempty"`
	URLTemplate string   `yaml:"url_template,omitempty"`
	Targets     []Target `yaml:"targets,omitempty"`
	DaysAhead   int      `yaml:"days_ahead,omitempty"`
	// Charset, optional, is the encoding of the site's pages (a label such as euc-kr or cp949); it
	// overrides every declaration the pages make (BOM, HTTP charset, <meta>). See crawler's decodeBody.
	Charset Charset `yaml:"charset,omitempty"`

	// Login, Requests, Targets, Format and JSON declare the sources that are not one HTML page per
	// GET (see request.go, jsonpage.go, login.go): a login step; request templates instead of
	// start_urls or url_template, expanded per play date and per target; JSON responses.
	Login *Login `yaml:"login,omitempty"`
	// Env, optional, maps names the requests read as {{.Env.NAME}} to the environment variables
	// holding values of the golfer's own the site needs (a member number; env.go).
	Env map[string]string `yaml:"env,omitempty"`
	// NotOpen (format html; json: json.not_open_when) recognises a date's answer that says the
	// date is not open for booking yet (past the club's booking window): such a page opens and
	// closes nothing and keeps the crawl complete. It needs requests, so that the answer is its
	// date's.
	NotOpen  *PageMatch        `yaml:"not_open,omitempty"`
	Requests []RequestTemplate `yaml:"requests,omitempty"`
	Format   string            `yaml:"format,omitempty"` // "html" (the default) or "json"
	JSON     *JSONPage         `yaml:"json,omitempty"`

	// List, optional (HTML), selects the element that holds the rows: a page without rows counts
	// as sold out only when it shows it; otherwise the page fails (crawler.FailNoList). Default: derived
	// from Row (deriveList), else the holder of the rows on the site's last page with rows
	// (crawler.Snapshot.ListSeen).
	List string `yaml:"list,omitempty"`
	// Row selects one element per listing; Fields are read relative to it.
	Row string `yaml:"row,omitempty"`
	// Grid, optional (HTML), reads a row inside a <table> as the rendered grid: rowspan and
	// colspan expanded first, so that the row has the cells of the rows above that span it, and
	// td:nth-child(N) and a field's column: N count the columns a reader sees (grid.go).
	Grid   bool   `yaml:"grid,omitempty"`
	Fields Fields `yaml:"fields,omitempty"`
	// EmptyWhen, optional (HTML), recognises the marker row a page shows for a sold-out date
	// ("예약 가능한 시간이 없습니다"): a row that matches Row, makes no listing for want of a
	// required cell and matches an entry is no rejected row, and a page of only such rows is a
	// sold-out answer. No phrase is built in: a default would turn real rejects into sell-outs.
	EmptyWhen []RowMark `yaml:"empty_when,omitempty"`
	// NextPage, optional, selects the link to the next page of the same list.
	NextPage string `yaml:"next_page,omitempty"`
	// Follow, optional, selects links (a[href]) to crawl from every page, e.g. date tabs.
	Follow         string     `yaml:"follow,omitempty"`
	AllowedDomains []string   `yaml:"allowed_domains,omitempty"`
	Politeness     Politeness `yaml:"politeness,omitempty"`
	// MinCompleteRatio, optional (0..1), is carried for the caller's completeness gate: the
	// fraction of the previous crawl's listing count below which a crawl should be distrusted.
	MinCompleteRatio float64 `yaml:"min_complete_ratio,omitempty"`
	// Deadline, optional, bounds one crawl of the site (crawler.Runner.SiteDeadline when zero): after it
	// the crawl is cancelled and incomplete with reason deadline, so it closes nothing.
	Deadline Duration `yaml:"deadline,omitempty"`

	// Schedule, ActiveHours, Jitter and Burst time the site's crawls under `crawler run`
	// (SiteTimes; `crawler once` ignores them). Schedule is a cron spec in Asia/Seoul (5 fields or
	// @every, as --schedule) overriding the global schedule; ActiveHours ("05:00-23:00", end
	// excluded, "22:00-06:00" runs overnight) is when the site may be crawled at all, bursts
	// included; Jitter delays each scheduled crawl by a random part of it (at most half the
	// schedule's interval and at most the deadline); Burst crawls more often around a known
	// opening.
	Schedule    string   `yaml:"schedule,omitempty"`
	ActiveHours string   `yaml:"active_hours,omitempty"`
	Jitter      Duration `yaml:"jitter,omitempty"`
	Burst       []Burst  `yaml:"burst,omitempty"`
	// MissesMinInterval, optional, makes a listing's misses count at most once per this long
	// (crawler.DiffOptions.MissesMinInterval), less the jitter; with a burst it defaults to the global
	// schedule's interval, so that a burst never closes a listing faster than the schedule would.
	MissesMinInterval Duration `yaml:"misses_min_interval,omitempty"`
	// WatchedEvery, WatchedBudget and ConfirmAfter time the crawls of the site's page sets that a
	// watch asks for (#51; docs/fresh-alerts.md): a page set some watch in force can match is
	// crawled every WatchedEvery (default DefaultWatchedEvery, at least MinBurstEvery), those
	// crawls spending at most WatchedBudget times the requests an hour the site's schedule spends
	// (default 1), the stalest first beyond it; a watched page set that showed an opening or a
	// change is crawled again ConfirmAfter later (default DefaultConfirmAfter; 0s: no confirm
	// crawl, an alert goes out at its first sighting). They apply to a site whose pages are page
	// sets (requests with a play date or a course from the request).
	WatchedEvery  Duration  `yaml:"watched_every,omitempty"`
	WatchedBudget float64   `yaml:"watched_budget,omitempty"`
	ConfirmAfter  *Duration `yaml:"confirm_after,omitempty"`
}

// Burst is one burst: from At (in Asia/Seoul: "MON 09:00" weekly, "10 09:00" on the 10th of each
// month, "09:00" daily) for For, a crawl every Every, on the second (no jitter).
type Burst struct {
	At    string   `yaml:"at"`
	Every Duration `yaml:"every"`
	For   Duration `yaml:"for"`
}

// RowMark is one empty_when entry: an element matching Selector within the row, or Contains in
// the row's text. Exactly one is set.
type RowMark struct {
	Selector string `yaml:"selector,omitempty"`
	Contains string `yaml:"contains,omitempty"`
}

// Fields are the selectors of a listing's cells, keyed by cell name (cellTable: course,
// course_part, round_date, tee_time, price, players); course, round_date and tee_time are
// required. A key that names no cell is an error.
type Fields map[string]Field

// MarshalYAML writes the fields in cellTable's order (a key that names no cell, which Compile
// rejects, last).
func (f Fields) MarshalYAML() (any, error) {
	var n yaml.Node
	n.Kind, n.Tag = yaml.MappingNode, "!!map"
	keys := sortedKeys(f)
	slices.SortStableFunc(keys, func(a, b string) int { return cmp.Compare(cellRank(a), cellRank(b)) })
	for _, k := range keys {
		var v yaml.Node
		if err := v.Encode(f[k]); err != nil {
			return nil, err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, &v)
	}
	return &n, nil
}

// Field says how to read one cell: the text (or attribute Attr) of the first element matching
// Selector within the row (an empty Selector means the row itself), optionally narrowed by Regex,
// whose one capture group is the value. Its YAML form is fieldyaml.go's.
type Field struct {
	Selector string `yaml:"selector,omitempty"`
	// Column (HTML with grid: true), 1-based, reads the row's cell in that column of the
	// rendered grid (Selector, if any, within it).
	Column int    `yaml:"column,omitempty"`
	Attr   string `yaml:"attr,omitempty"`
	Regex  string `yaml:"regex,omitempty"`
	// Path (format json only) is the gjson path of the value within a row. Value is a template over
	// the request's variables ({{.Date}}, {{.Target.name}}, ...) or a constant: the field then comes
	// from the request, not the row (see request.go).
	Path string `yaml:"path,omitempty"`
	// Group (JSON, a rows path with []) reads Path in the group the row was found in, the N-th []
	// of the rows path (1: the outermost); GroupKey reads that group's key (the member name of an
	// object's member) instead.
	Group    int    `yaml:"group,omitempty"`
	GroupKey int    `yaml:"group_key,omitempty"`
	Value    string `yaml:"value,omitempty"`
	// Fallbacks are further sources of the same kind as the first, tried in order when it gives
	// no value (sources.go): `path: [BK_S_CHARGE_NM, BK_B_CHARGE_NM]` is Path BK_S_CHARGE_NM and
	// Fallbacks [BK_B_CHARGE_NM]; with Selector, selectors. Value after a row source is the last
	// fallback. Only for cells that identify nothing (price, players).
	Fallbacks []string `yaml:"-"`
}

// Configured reports whether the field is read from the row's HTML: a selector, an attribute or
// a column.
func (f Field) Configured() bool { return f.Selector != "" || f.Attr != "" || f.Column > 0 }

// Politeness bounds how hard a crawl presses on the site. Zero values mean the defaults above,
// except where noted.
type Politeness struct {
	Delay          Duration `yaml:"delay,omitempty"`        // between requests per slot; default 1 s
	RandomDelay    Duration `yaml:"random_delay,omitempty"` // extra jitter up to this; default 500 ms
	Parallelism    int      `yaml:"parallelism,omitempty"`  // default 2, at most 2
	RequestTimeout Duration `yaml:"request_timeout,omitempty"`
	Retries        int      `yaml:"retries,omitempty"`      // after the first attempt; default 3, at most 10
	BackoffBase    Duration `yaml:"backoff_base,omitempty"` // default 500 ms
	BackoffCap     Duration `yaml:"backoff_cap,omitempty"`  // default 10 s
	MaxBodyBytes   int      `yaml:"max_body_bytes,omitempty"`
	MaxPages       int      `yaml:"max_pages,omitempty"`
	UserAgent      string   `yaml:"user_agent,omitempty"`
	// IgnoreRobotsTxt opts out of robots.txt, which is obeyed by default.
	IgnoreRobotsTxt bool `yaml:"ignore_robots_txt,omitempty"`
	// NoDelay makes Delay and RandomDelay really zero instead of their defaults (tests, own sites).
	NoDelay bool `yaml:"no_delay,omitempty"`
	// NoRetry makes Retries really zero instead of the default.
	NoRetry bool `yaml:"no_retry,omitempty"`
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
	Sites []SiteSpec `yaml:"sites"`
}

// LoadSites reads a sites file and compiles its sites (ParseSites).
func LoadSites(path string) ([]*Site, error) {
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

// ParseSites parses the contents of a sites file (ParseSpecs) and compiles every site; names must
// be unique. This is the one place a sites file is checked: what it returns is never validated
// again.
func ParseSites(b []byte) ([]*Site, error) {
	specs, err := ParseSpecs(b)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	sites := make([]*Site, 0, len(specs))
	for i, spec := range specs {
		s, err := spec.Compile()
		if err != nil {
			return nil, withLine(b, i, spec.Name, err)
		}
		if seen[s.Name] {
			return nil, fmt.Errorf("site name %q is used twice; names are event sources and must be unique", s.Name)
		}
		seen[s.Name] = true
		sites = append(sites, s)
	}
	return sites, nil
}

// ParseSpecs reads the sites of a sites file as written: YAML with one top-level key, sites, a
// list of SiteSpec. Unknown keys are errors (a typo must not silently drop a selector), and so is
// a value of the wrong kind: each with its line, where it is and what is allowed there
// (shapeErrors), all at once.
func ParseSpecs(b []byte) ([]SiteSpec, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, yamlErrors(err)
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("the file is empty; it must list at least one site under \"sites\"")
	}
	if errs := shapeErrors(&doc); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var f sitesFile
	if err := doc.Decode(&f); err != nil {
		return nil, yamlErrors(err)
	}
	if len(f.Sites) == 0 {
		return nil, errors.New("no sites are listed under \"sites\"")
	}
	return f.Sites, nil
}

// withDefaults is s with every default filled in (format, login method, politeness); what is
// derived from the compiled site (the list, allowed_domains) is filled in by Compile. s's own
// Login is not changed.
func (s SiteSpec) withDefaults() SiteSpec {
	s.Format = cmp.Or(s.Format, FormatHTML)
	if s.Login != nil {
		l := *s.Login
		if l.Method == "" || strings.EqualFold(l.Method, http.MethodPost) {
			l.Method = http.MethodPost
		}
		s.Login = &l
	}
	s.Politeness = s.Politeness.withDefaults()
	return s
}

func (p Politeness) withDefaults() Politeness {
	if !p.NoDelay {
		p.Delay = cmp.Or(p.Delay, Duration(DefaultDelay))
		p.RandomDelay = cmp.Or(p.RandomDelay, Duration(DefaultRandomDelay))
	}
	p.Parallelism = cmp.Or(p.Parallelism, DefaultParallelism)
	p.RequestTimeout = cmp.Or(p.RequestTimeout, Duration(DefaultRequestTimeout))
	if !p.NoRetry {
		p.Retries = cmp.Or(p.Retries, DefaultRetries)
	}
	p.BackoffBase = cmp.Or(p.BackoffBase, Duration(DefaultBackoffBase))
	p.BackoffCap = cmp.Or(p.BackoffCap, Duration(DefaultBackoffCap))
	p.MaxBodyBytes = cmp.Or(p.MaxBodyBytes, DefaultMaxBodyBytes)
	p.MaxPages = cmp.Or(p.MaxPages, DefaultMaxPages)
	p.UserAgent = cmp.Or(p.UserAgent, DefaultUserAgent)
	return p
}
