package notify

import (
	"slices"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// Rule, the whole of it:
//
//   - listing_opened fires a watch when the listing matches it.
//   - listing_changed fires a watch when the listing matches it now and did not match it before the
//     change (the event's previous price and players in place of the new ones): it entered the
//     watch, e.g. its price dropped under max_price_krw or enough players became free. A change
//     that keeps it inside fires nothing (the golfer already heard of it); one without previous
//     values is treated as entering only if the listing matches.
//   - listing_closed fires nothing; it is remembered so that a later-claimed alert for an earlier
//     opening of that listing is skipped.
//
// "Matches" is every condition of the watch at once; an absent condition matches everything.

// Enters reports whether e makes its listing enter w. now (any zone) is "today" for next_days.
func (w *Watch) Enters(e *events.Event, now time.Time) bool {
	return w.enters(prepare(e, now))
}

// Matches reports whether e's listing, with the given price and players, is inside w.
func (w *Watch) Matches(e *events.Event, price *int64, players *int, now time.Time) bool {
	v := prepare(e, now)
	return w.matches(v, price, players)
}

// view is what matching needs of one event, computed once for all watches.
type view struct {
	e      *events.Event
	course string    // lower-case "course part"
	date   time.Time // play date (UTC midnight); zero if it does not parse
	today  time.Time // today in Seoul (UTC midnight)

	day, today0 int          // dayNumber of date (if not zero) and of today
	weekday     time.Weekday // of date (if not zero)
	sourceOK    bool         // the index found the watches by the event's source: matches skips it
}

func prepare(e *events.Event, now time.Time) *view {
	v := &view{e: e, course: strings.ToLower(e.CourseName + " " + e.CoursePart)}
	v.date, _ = time.Parse(events.DateLayout, e.PlayDate)
	y, m, d := now.In(Seoul).Date()
	v.today = time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
	v.today0 = dayNumber(v.today)
	if !v.date.IsZero() {
		v.day, v.weekday = dayNumber(v.date), v.date.Weekday()
	}
	return v
}

func (w *Watch) enters(v *view) bool {
	e := v.e
	switch e.EventType {
	case events.ListingOpened:
		return w.matches(v, e.PriceKRW, e.Players)
	case events.ListingChanged:
		if !w.matches(v, e.PriceKRW, e.Players) {
			return false
		}
		if e.Previous == nil {
			return true
		}
		return !w.matches(v, e.Previous.PriceKRW, e.Previous.Players)
	default:
		return false
	}
}

func (w *Watch) matches(v *view, price *int64, players *int) bool {
	e := v.e
	if !v.sourceOK && len(w.Sources) > 0 && !slices.Contains(w.Sources, e.Source) {
		return false
	}
	if !w.datesMatch(v) {
		return false
	}
	if w.TimeFrom != "" && e.TeeTime < w.TimeFrom || w.TimeTo != "" && e.TeeTime > w.TimeTo {
		return false
	}
	if w.MaxPriceKRW != nil && (price == nil || *price > *w.MaxPriceKRW) {
		return false
	}
	if w.MinPlayers != nil && (players == nil || *players < *w.MinPlayers) {
		return false
	}
	// Course substrings last: the costliest condition.
	if len(w.Courses) > 0 || len(w.CoursesExact) > 0 {
		ok := slices.Contains(w.CoursesExact, e.CourseName)
		for _, c := range w.Courses {
			if ok {
				break
			}
			ok = strings.Contains(v.course, c)
		}
		if !ok {
			return false
		}
	}
	return true
}

// datesMatch reports whether v's play date is inside w's dates, next days and weekdays.
func (w *Watch) datesMatch(v *view) bool {
	if w.DateFrom.IsZero() && w.DateTo.IsZero() && w.NextDays <= 0 && len(w.Weekdays) == 0 {
		return true
	}
	d := v.date
	switch {
	case d.IsZero():
		return false
	case !w.DateFrom.IsZero() && d.Before(w.DateFrom) || !w.DateTo.IsZero() && d.After(w.DateTo):
		return false
	case w.NextDays > 0 && (v.day < v.today0 || v.day >= v.today0+w.NextDays): // days, as AddDate
		return false
	}
	return len(w.Weekdays) == 0 || slices.Contains(w.Weekdays, v.weekday)
}

// MatchAll returns the watches e enters, in the config's order; a muted watch enters nothing.
func (c *Config) MatchAll(e *events.Event, now time.Time) []*Watch {
	if e.EventType == events.ListingClosed {
		return nil
	}
	v := prepare(e, now)
	var out []*Watch
	if ix := c.index; ix != nil && ix.n == len(c.Watches) { // see index.go
		var buf [64]int
		var found [16]*Watch // one allocation for the result, not one per append
		n := 0
		v.sourceOK = true
		opened := e.EventType == events.ListingOpened
		for _, x := range ix.candidates(v, buf[:0]) {
			// A candidate the index decided whole (decided) is a match of an opening without a
			// look at its watch (with 1,000 watches that look was a cache miss per candidate).
			i, decided := x>>1, x&1 == 1
			if w := c.Watches[i]; decided && opened || !w.Muted && w.enters(v) {
				if n == len(found) {
					out = append(out, w)
					continue
				}
				found[n] = w
				n++
			}
		}
		if n == 0 {
			return out
		}
		res := make([]*Watch, n, n+len(out))
		copy(res, found[:n])
		return append(res, out...)
	}
	for _, w := range c.Watches {
		if !w.Muted && w.enters(v) {
			out = append(out, w)
		}
	}
	return out
}
