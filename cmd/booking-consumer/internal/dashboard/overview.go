package dashboard

// The overview page: listings by status, events per hour, the time to book (cumulative incidence),
// the booked listings' lifetimes.

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/store"
)

type overviewData struct {
	Total       int
	ByStatus    []statusCount
	StatusChart *SVG
	Events      int64
	LastIngest  string
	HoursFrom   string
	HoursTo     string
	Days        int
	HoursEvents int64
	Hours       *SVG
	Heatmap     *SVG
	Spread      *SVG
	Spreads     []spreadRow
	Lead        *SVG
	LeadBooked  int
	Price       *SVG
	Prices      []priceChange
	Legend      []legendItem
	Incidence   []incidencePanel // time to book per course, cumulative incidence (incidence.go)
	Weekdays    []legendItem     // the weekday curves' colours
}

type statusCount struct {
	Status string
	N      int
	Color  string
}

type legendItem struct{ Name, Color string }

const maxLeadDays = 30

func (h *Handler) overview(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.Query()) > 0 {
		h.fail(w, r, http.StatusBadRequest, "the overview takes no parameters; filters are on the Listings page")
		return
	}
	loc := h.cfg.Loc
	asOf := h.cfg.AsOf()
	// The last Days whole local days up to the hour after as-of.
	to := asOf.Truncate(time.Hour).Add(time.Hour)
	y, m, d := asOf.In(loc).Date()
	from := time.Date(y, m, d-h.cfg.Days+1, 0, 0, 0, 0, loc)
	var od overviewData
	var byStatus map[string]int
	var hours []store.HourCount
	var booked []store.BookedListing
	var last *time.Time
	var sum store.Summary
	if !h.readPage(w, r, func(rd *store.Reader) error {
		var err error
		if byStatus, err = rd.StatusCounts(r.Context(), store.LifetimeFilter{}); err != nil {
			return err
		}
		if od.Events, last, err = rd.IngestTotals(r.Context()); err != nil {
			return err
		}
		if hours, err = rd.EventsPerHour(r.Context(), from, to); err != nil {
			return err
		}
		if sum, err = h.curves.get(r.Context(), rd, summaryKey{od.Events, last, asOf.Truncate(time.Minute)}); err != nil {
			return err
		}
		booked, err = rd.BookedListings(r.Context(), loc)
		return err
	}) {
		return
	}
	if last != nil {
		od.LastIngest = last.In(loc).Format("2006-01-02 15:04:05 MST")
	}
	od.addStatuses(byStatus)
	od.Days = h.cfg.Days
	od.addHours(hours, from, to, loc)
	od.addBooked(aggregateBooked(booked))
	od.addIncidence(sum)
	h.render(w, r, http.StatusOK, "overview", "Overview", od)
}

// summaryKey is what the time-to-book curves depend on that the overview reads anyway: the stored
// events (the rollup's total and last ingest, which follow every insert, delete and truncate) and
// the clock, to the minute (a listing still open turns expired as the clock passes its tee time).
type summaryKey struct {
	events int64
	last   *time.Time
	minute time.Time
}

func (k summaryKey) equal(o summaryKey) bool {
	sameLast := (k.last == nil) == (o.last == nil) && (k.last == nil || k.last.Equal(*o.last))
	return k.events == o.events && sameLast && k.minute.Equal(o.minute)
}

// summaryCache keeps the last curves computed. They take one scan of booking_lifetimes, many times
// the cost of the rest of the overview, so a page loaded again with no new event in the same
// minute reuses them; any ingest or the next minute recomputes them.
type summaryCache struct {
	mu  sync.Mutex
	ok  bool
	key summaryKey
	sum store.Summary
}

func (c *summaryCache) get(ctx context.Context, rd *store.Reader, k summaryKey) (store.Summary, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok && c.key.equal(k) {
		return c.sum, nil
	}
	sum, err := rd.Summary(ctx, store.LifetimeFilter{})
	if err != nil {
		return store.Summary{}, err
	}
	c.ok, c.key, c.sum = true, k, sum
	return sum, nil
}

// addStatuses fills the listings by status and their chart.
func (od *overviewData) addStatuses(byStatus map[string]int) {
	for _, st := range []string{store.StatusOpen, store.StatusBooked, store.StatusExpired} {
		od.ByStatus = append(od.ByStatus, statusCount{st, byStatus[st], statusColor[st]})
		od.Total += byStatus[st]
	}
	var labels, colors []string
	var values []float64
	for _, s := range od.ByStatus {
		labels, colors, values = append(labels, s.Status), append(colors, s.Color), append(values, float64(s.N))
	}
	od.StatusChart = bars("listings by status", labels, values, colors, count)
}

// addHours fills the events-per-hour chart of [from, to) and its legend.
func (od *overviewData) addHours(hours []store.HourCount, from, to time.Time, loc *time.Location) {
	byHour := map[int64]map[string]int64{} // by Unix time: time.Time keys would differ by Location
	for _, hc := range hours {
		k := hc.Hour.Unix()
		if byHour[k] == nil {
			byHour[k] = map[string]int64{}
		}
		byHour[k][hc.EventType] += hc.Events
		od.HoursEvents += hc.Events
	}
	od.HoursFrom, od.HoursTo = from.In(loc).Format("2006-01-02 15:04"), to.In(loc).Format("2006-01-02 15:04 MST")
	od.Hours = eventsPerHour(from, to, loc, byHour)
	for _, t := range typeOrder {
		od.Legend = append(od.Legend, legendItem{t, typeColor[t]})
	}
}

// addIncidence fills the time to book per course: the cumulative incidence panels and the
// weekday legend.
func (od *overviewData) addIncidence(sum store.Summary) {
	od.Incidence = incidencePanels(sum)
	for i, d := range []time.Weekday{time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday, time.Saturday, time.Sunday} {
		od.Weekdays = append(od.Weekdays, legendItem{weekdayLabel(d), weekdayColor[i]})
	}
}

// addBooked fills the booked listings' charts: the heatmap, the spread, the lead and the price.
func (od *overviewData) addBooked(bs bookedStats) {
	if len(bs.courses) == 0 {
		return
	}
	od.Heatmap = heatmap(bs.courses, bs.median, bs.count)
	od.Spreads = bs.spreads
	od.Spread = boxes(od.Spreads)
	last := 0
	for d, n := range bs.lead {
		od.LeadBooked += n
		last = max(last, d)
	}
	var ll []string
	var lv []float64
	for d := 0; d <= last; d++ {
		lab := strconv.Itoa(d)
		if d == maxLeadDays {
			lab += "+"
		}
		ll, lv = append(ll, lab), append(lv, float64(bs.lead[d]))
	}
	od.Lead = bars("booked listings by days between booking and play date (among booked listings)", ll, lv, nil, count)
	od.Prices = bs.prices
	var pl, pc []string
	var pv []float64
	pcol := map[string]string{"dropped": "#31a354", "unchanged": "#969696", "raised": "#de2d26", "unknown": "#bdbdbd"}
	for _, p := range od.Prices {
		pl, pc, pv = append(pl, p.Direction), append(pc, pcol[p.Direction]), append(pv, float64(p.Listings))
	}
	od.Price = bars("booked listings by what the price did before the booking (among booked listings)", pl, pv, pc, count)
}
