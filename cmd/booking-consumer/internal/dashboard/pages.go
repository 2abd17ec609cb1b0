package dashboard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/textfmt"
	"github.com/golfcrawler/golf-crawler/store"
)

type pages map[string]*template.Template

func parsePages() (pages, error) {
	funcs := template.FuncMap{
		"f1":  func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) },
		"dur": fmtDur,
		"won": func(p *int64) string {
			if p == nil {
				return "-"
			}
			return textfmt.Thousands(*p) + "원"
		},
		"int":  func(v int64) string { return textfmt.Thousands(v) },
		"lag":  func(v int64) string { return textfmt.Thousands(v) },
		"pct":  func(a, b int) string { return strconv.FormatFloat(100*float64(a)/float64(max(b, 1)), 'f', 1, 64) + "%" },
		"sort": sortLink,
	}
	out := pages{}
	for _, name := range []string{"overview", "listings", "listing", "pipeline", "error"} {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/svg.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard templates: %w", err)
		}
		out[name] = t
	}
	if _, err := fs.Stat(assets, "static/style.css"); err != nil {
		return nil, err
	}
	return out, nil
}

// page is what every template gets.
type page struct {
	Title string
	Nav   string
	Zone  string
	AsOf  string
	Data  any
}

// render executes the page into a buffer first, so an error never leaves half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name, title string, data any) {
	var buf bytes.Buffer
	p := page{Title: title, Nav: name, Zone: h.cfg.Loc.String(), AsOf: h.cfg.AsOf().In(h.cfg.Loc).Format("2006-01-02 15:04 MST"), Data: data}
	if err := h.pages[name].ExecuteTemplate(&buf, "layout", p); err != nil {
		h.cfg.Logger.ErrorContext(r.Context(), "dashboard: render", "page", name, "err", err)
		http.Error(w, "internal error while rendering the page", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// fail answers with an error page saying what to do.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.render(w, r, status, "error", http.StatusText(status), struct {
		Status int
		Msg    string
	}{status, msg})
}

// dbError maps a query error onto 503 (timeout, database away) or 500, logging it.
func (h *Handler) dbError(w http.ResponseWriter, r *http.Request, err error) {
	h.cfg.Logger.ErrorContext(r.Context(), "dashboard: query", "path", r.URL.Path, "err", err)
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "57014", errors.Is(err, context.DeadlineExceeded):
		h.fail(w, r, http.StatusServiceUnavailable, "the database did not answer in time; try again, or narrow the filters")
	case !store.IsTransient(err):
		h.fail(w, r, http.StatusInternalServerError, "the query failed; see the server's log")
	default:
		h.fail(w, r, http.StatusServiceUnavailable, "the database is not reachable; check DATABASE_URL and that PostgreSQL is up")
	}
}

func (h *Handler) read(r *http.Request, fn func(*store.Reader) error) error {
	return h.cfg.Store.ReadOnly(r.Context(), h.cfg.QueryTimeout, fn)
}

// ---- overview ----

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
	err := h.read(r, func(rd *store.Reader) error {
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
		booked, err = rd.BookedListings(r.Context(), loc)
		return err
	})
	if err != nil {
		h.dbError(w, r, err)
		return
	}
	if last != nil {
		od.LastIngest = last.In(loc).Format("2006-01-02 15:04:05 MST")
	}
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

	byHour := map[int64]map[string]int64{} // by Unix time: time.Time keys would differ by Location
	for _, hc := range hours {
		k := hc.Hour.Unix()
		if byHour[k] == nil {
			byHour[k] = map[string]int64{}
		}
		byHour[k][hc.EventType] += hc.Events
		od.HoursEvents += hc.Events
	}
	od.Days = h.cfg.Days
	od.HoursFrom, od.HoursTo = from.In(loc).Format("2006-01-02 15:04"), to.In(loc).Format("2006-01-02 15:04 MST")
	od.Hours = eventsPerHour(from, to, loc, byHour)
	for _, t := range typeOrder {
		od.Legend = append(od.Legend, legendItem{t, typeColor[t]})
	}

	bs := aggregateBooked(booked)
	if len(bs.courses) > 0 {
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
		od.Lead = bars("booked listings by days between booking and play date", ll, lv, nil, count)
		od.Prices = bs.prices
		var pl, pc []string
		var pv []float64
		pcol := map[string]string{"dropped": "#31a354", "unchanged": "#969696", "raised": "#de2d26", "unknown": "#bdbdbd"}
		for _, p := range od.Prices {
			pl, pc, pv = append(pl, p.Direction), append(pc, pcol[p.Direction]), append(pv, float64(p.Listings))
		}
		od.Price = bars("booked listings by what the price did before the booking", pl, pv, pc, count)
	}
	h.render(w, r, http.StatusOK, "overview", "Overview", od)
}

// ---- listings ----

// listingQuery is the validated query string of /listings and /listings.csv.
type listingQuery struct {
	Filter           store.LifetimeFilter
	Source, Course   string
	From, To, Status string
	Sort             string
	Desc             bool
	Page, Size       int
}

var listingParams = []string{"source", "course", "from", "to", "status", "sort", "dir", "page", "size"}

// parseListingQuery validates the filters: every error is a sentence for a 400 page.
func parseListingQuery(q url.Values, csv bool) (listingQuery, error) {
	lq := listingQuery{Sort: "play_date", Page: 1, Size: DefaultPageSize}
	for k, v := range q {
		if !slices.Contains(listingParams, k) {
			return lq, fmt.Errorf("unknown parameter %q: the filters are source, course, from, to, status (and sort, dir, page, size)", k)
		}
		if len(v) > 1 {
			return lq, fmt.Errorf("parameter %q given %d times: give it once", k, len(v))
		}
	}
	lq.Source, lq.Course = strings.TrimSpace(q.Get("source")), strings.TrimSpace(q.Get("course"))
	if len(lq.Source) > events.MaxSourceBytes {
		return lq, fmt.Errorf("source is longer than %d bytes", events.MaxSourceBytes)
	}
	if len(lq.Course) > events.MaxCourseNameBytes {
		return lq, fmt.Errorf("course is longer than %d bytes", events.MaxCourseNameBytes)
	}
	lq.Filter.Source, lq.Filter.Course = lq.Source, lq.Course
	for _, d := range []struct {
		name string
		s    *string
		dst  **time.Time
	}{{"from", &lq.From, &lq.Filter.From}, {"to", &lq.To, &lq.Filter.To}} {
		*d.s = strings.TrimSpace(q.Get(d.name))
		if *d.s == "" {
			continue
		}
		t, err := time.Parse(time.DateOnly, *d.s)
		if err != nil {
			return lq, fmt.Errorf("%s %q is not a date: want YYYY-MM-DD, e.g. 2026-04-18", d.name, *d.s)
		}
		*d.dst = &t
	}
	if lq.Filter.From != nil && lq.Filter.To != nil && lq.Filter.To.Before(*lq.Filter.From) {
		return lq, fmt.Errorf("from %s is after to %s: the play-date range is empty", lq.From, lq.To)
	}
	lq.Status = q.Get("status")
	switch lq.Status {
	case "", store.StatusOpen, store.StatusBooked, store.StatusExpired:
		lq.Filter.Status = lq.Status
	default:
		return lq, fmt.Errorf("status %q: want open, booked or expired (or nothing for all)", lq.Status)
	}
	if csv {
		for _, k := range []string{"sort", "dir", "page", "size"} {
			if q.Has(k) {
				return lq, fmt.Errorf("the CSV has every filtered row in the CLI's order: %q does not apply", k)
			}
		}
		return lq, nil
	}
	if s := q.Get("sort"); s != "" {
		if !store.ValidListingSort(s) {
			return lq, fmt.Errorf("sort %q: want one of play_date, course, source, status, opened_at, closed_at, lifetime, open_price, last_price, changes", s)
		}
		lq.Sort = s
	}
	switch q.Get("dir") {
	case "", "asc":
	case "desc":
		lq.Desc = true
	default:
		return lq, fmt.Errorf("dir %q: want asc or desc", q.Get("dir"))
	}
	for _, p := range []struct {
		name     string
		dst      *int
		min, max int
	}{{"page", &lq.Page, 1, 1_000_000}, {"size", &lq.Size, 1, MaxPageSize}} {
		s := q.Get(p.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < p.min || n > p.max {
			return lq, fmt.Errorf("%s %q: want a whole number from %d to %d", p.name, s, p.min, p.max)
		}
		*p.dst = n
	}
	return lq, nil
}

// values is the query string for lq with changes (empty values are left out).
func (lq listingQuery) values(change map[string]string) template.URL {
	v := url.Values{}
	set := func(k, s string) {
		if s != "" {
			v.Set(k, s)
		}
	}
	set("source", lq.Source)
	set("course", lq.Course)
	set("from", lq.From)
	set("to", lq.To)
	set("status", lq.Status)
	if lq.Sort != "play_date" {
		set("sort", lq.Sort)
	}
	if lq.Desc {
		set("dir", "desc")
	}
	if lq.Size != DefaultPageSize {
		set("size", strconv.Itoa(lq.Size))
	}
	if lq.Page != 1 {
		set("page", strconv.Itoa(lq.Page))
	}
	for k, s := range change {
		v.Del(k)
		set(k, s)
	}
	// Encode escapes every value; html/template escapes the attribute again as needed.
	return template.URL(v.Encode())
}

func (lq listingQuery) filterValues() template.URL {
	return lq.values(map[string]string{"sort": "", "dir": "", "size": "", "page": ""})
}

// sortLink is the query for sorting by col: ascending, or descending when already ascending.
func sortLink(lq listingQuery, col string) template.URL {
	dir := ""
	if lq.Sort == col && !lq.Desc {
		dir = "desc"
	}
	s := col
	if col == "play_date" {
		s = ""
	}
	return lq.values(map[string]string{"sort": s, "dir": dir, "page": ""})
}

type listingsData struct {
	Q          listingQuery
	Rows       []listingRow
	Total      int
	FirstRow   int
	LastRow    int
	Pages      int
	Prev, Next template.URL
	CSV        template.URL
	Sources    []string
	Courses    []string // sorted by PostgreSQL's collation
	Statuses   []string
	Sizes      []int
	Columns    []column
	NoData     bool
}

type column struct{ Key, Label string }

type listingRow struct {
	store.Lifetime
	Opened, Closed string
	Key            template.URL
}

func (h *Handler) listings(w http.ResponseWriter, r *http.Request) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, "the query string is malformed: "+err.Error())
		return
	}
	lq, err := parseListingQuery(q, false)
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, err.Error())
		return
	}
	var rows []store.Lifetime
	d := listingsData{Q: lq, Statuses: []string{store.StatusOpen, store.StatusBooked, store.StatusExpired},
		Sizes: []int{25, 50, 100, 200, 500}, CSV: lq.filterValues(),
		Columns: []column{{"play_date", "play date"}, {"", "tee"}, {"source", "source"}, {"course", "course"}, {"", "part"},
			{"status", "status"}, {"opened_at", "opened"}, {"closed_at", "closed"}, {"lifetime", "lifetime"},
			{"open_price", "open price"}, {"last_price", "last price"}, {"changes", "changes"}}}
	err = h.read(r, func(rd *store.Reader) error {
		var err error
		if d.Sources, d.Courses, err = rd.SourcesAndCourses(r.Context()); err != nil {
			return err
		}
		if len(d.Sources) == 0 {
			return nil
		}
		if d.Total, err = rd.CountListings(r.Context(), lq.Filter); err != nil {
			return err
		}
		rows, err = rd.ListingsPage(r.Context(), lq.Filter, lq.Sort, lq.Desc, lq.Size, (lq.Page-1)*lq.Size)
		return err
	})
	if err != nil {
		h.dbError(w, r, err)
		return
	}
	d.NoData = len(d.Sources) == 0
	for _, l := range rows {
		lr := listingRow{Lifetime: l, Opened: l.OpenedAt.In(h.cfg.Loc).Format("01-02 15:04"),
			Key: template.URL(url.Values{"key": {l.ListingKey}}.Encode())}
		if l.ClosedAt != nil {
			lr.Closed = l.ClosedAt.In(h.cfg.Loc).Format("01-02 15:04")
		}
		d.Rows = append(d.Rows, lr)
	}
	d.Pages = max(1, (d.Total+lq.Size-1)/lq.Size)
	if len(rows) > 0 {
		d.FirstRow = (lq.Page-1)*lq.Size + 1
		d.LastRow = d.FirstRow + len(rows) - 1
	}
	if lq.Page > 1 {
		d.Prev = lq.values(map[string]string{"page": strconv.Itoa(min(lq.Page-1, d.Pages))})
	}
	if lq.Page < d.Pages {
		d.Next = lq.values(map[string]string{"page": strconv.Itoa(lq.Page + 1)})
	}
	h.render(w, r, http.StatusOK, "listings", "Listings", d)
}

// listingsCSV is `booking-consumer lifetimes --csv` with the same filters: the same query
// (store.Reader.Lifetimes runs lifetimes.sql, as Store.Lifetimes does) and the same writer.
func (h *Handler) listingsCSV(w http.ResponseWriter, r *http.Request) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		http.Error(w, "the query string is malformed: "+err.Error(), http.StatusBadRequest)
		return
	}
	lq, err := parseListingQuery(q, true)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var rows []store.Lifetime
	if err := h.read(r, func(rd *store.Reader) error {
		var err error
		rows, err = rd.Lifetimes(r.Context(), lq.Filter)
		return err
	}); err != nil {
		h.cfg.Logger.ErrorContext(r.Context(), "dashboard: query", "path", r.URL.Path, "err", err)
		http.Error(w, "the query failed; see the server's log", http.StatusServiceUnavailable)
		return
	}
	var buf bytes.Buffer
	if err := store.WriteLifetimesCSV(&buf, rows, h.cfg.Loc); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="lifetimes.csv"`)
	w.Header().Set("Cache-Control", "no-store")
	if r.Method != http.MethodHead {
		_, _ = w.Write(buf.Bytes())
	}
}

// ---- one listing ----

type listingData struct {
	Key      string
	Life     []listingRow
	Events   []eventRow
	Timeline *SVG
	Legend   []legendItem
}

type eventRow struct {
	store.ListingEvent
	At, Ingested string
	Price        string
	Players      string
	Position     string
}

func (h *Handler) listing(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	key := q.Get("key")
	if key == "" || len(q) != 1 || len(q["key"]) != 1 {
		h.fail(w, r, http.StatusBadRequest, "give exactly one listing key: /listing?key=… (follow a link from the Listings page)")
		return
	}
	if len(key) > events.MaxListingKeyBytes {
		h.fail(w, r, http.StatusBadRequest, fmt.Sprintf("a listing key is at most %d bytes", events.MaxListingKeyBytes))
		return
	}
	var life []store.Lifetime
	var evs []store.ListingEvent
	err := h.read(r, func(rd *store.Reader) error {
		var err error
		if life, err = rd.Listing(r.Context(), key); err != nil {
			return err
		}
		evs, err = rd.ListingEvents(r.Context(), key)
		return err
	})
	if err != nil {
		h.dbError(w, r, err)
		return
	}
	if len(evs) == 0 {
		h.fail(w, r, http.StatusNotFound, "no events for this listing key: pick a listing on the Listings page")
		return
	}
	loc := h.cfg.Loc
	d := listingData{Key: key}
	for _, l := range life {
		lr := listingRow{Lifetime: l, Opened: l.OpenedAt.In(loc).Format("2006-01-02 15:04")}
		if l.ClosedAt != nil {
			lr.Closed = l.ClosedAt.In(loc).Format("2006-01-02 15:04")
		}
		d.Life = append(d.Life, lr)
	}
	var spans []span
	var tev []timelineEvent
	var open *span
	for _, e := range evs {
		er := eventRow{ListingEvent: e, At: e.OccurredAt.In(loc).Format("2006-01-02 15:04:05"),
			Ingested: e.IngestedAt.In(loc).Format("2006-01-02 15:04:05"), Price: "-", Players: "-", Position: "-"}
		if e.PriceKRW != nil {
			er.Price = textfmt.Thousands(*e.PriceKRW) + "원"
		}
		if e.Players != nil {
			er.Players = strconv.Itoa(int(*e.Players))
		}
		if e.Topic != nil && e.Partition != nil && e.Offset != nil {
			er.Position = fmt.Sprintf("%s/%d@%d", *e.Topic, *e.Partition, *e.Offset)
		}
		d.Events = append(d.Events, er)
		detail := er.Price
		switch e.Type {
		case "listing_opened":
			if open == nil {
				open = &span{From: e.OccurredAt, Status: "open"}
			}
		case "listing_closed":
			if open != nil {
				open.To, open.Status = e.OccurredAt, "booked"
				if e.CloseReason != nil {
					open.Status = *e.CloseReason
					detail = *e.CloseReason
				}
				spans = append(spans, *open)
				open = nil
			}
		}
		tev = append(tev, timelineEvent{At: e.OccurredAt, Type: e.Type, Detail: detail})
	}
	if open != nil {
		// Still open in the events: up to its projected close (expiry) or as-of.
		open.To = maxT(open.From, h.cfg.AsOf())
		if len(life) > 0 && life[0].ClosedAt != nil {
			open.To, open.Status = *life[0].ClosedAt, life[0].Status
		}
		spans = append(spans, *open)
	}
	d.Timeline = timeline(spans, tev, loc)
	for _, t := range typeOrder {
		d.Legend = append(d.Legend, legendItem{t, typeColor[t]})
	}
	title := key
	if len(life) > 0 {
		title = life[0].CourseName + " " + life[0].PlayDate + " " + life[0].TeeTime
	}
	h.render(w, r, http.StatusOK, "listing", title, d)
}

// ---- pipeline ----

type pipelineData struct {
	Events     int64
	LastIngest string
	Dead       int64
	DeadRows   []deadRow
	Kafka      bool
	LagErr     string
	Lag        []PartitionLag
	TotalLag   int64
	Metrics    []metricRow
	MetricsErr string
}

type deadRow struct {
	ID                int64
	Position, Failed  string
	Attempts          int
	Error, Key, Value string
}

type metricRow struct{ Name, Labels, Value, Help string }

const newestDead = 10

func (h *Handler) pipeline(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.Query()) > 0 {
		h.fail(w, r, http.StatusBadRequest, "the pipeline page takes no parameters")
		return
	}
	var d pipelineData
	var last *time.Time
	var dead []store.DeadLetter
	err := h.read(r, func(rd *store.Reader) error {
		var err error
		if d.Events, last, err = rd.IngestTotals(r.Context()); err != nil {
			return err
		}
		if d.Dead, err = rd.DeadCount(r.Context()); err != nil {
			return err
		}
		dead, err = rd.NewestDeadLetters(r.Context(), newestDead)
		return err
	})
	if err != nil {
		h.dbError(w, r, err)
		return
	}
	loc := h.cfg.Loc
	if last != nil {
		d.LastIngest = last.In(loc).Format("2006-01-02 15:04:05 MST")
	}
	for _, x := range dead {
		d.DeadRows = append(d.DeadRows, deadRow{ID: x.ID, Position: fmt.Sprintf("%s/%d@%d", x.Topic, x.Partition, x.Offset),
			Failed: x.LastFailedAt.In(loc).Format("2006-01-02 15:04:05"), Attempts: x.Attempts,
			Error: cli.Escape([]byte(x.Error), 300), Key: cli.Escape(x.Key, 120), Value: cli.Escape(x.Value, 300)})
	}
	if h.cfg.Lag != nil {
		d.Kafka = true
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		lag, err := h.cfg.Lag(ctx)
		cancel()
		if err != nil {
			d.LagErr = err.Error()
		}
		d.Lag = lag
		for _, l := range lag {
			d.TotalLag += max(l.Lag, 0)
		}
	}
	if h.cfg.Metrics != nil {
		d.Metrics, err = metricRows(h.cfg.Metrics)
		if err != nil {
			d.MetricsErr = err.Error()
		}
	}
	h.render(w, r, http.StatusOK, "pipeline", "Pipeline", d)
}

// metricRows flattens the gathered metrics of the consumer's own families (and the process's
// basics) into rows a person can read.
func metricRows(g prometheus.Gatherer) ([]metricRow, error) {
	mfs, err := g.Gather()
	var out []metricRow
	for _, mf := range mfs {
		name := mf.GetName()
		if !strings.HasPrefix(name, "consumer_") && !strings.HasPrefix(name, "booking_") &&
			name != "process_resident_memory_bytes" && name != "go_goroutines" && name != "process_start_time_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			var v string
			switch {
			case m.GetCounter() != nil:
				v = strconv.FormatFloat(m.GetCounter().GetValue(), 'f', -1, 64)
			case m.GetGauge() != nil:
				v = strconv.FormatFloat(m.GetGauge().GetValue(), 'f', -1, 64)
			case m.GetHistogram() != nil:
				hg := m.GetHistogram()
				mean := 0.0
				if hg.GetSampleCount() > 0 {
					mean = hg.GetSampleSum() / float64(hg.GetSampleCount())
				}
				v = fmt.Sprintf("%d observations, mean %.4g", hg.GetSampleCount(), mean)
			default:
				continue
			}
			out = append(out, metricRow{Name: name, Labels: strings.Join(labels, ", "), Value: v, Help: mf.GetHelp()})
		}
	}
	return out, err
}
