package site

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// MinBurstEvery is the shortest gap a burst may crawl at: a burst is still a crawl of the whole
// site, and the host's politeness (hostLimits) holds inside it.
const MinBurstEvery = 10 * time.Second

// SiteTimes is when `crawler run` crawls one site: its schedule (its own, else the global one)
// delayed per run by a jitter, plus its bursts, all inside its active hours. It is built from the
// compiled site by Site.Times and never changes; Next is a pure function of its argument, so
// `crawler check`, the runner and /metrics agree on every time.
type SiteTimes struct {
	Spec     string        // the schedule's cron spec (the site's, else the global one)
	Interval time.Duration // the shortest gap between two scheduled runs (ScheduleInterval)

	sched  cron.Schedule
	active *hours // nil: always
	jitter time.Duration
	bursts []burst
	seed   uint64
	misses time.Duration // misses_min_interval; 0: the global interval with a burst, else none

	watchedEvery, confirmAfter time.Duration // watched_every, confirm_after (defaults applied)
	watchedBudget              float64       // watched_budget (default applied)
}

// The defaults of the demand keys (SiteSpec.WatchedEvery, WatchedBudget, ConfirmAfter).
const (
	DefaultWatchedEvery  = time.Minute
	DefaultWatchedBudget = 1.0
	DefaultConfirmAfter  = 20 * time.Second
	// MaxWatchedBudget bounds watched_budget: a hundred times the schedule's requests is already
	// a crawl of a watched page set at every tick of a busy schedule.
	MaxWatchedBudget = 100.0
	// MaxConfirmAfter bounds confirm_after: an alert waits that long at least.
	MaxConfirmAfter = 10 * time.Minute
)

// burst is a compiled Burst.
type burst struct {
	Burst
	start cron.Schedule
}

// hours is a compiled active_hours: from..to, seconds of the day in Asia/Seoul, to excluded;
// overnight when to <= from.
type hours struct{ from, to int }

// compileTimes checks the site's schedule keys and keeps what they compile to in s.times (without
// a schedule: key its schedule stays nil; Times fills in the global one and checks the jitter
// against it).
func (s *Site) compileTimes(fail func(string, ...any) error) error {
	t := SiteTimes{jitter: s.Jitter.D(), seed: seedOf(s.Name), misses: s.MissesMinInterval.D()}
	if s.MissesMinInterval < 0 {
		return fail("misses_min_interval is %s; it must not be negative", s.MissesMinInterval.D())
	}
	if s.Schedule != "" {
		sched, iv, err := parseSchedule(s.Schedule)
		if err != nil {
			return fail("schedule: %v", err)
		}
		t.Spec, t.sched, t.Interval = s.Schedule, sched, iv
	}
	if s.ActiveHours != "" {
		h, err := parseHours(s.ActiveHours)
		if err != nil {
			return fail("active_hours %q: %v", s.ActiveHours, err)
		}
		t.active = &h
	}
	if s.Jitter < 0 {
		return fail("jitter is %s; it must not be negative", s.Jitter.D())
	}
	if s.Deadline > 0 && s.Jitter > s.Deadline {
		return fail("jitter %s is longer than the deadline %s; it must be at most the deadline", s.Jitter.D(), s.Deadline.D())
	}
	for i, b := range s.Burst {
		cb, err := parseBurst(b)
		if err != nil {
			return fail("burst[%d] (at %q): %v", i, b.At, err)
		}
		t.bursts = append(t.bursts, cb)
	}
	if err := s.compileDemand(&t, fail); err != nil {
		return err
	}
	s.times = t
	if t.sched != nil {
		return t.checkJitter(fail)
	}
	return nil
}

// compileDemand checks watched_every, watched_budget and confirm_after into t, defaults applied.
func (s *Site) compileDemand(t *SiteTimes, fail func(string, ...any) error) error {
	t.watchedEvery, t.watchedBudget, t.confirmAfter = DefaultWatchedEvery, DefaultWatchedBudget, DefaultConfirmAfter
	switch {
	case s.WatchedEvery != 0 && s.WatchedEvery.D() < MinBurstEvery:
		return fail("watched_every is %s; it must be at least %s (the host's politeness holds for every request too)", s.WatchedEvery.D(), MinBurstEvery)
	case s.WatchedBudget < 0 || s.WatchedBudget > MaxWatchedBudget:
		return fail("watched_budget is %g; it must be between 0 (the default, %g) and %g (times the requests an hour of the site's schedule)",
			s.WatchedBudget, DefaultWatchedBudget, MaxWatchedBudget)
	case s.ConfirmAfter != nil && (*s.ConfirmAfter < 0 || s.ConfirmAfter.D() > MaxConfirmAfter):
		return fail("confirm_after is %s; it must be between 0s (alerts at their first sighting) and %s", s.ConfirmAfter.D(), MaxConfirmAfter)
	}
	if s.WatchedEvery != 0 {
		t.watchedEvery = s.WatchedEvery.D()
	}
	if s.WatchedBudget != 0 {
		t.watchedBudget = s.WatchedBudget
	}
	if s.ConfirmAfter != nil {
		t.confirmAfter = s.ConfirmAfter.D()
	}
	return nil
}

// WatchedEvery is how often a watched page set is crawled (watched_every).
func (t *SiteTimes) WatchedEvery() time.Duration { return t.watchedEvery }

// WatchedBudget is the watched crawls' share of the schedule's requests an hour (watched_budget).
func (t *SiteTimes) WatchedBudget() float64 { return t.watchedBudget }

// ConfirmAfter is how long after an opening its page set is crawled again to confirm it
// (confirm_after); 0: never.
func (t *SiteTimes) ConfirmAfter() time.Duration { return t.confirmAfter }

// checkJitter: at most half the interval, so that jittered runs keep their order and never meet.
func (t SiteTimes) checkJitter(fail func(string, ...any) error) error {
	if t.jitter > t.Interval/2 {
		return fail("jitter %s is more than half the schedule's interval (%s of %q); it must be at most %s",
			t.jitter, t.Interval, t.Spec, t.Interval/2)
	}
	return nil
}

// HasTimes reports whether the site sets any of schedule, active_hours, jitter or burst: without
// them it runs on the global schedule, with every other such site.
func (s *Site) HasTimes() bool {
	return s.Schedule != "" || s.ActiveHours != "" || s.Jitter > 0 || len(s.Burst) > 0
}

// Times is the site's SiteTimes, with global (a cron spec in Asia/Seoul) as its schedule when it
// has no schedule: key of its own. The error is for an invalid global spec, a jitter of more
// than half its interval, or times that leave the site uncrawled for longer than MaxCrawlGap
// (checkGaps): `crawler check` and `crawler run`'s start-up both refuse such a site.
func (s *Site) Times(global string) (*SiteTimes, error) {
	t := s.times
	whose := "schedule"
	if t.sched == nil {
		sched, iv, err := parseSchedule(global)
		if err != nil {
			return nil, err
		}
		t.Spec, t.sched, t.Interval = global, sched, iv
		whose = "the global schedule"
		if err := t.checkJitter(func(format string, args ...any) error {
			return fmt.Errorf("site %q: "+format+" (the global schedule; set schedule: on the site, or a shorter jitter)",
				append([]any{s.Name}, args...)...)
		}); err != nil {
			return nil, err
		}
	}
	if err := t.checkGaps(); err != nil {
		return nil, fmt.Errorf("site %q: %s %q %w", s.Name, whose, t.Spec, err)
	}
	return &t, nil
}

// MaxCrawlGap is the longest a site may go without a crawl under `crawler run`: a schedule that
// never fires inside the site's active hours, or fires less often than this, is refused
// (review 4, F6: such a site was accepted and silently never crawled).
const MaxCrawlGap = 8 * 24 * time.Hour

// checkGaps checks that from every day of a year (2026, so that the answer does not depend on
// today) the next crawl comes within MaxCrawlGap; the error completes "schedule "<spec>" ...".
func (t *SiteTimes) checkGaps() error {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, Seoul())
	for day := range 366 {
		at := from.AddDate(0, 0, day)
		next := t.Next(at)
		switch {
		case !next.IsZero() && next.Sub(at) <= MaxCrawlGap:
			continue
		case next.IsZero() && t.active != nil:
			return fmt.Errorf("never fires inside active_hours %s-%s: the site would never be crawled; move the schedule into the active hours or widen them",
				clockString(t.active.from), clockString(t.active.to))
		case next.IsZero():
			return errors.New("never fires: the site would never be crawled")
		}
		keys := ""
		if t.active != nil {
			keys = fmt.Sprintf("with active_hours %s-%s ", clockString(t.active.from), clockString(t.active.to))
		}
		return fmt.Errorf("%sleaves %s without a crawl (from %s to %s, Asia/Seoul); a site must be crawled at least every %s",
			keys, days(next.Sub(at)), at.Format("2006-01-02 15:04"), next.Format("2006-01-02 15:04"), days(MaxCrawlGap))
	}
	return nil
}

// days is d in whole days, rounded down ("30 days"; "1 day").
func days(d time.Duration) string {
	if n := int(d / (24 * time.Hour)); n != 1 {
		return fmt.Sprintf("%d days", n)
	}
	return "1 day"
}

// WithSeed is t with another jitter seed (the default is derived from the site's name, so every
// process computes the same times for a site).
func (t SiteTimes) WithSeed(seed uint64) *SiteTimes {
	t.seed = seed
	return &t
}

// MissesMinInterval is the site's crawler.DiffOptions.MissesMinInterval under global (the global
// schedule's interval): misses_min_interval, else global when the site has a burst, else 0 (every
// miss counts); less the jitter, as the site's scheduled crawls may come that much closer.
func (t *SiteTimes) MissesMinInterval(global time.Duration) time.Duration {
	iv := t.misses
	if iv == 0 && len(t.bursts) > 0 {
		iv = global
	}
	if iv > t.jitter {
		return iv - t.jitter
	}
	return iv
}

// Deadline is 0.8 (SiteDeadlineFraction) of the schedule's interval: the default bound of one crawl.
func (t *SiteTimes) Deadline() time.Duration {
	return time.Duration(float64(t.Interval) * SiteDeadlineFraction).Round(time.Second)
}

// Next is the first crawl time strictly after after: the earliest of the next scheduled run (with
// its jitter) and the next burst tick, skipping every time outside the active hours. Zero only if
// the schedule never runs again.
func (t *SiteTimes) Next(after time.Time) time.Time {
	loc := Seoul()
	after = after.In(loc)
	for range 10000 { // every turn moves past an inactive time; a year of hourly runs is far below it
		c := t.nextScheduled(after)
		for _, b := range t.bursts {
			if bt := b.next(after); !bt.IsZero() && (c.IsZero() || bt.Before(c)) {
				c = bt
			}
		}
		if c.IsZero() || t.active == nil || t.active.contains(c) {
			return c
		}
		after = t.active.nextStart(c).Add(-time.Nanosecond)
	}
	return time.Time{}
}

// InBurst reports whether at falls inside one of the site's burst windows.
func (t *SiteTimes) InBurst(at time.Time) bool {
	for _, b := range t.bursts {
		if s := b.start.Next(at.In(Seoul()).Add(-b.For.D())); !s.After(at) {
			return true
		}
	}
	return false
}

// Upcoming is the next n crawl times after after (crawler check).
func (t *SiteTimes) Upcoming(after time.Time, n int) []time.Time {
	var out []time.Time
	for range n {
		after = t.Next(after)
		if after.IsZero() {
			break
		}
		out = append(out, after)
	}
	return out
}

// nextScheduled is the first base+jitter(base) after after. Bases are tried from the one due
// jitter before after: as jitter is under half the interval, jittered runs keep their order.
func (t *SiteTimes) nextScheduled(after time.Time) time.Time {
	base := t.baseNext(after.Add(-t.jitter))
	for !base.IsZero() {
		if at := base.Add(t.jitterOf(base)); at.After(after) {
			return at
		}
		base = t.baseNext(base)
	}
	return base
}

// baseNext is the schedule's next run after x; @every is anchored to the Unix epoch (so to whole
// minutes and hours in Seoul) instead of to x, so that the runs do not depend on the question.
func (t *SiteTimes) baseNext(x time.Time) time.Time {
	if c, ok := t.sched.(cron.ConstantDelaySchedule); ok {
		return x.Truncate(c.Delay).Add(c.Delay).In(Seoul())
	}
	return t.sched.Next(x.In(Seoul()))
}

// jitterOf is base's delay: a hash of the seed and base, in [0, jitter), in whole milliseconds.
func (t *SiteTimes) jitterOf(base time.Time) time.Duration {
	ms := t.jitter.Milliseconds()
	if ms <= 0 {
		return 0
	}
	h := fnv.New64a()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], t.seed)
	binary.BigEndian.PutUint64(b[8:], uint64(base.Unix()))
	_, _ = h.Write(b[:]) // a hash.Hash never fails
	return time.Duration(h.Sum64()%uint64(ms)) * time.Millisecond
}

// next is the burst's first tick after after: start + k×every (k×every < for) of the window open
// at after, else the start of the next window.
func (b burst) next(after time.Time) time.Time {
	every, span := b.Every.D(), b.For.D()
	s := b.start.Next(after.Add(-span))
	if s.IsZero() || s.After(after) {
		return s
	}
	k := after.Sub(s)/every + 1
	if tick := s.Add(k * every); tick.Sub(s) < span {
		return tick
	}
	return b.start.Next(s)
}

func seedOf(name string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return h.Sum64()
}

// parseSchedule parses a cron spec as the global --schedule is read, and its interval.
func parseSchedule(spec string) (cron.Schedule, time.Duration, error) {
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, 0, fmt.Errorf("parse schedule %q: %w", spec, err)
	}
	iv, err := ScheduleInterval(spec, Seoul(), time.Date(2026, 1, 1, 0, 0, 0, 0, Seoul()))
	if err != nil {
		return nil, 0, err
	}
	return sched, iv, nil
}

// parseBurst checks a burst: at is "[DAY ]HH:MM" (DAY a weekday MON..SUN or a day of the month
// 1..31), every at least MinBurstEvery and at most for, for at most the gap between two starts.
func parseBurst(b Burst) (burst, error) {
	fields := strings.Fields(b.At)
	if len(fields) == 0 || len(fields) > 2 {
		return burst{}, fmt.Errorf(`at must be "HH:MM", "MON 09:00" (a weekday) or "10 09:00" (a day of the month)`)
	}
	hm, err := parseClock(fields[len(fields)-1], false)
	if err != nil {
		return burst{}, err
	}
	dom, dow := "*", "*"
	if len(fields) == 2 {
		day := strings.ToUpper(fields[0])
		if n, err := strconv.Atoi(day); err == nil {
			if n < 1 || n > 31 {
				return burst{}, fmt.Errorf("the day of the month %d must be between 1 and 31", n)
			}
			dom = day
		} else if !strings.Contains("SUN MON TUE WED THU FRI SAT", day) || len(day) != 3 {
			return burst{}, fmt.Errorf("the day %q must be a weekday (MON..SUN) or a day of the month (1..31)", fields[0])
		} else {
			dow = day
		}
	}
	spec := fmt.Sprintf("%d %d %s * %s", hm%3600/60, hm/3600, dom, dow)
	start, gap, err := parseSchedule(spec)
	if err != nil {
		return burst{}, err
	}
	switch every, span := b.Every.D(), b.For.D(); {
	case every < MinBurstEvery:
		return burst{}, fmt.Errorf("every is %s; it must be at least %s", every, MinBurstEvery)
	case span < every:
		return burst{}, fmt.Errorf("for is %s; it must be at least every (%s)", span, every)
	case span > gap:
		return burst{}, fmt.Errorf("for is %s; it must be at most the gap between two bursts (%s)", span, gap)
	}
	return burst{Burst: b, start: start}, nil
}

// parseHours reads "HH:MM-HH:MM" (24:00 allowed as the end).
func parseHours(v string) (hours, error) {
	from, to, ok := strings.Cut(v, "-")
	if !ok {
		return hours{}, fmt.Errorf(`write it as "05:00-23:00" (from-to, Asia/Seoul, to excluded)`)
	}
	f, err := parseClock(strings.TrimSpace(from), false)
	if err != nil {
		return hours{}, err
	}
	t, err := parseClock(strings.TrimSpace(to), true)
	if err != nil {
		return hours{}, err
	}
	if f == t%86400 {
		return hours{}, fmt.Errorf("from and to are the same time; leave active_hours out to crawl at any hour")
	}
	return hours{from: f, to: t}, nil
}

// parseClock reads "HH:MM" as seconds of the day; end allows 24:00.
func parseClock(v string, end bool) (int, error) {
	hh, mm, ok := strings.Cut(v, ":")
	h, err1 := strconv.Atoi(hh)
	m, err2 := strconv.Atoi(mm)
	valid := ok && err1 == nil && err2 == nil && len(mm) == 2 && h >= 0 && m >= 0 && m <= 59 &&
		(h < 24 || (end && h == 24 && m == 0))
	if !valid {
		return 0, fmt.Errorf("%q is not a time of day HH:MM", v)
	}
	return h*3600 + m*60, nil
}

func secondOfDay(t time.Time) int {
	h, m, s := t.In(Seoul()).Clock()
	return h*3600 + m*60 + s
}

func (h hours) contains(t time.Time) bool {
	s := secondOfDay(t)
	if h.from < h.to {
		return s >= h.from && s < h.to
	}
	return s >= h.from || s < h.to
}

// nextStart is the first start of the active hours after t.
func (h hours) nextStart(t time.Time) time.Time {
	t = t.In(Seoul())
	y, mo, d := t.Date()
	start := time.Date(y, mo, d, 0, 0, h.from, 0, Seoul())
	if !start.After(t) {
		start = time.Date(y, mo, d+1, 0, 0, h.from, 0, Seoul())
	}
	return start
}

// Describe is the site's times in one phrase for `crawler check`: the schedule (own or global),
// the active hours, the jitter and the bursts.
func (t *SiteTimes) Describe(own bool) string {
	whose := "global"
	if own {
		whose = "own"
	}
	d := fmt.Sprintf("schedule %q (%s, every %s at the shortest)", t.Spec, whose, t.Interval)
	if t.active != nil {
		d += fmt.Sprintf(", active %s-%s", clockString(t.active.from), clockString(t.active.to))
	}
	if t.jitter > 0 {
		d += fmt.Sprintf(", jitter up to %s", t.jitter)
	}
	for _, b := range t.bursts {
		d += fmt.Sprintf(", burst %s every %s for %s", b.At, b.Every.D(), b.For.D())
	}
	return d
}

func clockString(s int) string { return fmt.Sprintf("%02d:%02d", s/3600, s%3600/60) }

// Active reports whether at is inside the site's active hours (always, without active_hours).
func (t *SiteTimes) Active(at time.Time) bool { return t.active == nil || t.active.contains(at) }

// SiteDeadlineFraction is the share of the schedule's interval a site's crawl may take by default
// (`crawler run`): the rest leaves room for the other steps of a run before the next is due.
const SiteDeadlineFraction = 0.8

// DefaultSiteDeadline is a site's crawl bound under spec (read in loc, from now):
// SiteDeadlineFraction of the shortest gap between its next runs.
func DefaultSiteDeadline(spec string, loc *time.Location, now time.Time) (time.Duration, error) {
	iv, err := ScheduleInterval(spec, loc, now)
	if err != nil {
		return 0, err
	}
	return time.Duration(float64(iv) * SiteDeadlineFraction).Round(time.Second), nil
}

// ScheduleInterval is the shortest gap between two of spec's next 100 runs after now, in loc
// (Seoul() when nil): 10 minutes for "*/10 * * * *", 5 s for "@every 5s".
func ScheduleInterval(spec string, loc *time.Location, now time.Time) (time.Duration, error) {
	if loc == nil {
		loc = Seoul()
	}
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return 0, fmt.Errorf("parse schedule %q: %w", spec, err)
	}
	var shortest time.Duration
	prev := sched.Next(now.In(loc))
	for range 100 {
		next := sched.Next(prev)
		if next.IsZero() {
			break
		}
		if gap := next.Sub(prev); shortest == 0 || gap < shortest {
			shortest = gap
		}
		prev = next
	}
	if shortest <= 0 {
		return 0, fmt.Errorf("schedule %q: no two runs to measure an interval between", spec)
	}
	return shortest, nil
}
