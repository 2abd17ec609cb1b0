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
	switch e.EventType {
	case events.ListingOpened:
		return w.Matches(e, e.PriceKRW, e.Players, now)
	case events.ListingChanged:
		if !w.Matches(e, e.PriceKRW, e.Players, now) {
			return false
		}
		if e.Previous == nil {
			return true
		}
		return !w.Matches(e, e.Previous.PriceKRW, e.Previous.Players, now)
	default:
		return false
	}
}

// Matches reports whether e's listing, with the given price and players, is inside w.
func (w *Watch) Matches(e *events.Event, price *int64, players *int, now time.Time) bool {
	if len(w.Sources) > 0 && !slices.Contains(w.Sources, e.Source) {
		return false
	}
	if len(w.Courses) > 0 || len(w.CoursesExact) > 0 {
		ok := slices.Contains(w.CoursesExact, e.CourseName)
		if !ok && len(w.Courses) > 0 {
			name := strings.ToLower(e.CourseName + " " + e.CoursePart)
			for _, c := range w.Courses {
				if strings.Contains(name, c) {
					ok = true
					break
				}
			}
		}
		if !ok {
			return false
		}
	}
	if !w.DateFrom.IsZero() || !w.DateTo.IsZero() || w.NextDays > 0 || len(w.Weekdays) > 0 {
		d, err := time.Parse(events.DateLayout, e.PlayDate)
		if err != nil {
			return false
		}
		if !w.DateFrom.IsZero() && d.Before(w.DateFrom) || !w.DateTo.IsZero() && d.After(w.DateTo) {
			return false
		}
		if w.NextDays > 0 {
			y, m, dd := now.In(Seoul).Date()
			today := time.Date(y, m, dd, 0, 0, 0, 0, time.UTC)
			if d.Before(today) || !d.Before(today.AddDate(0, 0, w.NextDays)) {
				return false
			}
		}
		if len(w.Weekdays) > 0 && !slices.Contains(w.Weekdays, d.Weekday()) {
			return false
		}
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
	return true
}

// Match is one (watch, event) pair to notify on every channel of the watch.
type Match struct {
	Watch *Watch
	Event *events.Event
}

// MatchAll returns the watches e enters, in the config's order.
func (c *Config) MatchAll(e *events.Event, now time.Time) []*Watch {
	var out []*Watch
	for _, w := range c.Watches {
		if w.Enters(e, now) {
			out = append(out, w)
		}
	}
	return out
}
