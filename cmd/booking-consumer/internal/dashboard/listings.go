package dashboard

// The listings page (a filtered, sorted, paged table) and its CSV download.

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
)

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
	if err := lq.parseNames(q); err != nil {
		return lq, err
	}
	if err := lq.parseDates(q); err != nil {
		return lq, err
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
	return lq, lq.parseOrder(q)
}

// parseNames reads the source and course filters.
func (lq *listingQuery) parseNames(q url.Values) error {
	lq.Source, lq.Course = strings.TrimSpace(q.Get("source")), strings.TrimSpace(q.Get("course"))
	if err := checkText("source", lq.Source); err != nil {
		return err
	}
	if err := checkText("course", lq.Course); err != nil {
		return err
	}
	if len(lq.Source) > events.MaxSourceBytes {
		return fmt.Errorf("source is longer than %d bytes", events.MaxSourceBytes)
	}
	if len(lq.Course) > events.MaxCourseNameBytes {
		return fmt.Errorf("course is longer than %d bytes", events.MaxCourseNameBytes)
	}
	lq.Filter.Source, lq.Filter.Course = lq.Source, lq.Course
	return nil
}

// parseDates reads the play-date range (from, to).
func (lq *listingQuery) parseDates(q url.Values) error {
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
			return fmt.Errorf("%s %q is not a date: want YYYY-MM-DD, e.g. 2026-04-18", d.name, *d.s)
		}
		*d.dst = &t
	}
	if lq.Filter.From != nil && lq.Filter.To != nil && lq.Filter.To.Before(*lq.Filter.From) {
		return fmt.Errorf("from %s is after to %s: the play-date range is empty", lq.From, lq.To)
	}
	return nil
}

// parseOrder reads the table's order and page (sort, dir, page, size).
func (lq *listingQuery) parseOrder(q url.Values) error {
	if s := q.Get("sort"); s != "" {
		if !store.ValidListingSort(s) {
			return fmt.Errorf("sort %q: want one of play_date, course, source, status, opened_at, closed_at, lifetime, open_price, last_price, changes", s)
		}
		lq.Sort = s
	}
	switch q.Get("dir") {
	case "", "asc":
	case "desc":
		lq.Desc = true
	default:
		return fmt.Errorf("dir %q: want asc or desc", q.Get("dir"))
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
			return fmt.Errorf("%s %q: want a whole number from %d to %d", p.name, s, p.min, p.max)
		}
		*p.dst = n
	}
	return nil
}

// checkText refuses a text parameter PostgreSQL cannot compare with a text column: invalid UTF-8
// or a NUL would fail the query (SQLSTATE 22021), a 500 and an ERROR line for the client's mistake.
func checkText(name, s string) error {
	switch {
	case !utf8.ValidString(s):
		return fmt.Errorf("%s is not valid UTF-8: give the name as the Listings page shows it", name)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%s contains a NUL character, which no listing has", name)
	}
	return nil
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
	if !h.readPage(w, r, func(rd *store.Reader) error {
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
	}) {
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
