package notify

import (
	"math"
	"slices"
	"time"
)

// maxIndexedDays bounds the play dates a watch's date range is enumerated over in the index; a
// longer (or open) range is looked at for every date, filtered by its weekdays.
const maxIndexedDays = 400

// watchIndex finds the watches an event may enter without looking at every watch: by source,
// then by play date (a bounded date range, enumerated with its weekdays) or by weekday (no bounded
// range). Muted watches are not in it. What it returns are candidates, in config order:
// Watch.enters still checks every condition (course substrings, tee time, price, players,
// next_days), unless the index decided every one of them (entry.decided).
type watchIndex struct {
	n      int                  // len(Config.Watches) it was built from
	bySrc  map[string]*dayIndex // watches naming the source
	anySrc *dayIndex            // watches of any source
}

// entry is one watch in a bucket with the conditions candidates checks: kept in the bucket
// itself, so that a look-up reads its buckets in order instead of a filter per watch elsewhere
// in memory (with 1,000 watches those reads, one cache miss each, were most of its cost).
type entry struct {
	price   int64  // max_price_krw (noLimit: none), against the event's price
	hours   uint32 // bit h set when a tee time of hour h may match, bit 24 for no tee time
	next    int32  // next_days (0: none), against the event's date
	minPl   int32  // min_players (noLimit: none), against the event's players
	i       int32  // the watch's index in Config.Watches
	teeFrom int16  // tee_time.from in minutes (noMinute: none), against an "HH:MM" tee time
	teeTo   int16  // tee_time.to in minutes (noMinute: none)
	// decided: for an event with an "HH:MM" tee time, this entry's filters and its bucket decide
	// every condition of the watch (it names no course, and its dates are the bucket's: a
	// bounded range enumerated by day, or no dates but weekdays or none), so that an opening
	// that passes them matches without a look at the watch.
	decided bool
}

// noMinute is entry's "no tee-time bound" and query's "no HH:MM tee time".
const noMinute = -1

// noLimit is watchFilter's "no price cap" and "no minimum players".
const noLimit = math.MinInt32

// noTeeTime is the hours bit of an event without a tee time.
const noTeeTime = 24

// dayIndex is the watches of one source bucket by play date.
type dayIndex struct {
	first     int             // the day number (see dayNumber) of byDay[0]
	byDay     [][]entry       // day number - first → watches (bounded ranges)
	byWeekday [7][]entry      // unbounded watches with weekdays
	anyDate   []entry         // unbounded watches without weekdays
	building  map[int][]entry // byDay while the index is built; kept when the dates span too long for a slice
}

// maxSliceDays bounds the span of play dates a dayIndex keeps in a slice (about ten years).
const maxSliceDays = 3660

func newDayIndex() *dayIndex { return &dayIndex{building: map[int][]entry{}} }

// dayNumber is the day of t (a UTC midnight) counted from 1970-01-01: an int to index by
// and to compare with, where time.Time's methods cost a date computation per watch.
func dayNumber(t time.Time) int {
	s := t.Unix()
	if s < 0 {
		s -= 86399 // floor
	}
	return int(s / 86400)
}

// freeze turns the dates met while building into byDay, a slice looked up without hashing.
func (d *dayIndex) freeze() {
	if len(d.building) == 0 {
		d.building = nil
		return
	}
	lo, hi := math.MaxInt, math.MinInt
	for k := range d.building {
		lo, hi = min(lo, k), max(hi, k)
	}
	if hi-lo >= maxSliceDays {
		return // looked up in building
	}
	d.first, d.byDay = lo, make([][]entry, hi-lo+1)
	for k, is := range d.building {
		d.byDay[k-lo] = is
	}
	d.building = nil
}

// onDay is the watches of bounded ranges that include day.
func (d *dayIndex) onDay(day int) []entry {
	if d.building != nil {
		return d.building[day]
	}
	if k := day - d.first; k >= 0 && k < len(d.byDay) {
		return d.byDay[k]
	}
	return nil
}

// buildIndex indexes ws.
func buildIndex(ws []*Watch) *watchIndex {
	ix := &watchIndex{n: len(ws), bySrc: map[string]*dayIndex{}, anySrc: newDayIndex()}
	for i, w := range ws {
		f := entry{i: int32(i), hours: hoursOf(w), next: int32(min(w.NextDays, math.MaxInt32)), price: noLimit, minPl: noLimit,
			teeFrom: minuteOf(w.TimeFrom), teeTo: minuteOf(w.TimeTo)}
		if w.MaxPriceKRW != nil {
			f.price = *w.MaxPriceKRW // ≥ 0 (Parse)
		}
		if w.MinPlayers != nil {
			f.minPl = int32(*w.MinPlayers) // 1..100 (Parse)
		}
		if w.Muted {
			continue // it enters nothing
		}
		if len(w.Sources) == 0 {
			ix.anySrc.add(f, w)
			continue
		}
		for _, s := range w.Sources {
			d := ix.bySrc[s]
			if d == nil {
				d = newDayIndex()
				ix.bySrc[s] = d
			}
			d.add(f, w)
		}
	}
	ix.anySrc.freeze()
	for _, d := range ix.bySrc {
		d.freeze()
	}
	return ix
}

func (d *dayIndex) add(f entry, w *Watch) {
	bounded := !w.DateFrom.IsZero() && !w.DateTo.IsZero() && !w.DateTo.Before(w.DateFrom) &&
		w.DateTo.Sub(w.DateFrom) <= maxIndexedDays*24*time.Hour
	f.decided = len(w.Courses) == 0 && len(w.CoursesExact) == 0 && (bounded || w.DateFrom.IsZero() && w.DateTo.IsZero())
	switch {
	case bounded:
		for day := w.DateFrom; !day.After(w.DateTo); day = day.AddDate(0, 0, 1) {
			if len(w.Weekdays) == 0 || slices.Contains(w.Weekdays, day.Weekday()) {
				k := dayNumber(day)
				d.building[k] = append(d.building[k], f)
			}
		}
	case len(w.Weekdays) > 0:
		for _, wd := range w.Weekdays {
			if !slices.ContainsFunc(d.byWeekday[wd], func(g entry) bool { return g.i == f.i }) {
				d.byWeekday[wd] = append(d.byWeekday[wd], f)
			}
		}
	default:
		d.anyDate = append(d.anyDate, f)
	}
}

// hoursOf is w's hours mask: the hours of its tee-time window (string comparison, as matches
// does: "" passes an upper bound only).
func hoursOf(w *Watch) uint32 {
	from, to := 0, 23
	if h, ok := hourOf(w.TimeFrom); ok {
		from = h
	}
	if h, ok := hourOf(w.TimeTo); ok {
		to = h
	}
	var m uint32
	for h := from; h <= to; h++ {
		m |= 1 << h
	}
	if w.TimeFrom == "" {
		m |= 1 << noTeeTime
	}
	return m
}

// minuteOf is "HH:MM" in minutes, noMinute for anything else: on two such strings the minutes
// compare as the strings do (matches compares tee times as strings).
func minuteOf(s string) int16 {
	h, ok := hourOf(s)
	if !ok || len(s) != 5 || s[3] < '0' || s[3] > '5' || s[4] < '0' || s[4] > '9' {
		return noMinute
	}
	return int16(h*60 + int(s[3]-'0')*10 + int(s[4]-'0'))
}

// hourOf reads the hour of "HH:MM".
func hourOf(s string) (int, bool) {
	if len(s) < 3 || s[2] != ':' || s[0] < '0' || s[0] > '2' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	h := int(s[0]-'0')*10 + int(s[1]-'0')
	return h, h < 24
}

// candidates appends to out the watches v's event may enter, sorted, each as its index i in
// Config.Watches shifted left by one, the low bit set when the index decided every condition of
// the watch for this event (entry.decided, and the event's tee time is "HH:MM"). The hours and
// next_days filters run as the buckets are appended (most candidates fail them), on day numbers
// and bit masks computed once per event.
func (ix *watchIndex) candidates(v *view, out []int) []int {
	q := query{hours: ^uint32(0), minute: minuteOf(v.e.TeeTime), v: v}
	if v.e.TeeTime == "" {
		q.hours = 1 << noTeeTime
	} else if h, ok := hourOf(v.e.TeeTime); ok {
		q.hours = 1 << h
	}
	out = q.bucket(ix.anySrc, out)
	if d := ix.bySrc[v.e.Source]; d != nil {
		out = q.bucket(d, out)
	}
	slices.Sort(out)
	return slices.Compact(out) // a watch naming its source twice is in the bucket twice
}

// query is one event's look-up in the index.
type query struct {
	hours  uint32 // the event's hours bit (every bit: a tee time that does not parse)
	minute int16  // the event's tee time in minutes (noMinute: not HH:MM)
	v      *view
}

func (q *query) bucket(d *dayIndex, out []int) []int {
	out = q.keep(d.anyDate, out)
	if q.v.date.IsZero() {
		return out // only watches without date conditions can match
	}
	out = q.keep(d.onDay(q.v.day), out)
	return q.keep(d.byWeekday[q.v.weekday], out)
}

// keep appends the watches of es whose tee-time window, next_days, price cap and minimum players
// may take the event (entering needs a match with the event's current price and players).
func (q *query) keep(es []entry, out []int) []int {
	v := q.v
	for k := range es {
		f := &es[k]
		if f.hours&q.hours == 0 {
			continue
		}
		if q.minute != noMinute && (f.teeFrom != noMinute && q.minute < f.teeFrom || f.teeTo != noMinute && q.minute > f.teeTo) {
			continue
		}
		if n := int(f.next); n > 0 && (v.date.IsZero() || v.day < v.today0 || v.day >= v.today0+n) {
			continue
		}
		if f.price != noLimit && (v.e.PriceKRW == nil || *v.e.PriceKRW > f.price) {
			continue
		}
		if f.minPl != noLimit && (v.e.Players == nil || int(*v.e.Players) < int(f.minPl)) {
			continue
		}
		x := int(f.i) << 1
		if f.decided && q.minute != noMinute {
			x |= 1
		}
		out = append(out, x)
	}
	return out
}
