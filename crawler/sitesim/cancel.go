package sitesim

// Cancellations: booked tee times given back for a while. Korean clubs charge a penalty for a
// cancellation after a deadline (five days before, three days before at 17:00, the day before),
// so cancellations come in waves just before those deadlines, and a cancelled Saturday-morning
// slot is booked again within minutes. Beside them, a slot held in another golfer's checkout shows
// for a few seconds when the hold is released and retaken: a flicker nobody could book.

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// Cancellations configures the cancellation waves and flickers of a Site (Config.Cancellations).
// Zero fields take the defaults named on each. Every draw is a function of the site's seed and the
// listing (and, for flickers, the hour), so the pages stay a pure function of (Config, t).
type Cancellations struct {
	// Waves are the penalty deadlines; default DefaultWaves().
	Waves []Wave
	// Share is the chance that a tee time booked before a wave is cancelled in it; default 0.15.
	Share float64
	// Spread is the mean of the exponential time before a wave's deadline at which its
	// cancellations come; default 20 minutes.
	Spread time.Duration
	// OpenMedian is the median of the exponential time a cancelled tee time stays open before it
	// is booked again; default 3 minutes.
	OpenMedian time.Duration
	// FlickersPerHour is the chance per booked tee time and hour of a flicker; default 0.02.
	FlickersPerHour float64
	// FlickerMin and FlickerMax bound how long a flicker shows (uniform); default 5 s and 25 s.
	FlickerMin, FlickerMax time.Duration
}

// Wave is a penalty deadline: DaysBefore days before the play date at Hour:Minute in the site's
// zone.
type Wave struct {
	DaysBefore   int
	Hour, Minute int
}

// DefaultWaves are the deadlines of Korean clubs: five days before, three days before and the day
// before, at 17:00.
func DefaultWaves() []Wave {
	return []Wave{{DaysBefore: 5, Hour: 17}, {DaysBefore: 3, Hour: 17}, {DaysBefore: 1, Hour: 17}}
}

func (c Cancellations) withDefaults() Cancellations {
	if c.Waves == nil {
		c.Waves = DefaultWaves()
	}
	if c.Share <= 0 {
		c.Share = 0.15
	}
	if c.Spread <= 0 {
		c.Spread = 20 * time.Minute
	}
	if c.OpenMedian <= 0 {
		c.OpenMedian = 3 * time.Minute
	}
	if c.FlickersPerHour <= 0 {
		c.FlickersPerHour = 0.02
	}
	if c.FlickerMin <= 0 {
		c.FlickerMin = 5 * time.Second
	}
	if c.FlickerMax < c.FlickerMin {
		c.FlickerMax = max(c.FlickerMin, 25*time.Second)
	}
	return c
}

// Reopening is one time a booked tee time showed on the site again: a cancellation, open until it
// was booked again (or its tee time came), or a flicker. To is zero while it is still open at the
// time the ground truth was asked for.
type Reopening struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to,omitzero"`
	Flicker bool      `json:"flicker,omitempty"`
}

// Lasted is how long the reopening showed; 0 while it is still open.
func (r Reopening) Lasted() time.Duration {
	if r.To.IsZero() {
		return 0
	}
	return r.To.Sub(r.From)
}

// contains reports whether at is within the reopening (From included, To excluded).
func (r Reopening) contains(at time.Time) bool {
	return !at.Before(r.From) && at.Before(r.To)
}

// cancellations draws the listing's wave cancellations (none without Config.Cancellations, or
// when it is never booked): for each wave, with chance Share, a cancellation Spread before the
// deadline (exponential) if the tee time was booked by then, open for an exponential time of
// median OpenMedian. A cancellation that would start inside an earlier one is dropped.
func (l *listing) cancellations(cfg Config, day time.Time) {
	c := cfg.Cancellations
	if c == nil || l.booked == nil {
		return
	}
	cc := c.withDefaults()
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), hashOf(l.ID+"/cancel")))
	y, m, d := day.Date()
	for _, w := range cc.Waves {
		u, v, o := rng.Float64(), rng.Float64(), rng.Float64()
		if u >= cc.Share {
			continue
		}
		deadline := time.Date(y, m, d-w.DaysBefore, w.Hour, w.Minute, 0, 0, cfg.Location)
		from := deadline.Add(-exponential(v, float64(cc.Spread))).Truncate(time.Second)
		if !from.After(*l.booked) || !from.Before(l.ExpiresAt) {
			continue
		}
		open := exponential(o, float64(cc.OpenMedian)/math.Ln2)
		r := Reopening{From: from, To: minTime(from.Add(max(open, time.Second)).Truncate(time.Second), l.ExpiresAt)}
		if slices.ContainsFunc(l.reopened, func(p Reopening) bool { return p.contains(r.From) || r.contains(p.From) }) {
			continue
		}
		l.reopened = append(l.reopened, r)
	}
	slices.SortFunc(l.reopened, func(a, b Reopening) int { return a.From.Compare(b.From) })
}

// flickerIn is the listing's flicker in the hour starting at hour (Unix seconds, a multiple of
// 3600), if it has one: with chance FlickersPerHour, at a uniform moment of the hour, for between
// FlickerMin and FlickerMax, while the tee time is booked and not inside a cancellation.
func (l *listing) flickerIn(cfg Config, hour int64) (Reopening, bool) {
	c := cfg.Cancellations
	if c == nil || l.booked == nil {
		return Reopening{}, false
	}
	cc := c.withDefaults()
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), hashOf(l.ID+"/flicker/"+strconv.FormatInt(hour, 10))))
	u, at, span := rng.Float64(), rng.Float64(), rng.Float64()
	if u >= cc.FlickersPerHour {
		return Reopening{}, false
	}
	from := time.Unix(hour, 0).Add(time.Duration(at * float64(time.Hour))).Truncate(time.Second).In(cfg.Location)
	lasts := cc.FlickerMin + time.Duration(span*float64(cc.FlickerMax-cc.FlickerMin)).Truncate(time.Second)
	r := Reopening{From: from, To: from.Add(lasts), Flicker: true}
	if !from.After(*l.booked) || !r.To.Before(l.ExpiresAt) {
		return Reopening{}, false
	}
	for _, p := range l.reopened {
		if p.contains(r.From) || r.contains(p.From) || p.contains(r.To) {
			return Reopening{}, false
		}
	}
	return r, true
}

// reopenedAt reports whether a cancellation or a flicker shows the listing at at.
func (l *listing) reopenedAt(cfg Config, at time.Time) bool {
	if cfg.Cancellations == nil || l.booked == nil || !at.After(*l.booked) {
		return false
	}
	for _, r := range l.reopened {
		if r.contains(at) {
			return true
		}
	}
	hour := at.Unix() / 3600 * 3600
	for _, h := range []int64{hour, hour - 3600} { // a flicker may run over the hour
		if r, ok := l.flickerIn(cfg, h); ok && r.contains(at) {
			return true
		}
	}
	return false
}

// reopenings are the listing's reopenings that overlap [from, upTo], as known at upTo (the end of
// one still open then is not revealed).
func (l *listing) reopenings(cfg Config, from, upTo time.Time) []Reopening {
	if cfg.Cancellations == nil || l.booked == nil {
		return nil
	}
	overlaps := func(r Reopening) bool { return !r.From.After(upTo) && r.To.After(from) }
	var out []Reopening
	for _, r := range l.reopened {
		if overlaps(r) {
			out = append(out, r)
		}
	}
	for h := max(from.Unix()-3600, l.booked.Unix()) / 3600 * 3600; h <= upTo.Unix(); h += 3600 {
		if r, ok := l.flickerIn(cfg, h); ok && overlaps(r) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Reopening) int { return a.From.Compare(b.From) })
	for i := range out {
		if out[i].To.After(upTo) {
			out[i].To = time.Time{}
		}
	}
	return out
}

func exponential(u, mean float64) time.Duration {
	return time.Duration(-math.Log(1-u) * mean)
}

func hashOf(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
