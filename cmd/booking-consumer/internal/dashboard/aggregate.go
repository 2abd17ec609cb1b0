package dashboard

import (
	"math"
	"slices"
	"time"

	"github.com/golfcrawler/golf-crawler/store"
)

// percentile is PostgreSQL's percentile_cont over sorted: linear interpolation between the two
// nearest ranks, so the overview's medians equal `lifetimes --summary`'s.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	pos := p * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	if lo+1 >= len(sorted) {
		return sorted[lo]
	}
	frac := pos - float64(lo)
	return sorted[lo] + time.Duration(frac*float64(sorted[lo+1]-sorted[lo]))
}

// priceChange summarises booked listings by what their price did before the booking.
type priceChange struct {
	Direction    string
	Listings     int
	AvgChanges   float64
	MedianToBook time.Duration
}

// bookedStats is everything the overview shows about booked listings, from one scan.
type bookedStats struct {
	courses []string                                  // sorted
	median  map[string]map[time.Weekday]time.Duration // course, weekday of the play date
	count   map[string]map[time.Weekday]int
	spreads []spreadRow // per course
	lead    map[int]int // days ahead (capped at maxLeadDays, negatives as 0) -> listings
	prices  []priceChange
}

func aggregateBooked(rows []store.BookedListing) bookedStats {
	st := bookedStats{median: map[string]map[time.Weekday]time.Duration{}, count: map[string]map[time.Weekday]int{}, lead: map[int]int{}}
	byCourseDay := map[string]map[time.Weekday][]time.Duration{}
	byCourse := map[string][]time.Duration{}
	byDir := map[string][]time.Duration{}
	changes := map[string]int{}
	for _, b := range rows {
		if byCourseDay[b.Course] == nil {
			byCourseDay[b.Course] = map[time.Weekday][]time.Duration{}
			st.courses = append(st.courses, b.Course)
		}
		byCourseDay[b.Course][b.Weekday] = append(byCourseDay[b.Course][b.Weekday], b.TimeToBook)
		byCourse[b.Course] = append(byCourse[b.Course], b.TimeToBook)
		byDir[b.Direction] = append(byDir[b.Direction], b.TimeToBook)
		changes[b.Direction] += b.ChangeCount
		st.lead[min(max(b.LeadDays, 0), maxLeadDays)]++
	}
	slices.Sort(st.courses)
	for _, c := range st.courses {
		st.median[c], st.count[c] = map[time.Weekday]time.Duration{}, map[time.Weekday]int{}
		for wd, ds := range byCourseDay[c] {
			slices.Sort(ds)
			st.median[c][wd], st.count[c][wd] = percentile(ds, 0.5), len(ds)
		}
		ds := byCourse[c]
		slices.Sort(ds)
		row := spreadRow{Course: c, Booked: len(ds)}
		for i, p := range []float64{0.1, 0.25, 0.5, 0.75, 0.9} {
			row.P[i] = percentile(ds, p)
		}
		st.spreads = append(st.spreads, row)
	}
	for _, d := range []string{"dropped", "unchanged", "raised", "unknown"} {
		ds := byDir[d]
		if len(ds) == 0 {
			continue
		}
		slices.Sort(ds)
		st.prices = append(st.prices, priceChange{Direction: d, Listings: len(ds),
			AvgChanges: float64(changes[d]) / float64(len(ds)), MedianToBook: percentile(ds, 0.5)})
	}
	return st
}
