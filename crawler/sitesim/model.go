package sitesim

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// KST is Korea Standard Time. Korea has no daylight saving time, so a fixed zone is exact and keeps
// the simulation independent of the machine's zoneinfo database.
var KST = time.FixedZone("KST", 9*60*60)

// Course is one golf course of the simulated site. A course with course parts (nines such as
// "OUT"/"IN" or "동코스"/"서코스") lists every tee time once per part; Parts == nil means one
// unnamed part (an empty part cell on the page).
type Course struct {
	Name         string   // shown text, e.g. "레이크&힐스 CC" (escaped as &amp; on the page)
	Parts        []string // nil: no parts
	BasePriceKRW int64    // weekday afternoon green fee, e.g. 150000
}

// DefaultCourses are four courses with seven parts: two with English nines, one with Korean
// compass parts and an '&' in its name (an HTML entity on the page), one without parts.
func DefaultCourses() []Course {
	return []Course{
		{Name: "파인힐스 CC", Parts: []string{"OUT", "IN"}, BasePriceKRW: 150000},
		{Name: "레이크&힐스 CC", Parts: []string{"동코스", "서코스"}, BasePriceKRW: 180000},
		{Name: "스카이밸리 GC", BasePriceKRW: 120000},
		{Name: "오션뷰 골프클럽", Parts: []string{"A", "B"}, BasePriceKRW: 210000},
	}
}

// Change is a listing's state right after a price or players change.
type Change struct {
	At       time.Time `json:"at"`
	PriceKRW *int64    `json:"price_krw"`
	Players  int       `json:"players"`
}

// Truth is the ground truth of one listing's life: what a perfect crawler watching the site
// continuously would have recorded. Course, Part, PlayDate and TeeTime are the listing key parts
// (build the key with events.ListingKey(source, Course, Part, PlayDate, TeeTime)); RoundDate and
// ShownTeeTime are the cells as the page shows them after entity decoding.
type Truth struct {
	ID           string     `json:"id"`
	Course       string     `json:"course"`
	Part         string     `json:"part"`
	PlayDate     string     `json:"play_date"` // YYYY-MM-DD
	TeeTime      string     `json:"tee_time"`  // HH:MM
	RoundDate    string     `json:"round_date"`
	ShownTeeTime string     `json:"shown_tee_time"`
	Malformed    bool       `json:"malformed"` // the row shows a bad round_date or tee time
	OpenedAt     time.Time  `json:"opened_at"`
	BookedAt     *time.Time `json:"booked_at"` // nil: not booked (yet, as of the export)
	ExpiresAt    time.Time  `json:"expires_at"`
	PriceKRW     *int64     `json:"price_krw"` // at opening; nil: shown as 전화문의
	Players      int        `json:"players"`   // at opening
	Changes      []Change   `json:"changes,omitempty"`
	// Reopenings are the times the tee time showed again after its booking (Config.Cancellations):
	// cancellations and flickers, as known when the ground truth was asked for.
	Reopenings []Reopening `json:"reopenings,omitempty"`
}

// ClosedAt is when the listing leaves the site: its booking, or its tee time.
func (t Truth) ClosedAt() time.Time {
	if t.BookedAt != nil && t.BookedAt.Before(t.ExpiresAt) {
		return *t.BookedAt
	}
	return t.ExpiresAt
}

// VisibleAt reports whether the listing is on the site's pages at instant at: from its release
// until its booking or tee time, and during its reopenings.
func (t Truth) VisibleAt(at time.Time) bool {
	if !at.Before(t.OpenedAt) && at.Before(t.ClosedAt()) {
		return true
	}
	for _, r := range t.Reopenings {
		if !at.Before(r.From) && (r.To.IsZero() || at.Before(r.To)) {
			return true
		}
	}
	return false
}

// StateAt returns the listing's price and players at instant at (changes applied in order).
func (t Truth) StateAt(at time.Time) (*int64, int) {
	price, players := t.PriceKRW, t.Players
	for _, c := range t.Changes {
		if c.At.After(at) {
			break
		}
		price, players = c.PriceKRW, c.Players
	}
	return price, players
}

// listing is a Truth with its booking time always filled in when one was drawn (even in the
// future), so that any instant can be rendered.
type listing struct {
	Truth
	course, part int
	booked       *time.Time
	reopened     []Reopening // its wave cancellations (Config.Cancellations), by time
}

func (l *listing) closedAt() time.Time {
	if l.booked != nil && l.booked.Before(l.ExpiresAt) {
		return *l.booked
	}
	return l.ExpiresAt
}

func (l *listing) visibleAt(at time.Time) bool {
	return !at.Before(l.OpenedAt) && at.Before(l.closedAt())
}

// truthUpTo is the listing's Truth as known at upTo: a booking or change after upTo is not
// revealed.
func (l *listing) truthUpTo(upTo time.Time) Truth {
	t := l.Truth
	if l.booked != nil && !l.booked.After(upTo) {
		b := *l.booked
		t.BookedAt = &b
	}
	t.Changes = nil
	for _, c := range l.Changes {
		if !c.At.After(upTo) {
			t.Changes = append(t.Changes, c)
		}
	}
	return t
}

var weekdayKO = [...]string{"일", "월", "화", "수", "목", "금", "토"}

// teeTimes returns the n tee times of a day: half in a morning wave from 06:00 and half in an
// afternoon wave from 11:30, eight minutes apart.
func teeTimes(n int) []time.Duration {
	out := make([]time.Duration, 0, n)
	morning := (n + 1) / 2
	for i := range n {
		if i < morning {
			out = append(out, 6*time.Hour+time.Duration(i)*8*time.Minute)
		} else {
			out = append(out, 11*time.Hour+30*time.Minute+time.Duration(i-morning)*8*time.Minute)
		}
	}
	return out
}

// meanTimeToBook is the mean of the exponential delay between opening and booking: weekend
// mornings go in hours, weekday afternoons in days (and often never).
func meanTimeToBook(day time.Weekday, tee time.Duration) time.Duration {
	weekend := day == time.Saturday || day == time.Sunday
	morning := tee < 10*time.Hour
	switch {
	case weekend && morning:
		return 24 * time.Hour
	case weekend:
		return 72 * time.Hour
	case morning:
		return 120 * time.Hour
	default:
		return 240 * time.Hour
	}
}

// listingsOn computes every listing of calendar day date (midnight in the site's zone), in page
// order: course, part, tee time. Each listing's life is drawn from its own generator seeded with
// the site seed and the listing id (drawsFor), so the result depends on (seed, date) only.
func (s *Site) listingsOn(date time.Time) []*listing {
	cfg := s.cfg
	d := newSimDay(cfg, date)
	var out []*listing
	for ci, c := range cfg.Courses {
		parts := c.Parts
		if len(parts) == 0 {
			parts = []string{""}
		}
		for pi, part := range parts {
			var later time.Duration
			if cfg.PartStart != nil {
				later = cfg.PartStart(d.day, pi)
			}
			for _, tee := range teeTimes(cfg.TeeTimesPerDay) {
				out = append(out, newListing(cfg, d, ci, pi, part, tee+later))
			}
		}
	}
	return out
}

// simDay is one calendar day of the site: midnight in its zone, when its tee times are released
// and when the last-minute discount comes.
type simDay struct {
	day, opened, discountAt time.Time
	weekend                 bool
}

func newSimDay(cfg Config, date time.Time) simDay {
	loc := cfg.Location
	y, m, d := date.Date()
	day := time.Date(y, m, d, 0, 0, 0, 0, loc)
	return simDay{
		day:        day,
		opened:     time.Date(y, m, d-cfg.DaysAhead, cfg.ReleaseHour, 0, 0, 0, loc),
		discountAt: time.Date(y, m, d-2, cfg.ReleaseHour, 0, 0, 0, loc),
		weekend:    day.Weekday() == time.Saturday || day.Weekday() == time.Sunday,
	}
}

// draws are the uniform draws of one listing's life, made in a fixed order from its own generator
// (seeded with the site seed and the listing id), so that one listing's life never depends on
// another's.
type draws struct {
	book, never, price, discount, pct, players, playersAt, bad, badKind float64
}

func drawsFor(seed int64, id string) draws {
	h := fnv.New64a()
	h.Write([]byte(id))
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	var u draws
	u.book, u.never, u.price = rng.Float64(), rng.Float64(), rng.Float64()
	u.discount, u.pct = rng.Float64(), rng.Float64()
	u.players, u.playersAt = rng.Float64(), rng.Float64()
	u.bad, u.badKind = rng.Float64(), rng.Float64()
	return u
}

// newListing draws the life of the listing of course ci, part pi at tee on day d: its booking,
// price, changes and whether its row is malformed.
func newListing(cfg Config, d simDay, ci, pi int, part string, tee time.Duration) *listing {
	start := d.day.Add(tee)
	l := &listing{course: ci, part: pi}
	l.ID = listingID(ci, pi, start)
	l.Course, l.Part = cfg.Courses[ci].Name, part
	l.PlayDate = d.day.Format("2006-01-02")
	l.TeeTime = start.Format("15:04")
	l.RoundDate = d.day.Format("01/02") + "(" + weekdayKO[d.day.Weekday()] + ")"
	l.ShownTeeTime = l.TeeTime
	l.OpenedAt, l.ExpiresAt = d.opened, start
	l.Players = 4
	u := drawsFor(cfg.Seed, l.ID)
	if u.never >= 0.08 {
		l.booked = bookingAt(cfg, d, tee, u.book)
	}
	if u.price >= 0.03 || cfg.AlwaysPriced {
		l.PriceKRW = priceOf(cfg.Courses[ci], d, tee)
	}
	l.drawChanges(d, u)
	l.cancellations(cfg, d.day)
	if u.bad < cfg.BadRowRate {
		l.Malformed = true
		if u.badKind < 0.5 {
			l.RoundDate = "13/45(" + weekdayKO[d.day.Weekday()] + ")"
		} else {
			l.ShownTeeTime = "25:99"
		}
	}
	return l
}

// bookingAt is when the listing at tee is booked: an exponential delay after its release (or the
// site's epoch, if later); nil when that is not before the tee time.
func bookingAt(cfg Config, d simDay, tee time.Duration, uBook float64) *time.Time {
	mean := float64(meanTimeToBook(d.day.Weekday(), tee)) / cfg.BookingSpeed
	delay := time.Duration(-math.Log(1-uBook) * mean).Truncate(time.Second)
	from := d.opened
	if cfg.Epoch.After(from) {
		from = cfg.Epoch.Truncate(time.Second)
	}
	if b := from.Add(delay); b.Before(d.day.Add(tee)) {
		return &b
	}
	return nil
}

// priceOf is the green fee at tee: the course's base, +30% on weekends, +10% in the morning,
// rounded to 10,000 won.
func priceOf(c Course, d simDay, tee time.Duration) *int64 {
	p := c.BasePriceKRW
	if d.weekend {
		p = p * 13 / 10
	}
	if tee < 10*time.Hour {
		p = p * 11 / 10
	}
	p = (p + 5000) / 10000 * 10000
	return &p
}

// drawChanges adds the listing's changes before it closes: a 10% or 20% discount two days ahead
// (30% of priced listings), and one player fewer at a random time in the first half of its
// release (10%), which a later discount keeps.
func (l *listing) drawChanges(d simDay, u draws) {
	closed := l.closedAt()
	if l.PriceKRW != nil && u.discount < 0.3 && d.discountAt.After(d.opened) && d.discountAt.Before(closed) {
		pct := int64(10)
		if u.pct < 0.5 {
			pct = 20
		}
		np := *l.PriceKRW * (100 - pct) / 100 / 1000 * 1000
		l.Changes = append(l.Changes, Change{At: d.discountAt, PriceKRW: &np, Players: 4})
	}
	if u.players >= 0.1 {
		return
	}
	at := d.opened.Add(time.Duration(u.playersAt * 0.5 * float64(l.ExpiresAt.Sub(d.opened)))).Truncate(time.Second)
	if !at.Before(closed) {
		return
	}
	price := l.PriceKRW
	if len(l.Changes) > 0 && l.Changes[0].At.Before(at) {
		price = l.Changes[0].PriceKRW
	}
	l.Changes = append(l.Changes, Change{At: at, PriceKRW: price, Players: 3})
	sort.Slice(l.Changes, func(i, j int) bool { return l.Changes[i].At.Before(l.Changes[j].At) })
	// A discount after the players change keeps the new players count.
	for i := range l.Changes {
		if l.Changes[i].At.After(at) {
			l.Changes[i].Players = 3
		}
	}
}

func listingID(course, part int, start time.Time) string {
	return fmt.Sprintf("c%dp%d-%s", course, part, start.Format("200601021504"))
}
