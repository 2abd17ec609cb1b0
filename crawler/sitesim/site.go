// Package sitesim is a simulated Korean golf tee-time booking site: an http.Handler whose pages
// change over a clock the caller drives, with a ground truth to check a crawler against.
//
// The site lists tee times of a few courses (some split into parts such as "OUT"/"IN" or
// "동코스"/"서코스") per play date, 20 rows a page with a "다음" link, prices like "150,000원" or
// "전화문의", year-less round dates like "12/05(토)", HTML entities (&amp;, &nbsp;) and, by seed, a
// few malformed rows ("13/45(월)", "25:99"). Every listing is released DaysAhead days before its
// day at ReleaseHour, may get a discount two days before and a players change, and is booked at a
// time drawn from an exponential whose mean depends on weekday and hour (weekend mornings go in
// hours), or expires at its tee time. The page bytes at instant t are a pure function of
// (Config, t): any clock jump works and two sites with the same seed serve the same bytes.
//
// The same listings are also served in the shapes other sources have (sources.go): a JSON API
// (GET and POST), a login-guarded form POST answering HTML rows, and one club per HTML page; and
// (sources_observed.go) an EUC-KR ASP page declared only by <meta>, and JSON rows with MM/DD dates.
//
// With Config.Cancellations, booked tee times come back for a while (cancel.go): waves of
// cancellations before the clubs' penalty deadlines, each open until it is booked again, and
// flickers of a few seconds; the ground truth lists each reopening. Without it a listing never
// reopens. It is not a load test target: every request recomputes the day it shows.
package sitesim

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Config configures a Site. Zero fields take the defaults named on each.
type Config struct {
	Seed           int64
	Now            func() time.Time // the site's clock; default time.Now
	Courses        []Course         // default DefaultCourses()
	DaysAhead      int              // release window in days; default 14 (dates today..today+14 shown)
	ReleaseHour    int              // hour of day listings are released; default 9 (0 means default)
	TeeTimesPerDay int              // per course part; default 16
	PageSize       int              // rows per page; default 20
	BadRowRate     float64          // fraction of malformed rows; default 0.01, negative for none
	BookingSpeed   float64          // divides every mean time-to-book; default 1
	// Cancellations, when set, gives booked tee times back for a while: waves of cancellations
	// before the clubs' penalty deadlines and flickers (cancel.go). nil: a booked tee time never
	// shows again.
	Cancellations *Cancellations
	// Epoch, when set, is when the site came online: a listing released before it starts its
	// time-to-book at Epoch instead, so a site started now with a high BookingSpeed still has
	// bookings ahead of it rather than all of them in the past. Zero: no such start.
	Epoch    time.Time
	Location *time.Location // default KST
	// The login of the club routes (sources.go): user id (default DefaultUser), password (no
	// default: without one no login succeeds) and how many guarded requests a session serves
	// before it expires (0: never).
	LoginUser       string
	LoginPassword   string
	SessionRequests int
	// AlertPastWindow makes the one-club ASP route (PathASP) answer a date past the booking
	// window (after today+DaysAhead) as classic club sites do: 200 with only
	// <script>alert('예약 가능한 일자가 아닙니다.');history.back();</script> (AlertNotOpen). Off, such a
	// date shows its table with the sold-out marker row, like a sold-out date.
	AlertPastWindow bool
	// PartStart, when set, is how much later than the day's waves the tee times of course part
	// part (0-based) start on day (midnight in the site's zone): a club that staggers its nines
	// on some days. nil: every part tees off at the same times.
	PartStart func(day time.Time, part int) time.Duration
	// AlwaysPriced gives every listing a price: a server whose fee comes from a rate table, which
	// has no 전화문의 (call us) tee time and would print a missing fee as 0 or crash on it.
	AlwaysPriced bool
}

func (c Config) withDefaults() Config {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Courses == nil {
		c.Courses = DefaultCourses()
	}
	if c.DaysAhead <= 0 {
		c.DaysAhead = 14
	}
	if c.ReleaseHour <= 0 || c.ReleaseHour > 23 {
		c.ReleaseHour = 9
	}
	if c.TeeTimesPerDay <= 0 {
		c.TeeTimesPerDay = 16
	}
	if c.PageSize <= 0 {
		c.PageSize = 20
	}
	if c.BadRowRate == 0 {
		c.BadRowRate = 0.01
	}
	if c.BookingSpeed <= 0 {
		c.BookingSpeed = 1
	}
	if c.Location == nil {
		c.Location = KST
	}
	if c.LoginUser == "" {
		c.LoginUser = DefaultUser
	}
	return c
}

// Site is the simulated booking site. It is an http.Handler; methods are safe for concurrent use.
type Site struct {
	cfg Config

	mu       sync.Mutex
	faults   Faults
	requests uint64         // page requests so far, drives rate-based faults
	perPage  map[string]int // page requests so far per request URI, drives the *First faults
	logins   int            // successful logins (sources.go)
	sessions map[string]int // live session tokens: guarded requests left (0: unlimited)

	tokens map[string]string // sessions of the capture routes (sources_lang.go): id → CSRF token
}

// New returns a site over cfg (defaults applied).
func New(cfg Config) *Site {
	return &Site{cfg: cfg.withDefaults(), perPage: map[string]int{}, sessions: map[string]int{}}
}

// Config returns the site's configuration with defaults applied.
func (s *Site) Config() Config { return s.cfg }

// today is the calendar day of t in the site's zone, at midnight.
func (s *Site) today(t time.Time) time.Time {
	y, m, d := t.In(s.cfg.Location).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, s.cfg.Location)
}

// Dates are the play dates the site shows tabs for at instant at: today through DaysAhead days on.
func (s *Site) Dates(at time.Time) []time.Time {
	today := s.today(at)
	out := make([]time.Time, 0, s.cfg.DaysAhead+1)
	for i := 0; i <= s.cfg.DaysAhead; i++ {
		out = append(out, today.AddDate(0, 0, i))
	}
	return out
}

// visibleOn returns the listings of day date visible at instant at, in page order.
func (s *Site) visibleOn(date, at time.Time) []*listing {
	var out []*listing
	for _, l := range s.listingsOn(date) {
		if l.visibleAt(at) || l.reopenedAt(s.cfg, at) {
			out = append(out, l)
		}
	}
	return out
}

// GroundTruth returns every listing whose life overlaps [from, upTo]: opened at or before upTo and
// not closed before from, ordered by play date, tee time, course and part. Bookings and changes
// after upTo are not revealed (BookedAt stays nil).
func (s *Site) GroundTruth(from, upTo time.Time) []Truth {
	var out []Truth
	first, last := s.today(from), s.today(upTo).AddDate(0, 0, s.cfg.DaysAhead)
	for d := first; !d.After(last); d = d.AddDate(0, 0, 1) {
		for _, l := range s.listingsOn(d) {
			reopened := l.reopenings(s.cfg, from, upTo)
			if l.OpenedAt.After(upTo) || l.closedAt().Before(from) && len(reopened) == 0 {
				continue
			}
			t := l.truthUpTo(upTo)
			t.Reopenings = reopened
			out = append(out, t)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.PlayDate != b.PlayDate {
			return a.PlayDate < b.PlayDate
		}
		return a.TeeTime < b.TeeTime
	})
	return out
}

// Visible returns the ground truth of the listings on the site's pages at instant at, malformed
// rows included (filter on Truth.Malformed).
func (s *Site) Visible(at time.Time) []Truth {
	var out []Truth
	for _, t := range s.GroundTruth(at, at) {
		if t.VisibleAt(at) {
			out = append(out, t)
		}
	}
	return out
}

// ServeHTTP routes: / (date tabs), /tee?date=YYYYMMDD&page=N (listings; MMDD also accepted),
// /robots.txt (allow all), /ground-truth?from=RFC3339&to=RFC3339 (JSON; default the last 24 h up to
// now), /healthz, and the routes of sources.go. Faults apply to / and /tee and to the routes of
// sources.go except the login. Every response carries X-Sim-Now, the site's
// clock in RFC 3339, so a demo crawler can use the simulated time as its crawl time.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := s.cfg.Now()
	w.Header().Set("X-Sim-Now", now.In(s.cfg.Location).Format(time.RFC3339))
	switch r.URL.Path {
	case "/healthz":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	case "/robots.txt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	case "/ground-truth":
		s.serveTruth(w, r, now)
	case "/", "/tee":
		if s.applyFaults(w, r) {
			return
		}
		if r.URL.Path == "/" {
			s.serveIndex(w, now)
			return
		}
		s.serveTee(w, r, now)
	default:
		if isSourcePath(r.URL.Path) {
			if r.URL.Path != PathLogin && s.applyFaults(w, r) {
				return
			}
			s.serveSource(w, r, now)
			return
		}
		http.NotFound(w, r)
	}
}

func (s *Site) serveTruth(w http.ResponseWriter, r *http.Request, now time.Time) {
	to, from := now, now.Add(-24*time.Hour)
	for name, dst := range map[string]*time.Time{"from": &from, "to": &to} {
		if v := r.URL.Query().Get(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				http.Error(w, fmt.Sprintf("query parameter %s must be an RFC 3339 time: %v", name, err), http.StatusBadRequest)
				return
			}
			*dst = t
		}
	}
	w.Header().Set("Content-Type", "application/json")
	truth := s.GroundTruth(from, to)
	if truth == nil {
		truth = []Truth{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	_ = enc.Encode(truth) // the client went away: nothing to do
}

// parseDate resolves the date query parameter: YYYYMMDD, or MMDD taken as the shown date in the
// window that has that month and day.
func (s *Site) parseDate(v string, now time.Time) (time.Time, bool) {
	switch len(v) {
	case 8:
		d, err := time.ParseInLocation("20060102", v, s.cfg.Location)
		return d, err == nil
	case 4:
		for _, d := range s.Dates(now) {
			if d.Format("0102") == v {
				return d, true
			}
		}
	}
	return time.Time{}, false
}
