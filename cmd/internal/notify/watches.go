package notify

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/golfcrawler/golf-crawler/events"
)

// Seoul is the time zone of play dates and "next N days".
var Seoul = mustLoad("Asia/Seoul")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		return time.FixedZone("KST", 9*3600)
	}
	return loc
}

// Watch is one golfer's wish: which listings, when, at what price, and where to say so.
type Watch struct {
	Name         string
	Sources      []string  // exact source names; any if empty
	Courses      []string  // case-insensitive substrings of course_name (or course_part); any if empty
	CoursesExact []string  // exact course names
	DateFrom     time.Time // play-date range, inclusive (zero: open)
	DateTo       time.Time
	NextDays     int            // or: play date within today .. today+N-1 (Seoul)
	Weekdays     []time.Weekday // any if empty
	TimeFrom     string         // tee-time window "HH:MM", inclusive
	TimeTo       string
	MaxPriceKRW  *int64
	MinPlayers   *int
	Channels     []string
	// Muted is `enabled: false`: the watch claims nothing, and its claims still waiting are
	// skipped (watch_muted) at send time.
	Muted bool
	// NoBacklog is `backlog: false`: when the watch is new or its conditions changed, it hears
	// only of what enters it from then on, not of what matches already (Config.Backlog).
	NoBacklog bool
	// FromChat: made by /watch in a command channel's chat (ChatWatch), not read from the file.
	FromChat bool
}

// Config is a parsed watches file.
type Config struct {
	Channels map[string]*Channel
	Watches  []*Watch

	index *watchIndex // built by Parse; MatchAll scans every watch without it

	fpOnce sync.Once
	fps    []string // each watch's Fingerprint, by index (fingerprints)
}

// Secrets returns every secret the config holds (URLs from url_env, tokens): for scrubbing.
func (c *Config) Secrets() []string {
	var out []string
	for _, ch := range c.Channels {
		if ch.Token != "" {
			out = append(out, ch.Token)
		}
		if ch.Type != Webhook && ch.URL != "" {
			out = append(out, ch.URL)
			if i := strings.LastIndex(ch.URL, "/"); i > 0 && len(ch.URL)-i > 8 {
				out = append(out, ch.URL[i+1:])
			}
		}
	}
	return out
}

// The file's shape, decoded with KnownFields from yaml.v3 nodes (so every error has a line).
type fileRange struct {
	From string `yaml:"from"`
	To   string `yaml:"to"`
}

type fileWatch struct {
	Name         string     `yaml:"name"`
	Sources      []string   `yaml:"sources"`
	Courses      []string   `yaml:"courses"`
	CoursesExact []string   `yaml:"courses_exact"`
	PlayDates    *fileRange `yaml:"play_dates"`
	NextDays     int        `yaml:"next_days"`
	Weekdays     []string   `yaml:"weekdays"`
	TeeTime      *fileRange `yaml:"tee_time"`
	MaxPriceKRW  *int64     `yaml:"max_price_krw"`
	MinPlayers   *int       `yaml:"min_players"`
	Channels     []string   `yaml:"channels"`
	Enabled      *bool      `yaml:"enabled"`
	Backlog      *bool      `yaml:"backlog"`
}

// LoadFile reads and validates a watches file; secrets come from getenv. A nil getenv reads no
// secret (a channel's URL from url_env and token stay empty, and none missing is an error): for
// commands that list and send nothing (`crawler watches`, `booking-consumer watches`).
func LoadFile(path string, getenv func(string) string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("watches: %w", err)
	}
	c, err := Parse(b, getenv)
	if err != nil {
		return nil, fmt.Errorf("watches %s: %w", path, err)
	}
	return c, nil
}

var (
	nameRE  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)
	envRE   = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
	hhmmRE  = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
	weekday = map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday,
		"wed": time.Wednesday, "thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
		"일": time.Sunday, "월": time.Monday, "화": time.Tuesday, "수": time.Wednesday, "목": time.Thursday,
		"금": time.Friday, "토": time.Saturday}
)

// lineErrors collects "line N: message" errors.
type lineErrors []error

func (l *lineErrors) add(n *yaml.Node, format string, a ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	*l = append(*l, fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, a...)))
}

// field returns the value node of key in mapping m (nil if absent).
func field(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Parse validates a watches file strictly: unknown fields, wrong types, unknown channels, bad
// dates, times, weekdays and missing environment variables are errors, each with its line (a
// nil getenv: secrets are not read, see LoadFile).
func Parse(b []byte, getenv func(string) string) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("line 1: the file must be a mapping with the keys channels and watches")
	}
	root := doc.Content[0]
	var errs lineErrors
	for i := 0; i+1 < len(root.Content); i += 2 {
		if k := root.Content[i]; k.Value != "channels" && k.Value != "watches" {
			errs.add(k, "unknown key %q (want channels, watches)", k.Value)
		}
	}
	cfg := &Config{Channels: map[string]*Channel{}}
	chNode := field(root, "channels")
	if chNode == nil || chNode.Kind != yaml.MappingNode || len(chNode.Content) == 0 {
		errs.add(orNode(chNode, root), "channels: must be a non-empty mapping of name: {type: ...}")
	} else {
		for i := 0; i+1 < len(chNode.Content); i += 2 {
			k, v := chNode.Content[i], chNode.Content[i+1]
			if !nameRE.MatchString(k.Value) {
				errs.add(k, "channel name %q: use letters, digits, '_', '-', '.'", k.Value)
			}
			if _, dup := cfg.Channels[k.Value]; dup {
				errs.add(k, "channel %q is defined twice", k.Value)
			}
			ch := parseChannel(k.Value, v, getenv, &errs)
			cfg.Channels[k.Value] = ch
		}
	}
	wNode := field(root, "watches")
	if wNode == nil || wNode.Kind != yaml.SequenceNode || len(wNode.Content) == 0 {
		errs.add(orNode(wNode, root), "watches: must be a non-empty list")
	} else {
		seen := map[string]bool{}
		for _, v := range wNode.Content {
			w := parseWatch(v, &errs)
			if w == nil {
				continue
			}
			if seen[w.Name] {
				errs.add(v, "watch %q is defined twice", w.Name)
			}
			seen[w.Name] = true
			for _, c := range w.Channels {
				if _, ok := cfg.Channels[c]; !ok {
					errs.add(field(v, "channels"), "watch %q: unknown channel %q", w.Name, c)
				}
			}
			cfg.Watches = append(cfg.Watches, w)
		}
	}
	checkPollers(cfg, chNode, &errs)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	cfg.index = buildIndex(cfg.Watches)
	return cfg, nil
}

func orNode(n, def *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return def
}

// decodeStrict decodes mapping n into out (a pointer to a struct with yaml tags): keys the struct
// does not know are errors, and type errors keep the file's line numbers (the node's own).
func decodeStrict(n *yaml.Node, out any, errs *lineErrors) bool {
	known := map[string]bool{}
	t := reflect.TypeOf(out).Elem()
	for i := range t.NumField() {
		known[strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]] = true
	}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; !known[k.Value] {
			names := slices.Sorted(maps.Keys(known))
			errs.add(k, "unknown field %q (want one of %s)", k.Value, strings.Join(names, ", "))
			ok = false
		}
	}
	if err := n.Decode(out); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, e := range te.Errors {
				*errs = append(*errs, errors.New(e))
			}
		} else {
			errs.add(n, "%v", err)
		}
		return false
	}
	return ok
}

func parseWatch(n *yaml.Node, errs *lineErrors) *Watch {
	if n.Kind != yaml.MappingNode {
		errs.add(n, "a watch must be a mapping")
		return nil
	}
	var f fileWatch
	if !decodeStrict(n, &f, errs) {
		return nil
	}
	w := &Watch{Name: f.Name, Sources: f.Sources, Courses: f.Courses, CoursesExact: f.CoursesExact,
		NextDays: f.NextDays, MaxPriceKRW: f.MaxPriceKRW, MinPlayers: f.MinPlayers, Channels: f.Channels,
		Muted: f.Enabled != nil && !*f.Enabled, NoBacklog: f.Backlog != nil && !*f.Backlog}
	if !nameRE.MatchString(f.Name) {
		errs.add(orNode(field(n, "name"), n), "watch name %q: required; letters, digits, '_', '-', '.'", f.Name)
	}
	for i, c := range w.Courses {
		w.Courses[i] = strings.ToLower(strings.TrimSpace(c))
		if w.Courses[i] == "" {
			errs.add(field(n, "courses"), "watch %q: empty course", f.Name)
		}
	}
	if f.PlayDates != nil && f.NextDays != 0 {
		errs.add(field(n, "next_days"), "watch %q: give play_dates or next_days, not both", f.Name)
	}
	if f.NextDays < 0 || f.NextDays > 366 {
		errs.add(field(n, "next_days"), "watch %q: next_days %d is out of range 1..366", f.Name, f.NextDays)
	}
	parseWatchDates(w, n, &f, errs)
	parseWatchTimes(w, n, &f, errs)
	if f.MaxPriceKRW != nil && *f.MaxPriceKRW < 0 {
		errs.add(field(n, "max_price_krw"), "watch %q: max_price_krw must not be negative", f.Name)
	}
	if f.MinPlayers != nil && (*f.MinPlayers < 1 || *f.MinPlayers > 100) {
		errs.add(field(n, "min_players"), "watch %q: min_players %d is out of range 1..100", f.Name, *f.MinPlayers)
	}
	if len(f.Channels) == 0 {
		errs.add(n, "watch %q: channels: at least one channel is required", f.Name)
	}
	return w
}

// parseWatchDates sets w's play-date range from play_dates (YYYY-MM-DD, from not after to).
func parseWatchDates(w *Watch, n *yaml.Node, f *fileWatch, errs *lineErrors) {
	if f.PlayDates == nil {
		return
	}
	pd := field(n, "play_dates")
	var err error
	if f.PlayDates.From != "" {
		if w.DateFrom, err = time.Parse(events.DateLayout, f.PlayDates.From); err != nil {
			errs.add(pd, "watch %q: play_dates.from %q is not YYYY-MM-DD", f.Name, f.PlayDates.From)
		}
	}
	if f.PlayDates.To != "" {
		if w.DateTo, err = time.Parse(events.DateLayout, f.PlayDates.To); err != nil {
			errs.add(pd, "watch %q: play_dates.to %q is not YYYY-MM-DD", f.Name, f.PlayDates.To)
		}
	}
	if !w.DateFrom.IsZero() && !w.DateTo.IsZero() && w.DateTo.Before(w.DateFrom) {
		errs.add(pd, "watch %q: play_dates.to is before play_dates.from", f.Name)
	}
}

// parseWatchTimes sets w's weekdays (mon..sun or 월..일, each once) and tee-time window (HH:MM,
// from not after to).
func parseWatchTimes(w *Watch, n *yaml.Node, f *fileWatch, errs *lineErrors) {
	for _, d := range f.Weekdays {
		wd, ok := weekday[strings.ToLower(strings.TrimSpace(d))[:min(3, len(strings.TrimSpace(d)))]]
		if !ok {
			wd, ok = weekday[strings.TrimSpace(d)]
		}
		if !ok {
			errs.add(field(n, "weekdays"), "watch %q: weekday %q (want mon..sun or 월..일)", f.Name, d)
			continue
		}
		if !slices.Contains(w.Weekdays, wd) {
			w.Weekdays = append(w.Weekdays, wd)
		}
	}
	if f.TeeTime != nil {
		tt := field(n, "tee_time")
		w.TimeFrom, w.TimeTo = f.TeeTime.From, f.TeeTime.To
		if w.TimeFrom != "" && !hhmmRE.MatchString(w.TimeFrom) {
			errs.add(tt, "watch %q: tee_time.from %q is not HH:MM", f.Name, w.TimeFrom)
		}
		if w.TimeTo != "" && !hhmmRE.MatchString(w.TimeTo) {
			errs.add(tt, "watch %q: tee_time.to %q is not HH:MM", f.Name, w.TimeTo)
		}
		if w.TimeFrom != "" && w.TimeTo != "" && w.TimeTo < w.TimeFrom {
			errs.add(tt, "watch %q: tee_time.to is before tee_time.from", f.Name)
		}
	}
}
