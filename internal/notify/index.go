package notify

import (
	"slices"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// maxIndexedDays bounds the play dates a watch's date range is enumerated over in the index; a
// longer (or open) range is looked at for every date, filtered by its weekdays.
const maxIndexedDays = 400

// watchIndex finds the watches an event may enter without looking at every watch: by source,
// then by play date (a bounded date range, enumerated with its weekdays) or by weekday (no bounded
// range). What it returns are candidates, in config order: Watch.enters still checks every
// condition (course substrings, tee time, price, players, next_days).
type watchIndex struct {
	n      int                  // len(Config.Watches) it was built from
	bySrc  map[string]*dayIndex // watches naming the source
	anySrc *dayIndex            // watches of any source
	hours  []uint32             // per watch: bit h set when a tee time of hour h may match, bit 24 for no tee time
	next   []int                // per watch: its next_days (0: none), checked against the event's date
}

// noTeeTime is the hours bit of an event without a tee time.
const noTeeTime = 24

// dayIndex is the watches of one source bucket by play date.
type dayIndex struct {
	byDate    map[string][]int // "2006-01-02" → watch indexes (bounded ranges)
	byWeekday [7][]int         // unbounded watches with weekdays
	anyDate   []int            // unbounded watches without weekdays
}

func newDayIndex() *dayIndex { return &dayIndex{byDate: map[string][]int{}} }

// buildIndex indexes ws.
func buildIndex(ws []*Watch) *watchIndex {
	ix := &watchIndex{n: len(ws), bySrc: map[string]*dayIndex{}, anySrc: newDayIndex(), hours: make([]uint32, len(ws)), next: make([]int, len(ws))}
	for i, w := range ws {
		ix.hours[i], ix.next[i] = hoursOf(w), w.NextDays
		if len(w.Sources) == 0 {
			ix.anySrc.add(i, w)
			continue
		}
		for _, s := range w.Sources {
			d := ix.bySrc[s]
			if d == nil {
				d = newDayIndex()
				ix.bySrc[s] = d
			}
			d.add(i, w)
		}
	}
	return ix
}

func (d *dayIndex) add(i int, w *Watch) {
	bounded := !w.DateFrom.IsZero() && !w.DateTo.IsZero() && !w.DateTo.Before(w.DateFrom) &&
		w.DateTo.Sub(w.DateFrom) <= maxIndexedDays*24*time.Hour
	switch {
	case bounded:
		for day := w.DateFrom; !day.After(w.DateTo); day = day.AddDate(0, 0, 1) {
			if len(w.Weekdays) == 0 || slices.Contains(w.Weekdays, day.Weekday()) {
				k := day.Format(events.DateLayout)
				d.byDate[k] = append(d.byDate[k], i)
			}
		}
	case len(w.Weekdays) > 0:
		for _, wd := range w.Weekdays {
			if !slices.Contains(d.byWeekday[wd], i) {
				d.byWeekday[wd] = append(d.byWeekday[wd], i)
			}
		}
	default:
		d.anyDate = append(d.anyDate, i)
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

// hourOf reads the hour of "HH:MM".
func hourOf(s string) (int, bool) {
	if len(s) < 3 || s[2] != ':' || s[0] < '0' || s[0] > '2' || s[1] < '0' || s[1] > '9' {
		return 0, false
	}
	h := int(s[0]-'0')*10 + int(s[1]-'0')
	return h, h < 24
}

// candidates appends to out the indexes of the watches v's event may enter, sorted.
func (ix *watchIndex) candidates(v *view, out []int) []int {
	out = ix.anySrc.candidates(v, out)
	if d := ix.bySrc[v.e.Source]; d != nil {
		out = d.candidates(v, out)
	}
	bit, ok := hourOf(v.e.TeeTime)
	if v.e.TeeTime == "" {
		bit, ok = noTeeTime, true
	}
	out = slices.DeleteFunc(out, func(i int) bool {
		if ok && ix.hours[i]&(1<<bit) == 0 {
			return true
		}
		n := ix.next[i]
		return n > 0 && (v.date.IsZero() || v.date.Before(v.today) || !v.date.Before(v.today.AddDate(0, 0, n)))
	})
	slices.Sort(out)
	return slices.Compact(out)
}

func (d *dayIndex) candidates(v *view, out []int) []int {
	out = append(out, d.anyDate...)
	if v.date.IsZero() {
		return out // only watches without date conditions can match
	}
	out = append(out, d.byDate[v.e.PlayDate]...)
	return append(out, d.byWeekday[v.date.Weekday()]...)
}
