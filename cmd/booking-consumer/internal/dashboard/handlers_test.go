package dashboard

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

func TestPagesRenderThePracticeSet(t *testing.T) {
	pool, _ := practiceDB(t)
	h := newTestHandler(t, pool, nil)
	for _, tc := range []struct {
		target string
		want   []string
		charts int
	}{
		// Six charts and one time-to-book panel per course (the practice set's four and the hostile one).
		{"/", []string{"Listings by status", "Events per hour", "Time to book: cumulative incidence of booking, per course",
			"Median time to book among booked listings", "Time to book per course, among booked listings",
			"Lead time", "Price changes before booking, among booked listings", "booked"}, 6 + 5},
		{"/listings", []string{`id="listings"`, "Download CSV", "sim-golf"}, 0},
		{"/listings?status=booked&sort=lifetime&dir=desc&size=25&page=2", []string{`id="listings"`, "page 2 of"}, 0},
		{"/pipeline", []string{"Kafka is not configured", "No dead letters", "last ingest"}, 0},
	} {
		w := get(t, h, tc.target)
		body := w.Body.String()
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", tc.target, w.Code, body)
		}
		for _, s := range tc.want {
			if !strings.Contains(body, s) {
				t.Errorf("GET %s: no %q in the page", tc.target, s)
			}
		}
		if n := strings.Count(body, "<svg "); n != tc.charts {
			t.Errorf("GET %s: %d charts, want %d", tc.target, n, tc.charts)
		}
		for _, m := range regexp.MustCompile(`aria-label="([^"]*)" data-points="(\d+)"`).FindAllStringSubmatch(body, -1) {
			if m[2] == "0" {
				t.Errorf("GET %s: chart %q without data points", tc.target, m[1])
			}
		}
		if got := w.Header().Get("Content-Security-Policy"); !strings.Contains(got, "default-src 'none'") {
			t.Errorf("GET %s: CSP %q", tc.target, got)
		}
	}

	// One listing: its events with their Kafka positions, and its timeline.
	rows, err := store.New(pool).Lifetimes(t.Context(), store.LifetimeFilter{Status: store.StatusBooked})
	if err != nil || len(rows) == 0 {
		t.Fatalf("booked listings: %v, %d", err, len(rows))
	}
	w := get(t, h, "/listing?"+url.Values{"key": {rows[0].ListingKey}}.Encode())
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, "listing_opened") || !strings.Contains(body, "listing_closed") ||
		!strings.Contains(body, "booking-events/") || !strings.Contains(body, "<svg ") {
		t.Fatalf("one listing: %d\n%s", w.Code, body)
	}
	if w := get(t, h, "/listing?key=nope"); w.Code != http.StatusNotFound {
		t.Errorf("unknown listing: %d, want 404", w.Code)
	}
}

func TestEmptyDatabaseSaysWhatToDo(t *testing.T) {
	getContains(t, newTestHandler(t, storetest.NewDB(t), nil), http.StatusOK, map[string]string{
		"/":         "No events yet: run the crawler",
		"/listings": "No listings yet: run the crawler",
		"/pipeline": "No events yet: run the crawler",
	})
}

func TestBadFiltersAre400WithTheReason(t *testing.T) {
	getContains(t, newTestHandler(t, storetest.NewDB(t), nil), http.StatusBadRequest, map[string]string{
		"/listings?status=sold":                        `status &#34;sold&#34;: want open, booked or expired`,
		"/listings?from=2026-13-01":                    "is not a date: want YYYY-MM-DD",
		"/listings?from=2026-04-10&to=2026-04-01":      "the play-date range is empty",
		"/listings?sort=price%3Bdrop":                  "want one of play_date",
		"/listings?sort=price;drop":                    "the query string is malformed",
		"/listings?dir=up":                             "want asc or desc",
		"/listings?size=100000":                        "size &#34;100000&#34;: want a whole number from 1 to 500",
		"/listings?page=0":                             "page &#34;0&#34;",
		"/listings?colour=red":                         "unknown parameter",
		"/listings?status=open&status=booked":          "given 2 times",
		"/listings?course=" + strings.Repeat("x", 201): "course is longer than 200 bytes",
		"/listings.csv?sort=lifetime":                  "does not apply",
		"/listing":                                     "give exactly one listing key",
		"/?x=1":                                        "takes no parameters",
	})
}

// getContains GETs each target and wants status with the text in the body.
func getContains(t *testing.T, h http.Handler, status int, wants map[string]string) {
	t.Helper()
	for target, want := range wants {
		w := get(t, h, target)
		if w.Code != status || !strings.Contains(w.Body.String(), want) {
			t.Errorf("GET %s: %d, want %d with %q; body:\n%s", target, w.Code, status, want, w.Body.String())
		}
	}
}

func TestOnlyGetAndHead(t *testing.T) {
	h := newTestHandler(t, storetest.NewDB(t), nil)
	for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(m, "/listings", strings.NewReader("x=1")))
		if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: %d (Allow %q), want 405", m, w.Code, w.Header().Get("Allow"))
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/", nil))
	if w.Code != http.StatusOK || w.Body.Len() != 0 {
		t.Errorf("HEAD /: %d with %d bytes", w.Code, w.Body.Len())
	}
}

func TestHostileCourseNameIsEscaped(t *testing.T) {
	pool := storetest.NewDB(t)
	ingest(t, store.New(pool), hostileEvents())
	h := newTestHandler(t, pool, nil)
	key := hostileEvents()[0].ListingKey
	for _, target := range []string{"/", "/listings", "/listing?" + url.Values{"key": {key}}.Encode()} {
		w := get(t, h, target)
		body := w.Body.String()
		if w.Code != http.StatusOK {
			t.Fatalf("GET %s: %d\n%s", target, w.Code, body)
		}
		if strings.Contains(body, "<script") {
			t.Errorf("GET %s: an unescaped <script in the page", target)
		}
		if !strings.Contains(body, "&lt;script&gt;alert(&#34;xss&#34;)&lt;/script&gt; 악성 CC") {
			t.Errorf("GET %s: the course name is not shown escaped", target)
		}
	}
}

func TestLogin(t *testing.T) {
	pool := storetest.NewDB(t)
	basic := func(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }
	tok := newTestHandler(t, pool, func(c *Config) { c.Auth = Auth{Token: "s3cret-token"} })
	pw := newTestHandler(t, pool, func(c *Config) { c.Auth = Auth{User: "golf", Password: "pa55"} })
	for _, tc := range []struct {
		name string
		h    http.Handler
		auth string
		want int
	}{
		{"token: none", tok, "", 401},
		{"token: wrong", tok, "Bearer s3cret-tokeN", 401},
		{"token: prefix", tok, "Bearer s3cret", 401},
		{"token: right", tok, "Bearer s3cret-token", 200},
		{"token: scheme in lower case", tok, "bearer s3cret-token", 200}, // RFC 9110: the scheme is case-insensitive
		{"token: scheme in upper case", tok, "BEARER s3cret-token", 200},
		{"token: another scheme", tok, "Bearerx s3cret-token", 401},
		{"token: no space", tok, "Bearers3cret-token", 401},
		{"basic: none", pw, "", 401},
		{"basic: wrong password", pw, basic("golf", "nope"), 401},
		{"basic: wrong user", pw, basic("golfer", "pa55"), 401},
		{"basic: right", pw, basic("golf", "pa55"), 200},
		{"basic: a token is no password", pw, "Bearer pa55", 401},
	} {
		w := get(t, tc.h, "/pipeline", "Authorization", tc.auth)
		if w.Code != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, w.Code, tc.want)
		}
		if w.Code == 401 && (w.Header().Get("WWW-Authenticate") == "" || bytes.Contains(w.Body.Bytes(), []byte("pa55"))) {
			t.Errorf("%s: 401 without a challenge, or with the secret", tc.name)
		}
	}
}

func TestCheckAddrRefusesAnOpenDoor(t *testing.T) {
	for _, tc := range []struct {
		addr string
		auth Auth
		ok   bool
	}{
		{"127.0.0.1:8080", Auth{}, true},
		{"localhost:8080", Auth{}, true},
		{"[::1]:8080", Auth{}, true},
		{"0.0.0.0:8080", Auth{}, false},
		{":8080", Auth{}, false},
		{"192.168.1.5:8080", Auth{}, false},
		{"[::]:8080", Auth{}, false},
		{"0.0.0.0:8080", Auth{User: "u"}, false},                   // a user without a password is no login
		{"127.0.0.1:8080", Auth{User: "u"}, false},                 // nor on loopback: a half-configured login
		{"127.0.0.1:8080", Auth{Password: "p"}, false},             // a password without a user
		{"localhost:8080", Auth{Token: "t", Password: "p"}, false}, // even with a token: the pair is a mistake
		{"0.0.0.0:8080", Auth{Token: "t"}, true},
		{"0.0.0.0:8080", Auth{User: "u", Password: "p"}, true},
	} {
		err := CheckAddr(tc.addr, tc.auth)
		if (err == nil) != tc.ok {
			t.Errorf("CheckAddr(%q, %+v) = %v, want ok=%v", tc.addr, tc.auth, err, tc.ok)
		}
	}
}

// The CSV download is `booking-consumer lifetimes --csv` for the same filters: the same query and
// writer (the command's test in cmd/booking-consumer compares the two outputs byte for byte).
func TestCSVIsTheFilteredRows(t *testing.T) {
	pool, _ := practiceDB(t)
	h := newTestHandler(t, pool, nil)
	f := store.LifetimeFilter{Status: store.StatusBooked}
	rows, err := store.New(pool).Lifetimes(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := store.WriteLifetimesCSV(&want, rows, h.cfg.Loc); err != nil {
		t.Fatal(err)
	}
	w := get(t, h, "/listings.csv?status=booked")
	if w.Code != 200 || w.Header().Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("CSV: %d %q", w.Code, w.Header().Get("Content-Type"))
	}
	if !bytes.Equal(w.Body.Bytes(), want.Bytes()) {
		t.Fatalf("CSV differs from the store's rows (%d vs %d bytes)", w.Body.Len(), want.Len())
	}
	if n := bytes.Count(w.Body.Bytes(), []byte("\n")); n != len(rows)+1 || len(rows) < 100 {
		t.Fatalf("CSV has %d lines for %d rows", n, len(rows))
	}
}

// bookedMediansSQL is percentile_cont over the booked listings by course and weekday, in
// PostgreSQL: what the overview's booked-only heatmap computes in Go.
const bookedMediansSQL = `select course_name, extract(dow from play_date)::int, count(*)::int,
       (extract(epoch from percentile_cont(0.5) within group (order by lifetime)) * 1000000)::bigint
from booking_lifetimes where status = 'booked' group by 1, 2`

// The overview aggregates booked listings in Go; its medians (among booked listings) are
// PostgreSQL's percentile_cont to the microsecond.
func TestOverviewMediansEqualPercentileCont(t *testing.T) {
	pool, _ := practiceDB(t)
	s := store.New(pool)
	var booked []store.BookedListing
	if err := s.ReadOnly(t.Context(), store.ReadOptions{}, func(r *store.Reader) error {
		var err error
		booked, err = r.BookedListings(t.Context(), time.UTC)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	st := aggregateBooked(booked)
	rows, err := pool.Query(t.Context(), bookedMediansSQL)
	if err != nil {
		t.Fatal(err)
	}
	var course string
	var wd, n int
	var us int64
	medians := 0
	if _, err := pgx.ForEachRow(rows, []any{&course, &wd, &n, &us}, func() error {
		medians++
		want, got := time.Duration(us)*time.Microsecond, st.median[course][time.Weekday(wd)]
		if d := got - want; d < -time.Microsecond || d > time.Microsecond || st.count[course][time.Weekday(wd)] != n {
			t.Errorf("%s %v: median %v over %d, percentile_cont %v over %d", course, time.Weekday(wd), got, st.count[course][time.Weekday(wd)], want, n)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if medians < 10 {
		t.Fatalf("only %d medians", medians)
	}
}

func TestPercentileIsPercentileCont(t *testing.T) {
	ds := []time.Duration{1, 2, 3, 4}
	for p, want := range map[float64]time.Duration{0: 1, 0.5: 2, 1: 4, 0.25: 1} {
		if got := percentile(ds, p); got != want && !(p == 0.5 && got == 2) {
			t.Errorf("percentile(%v) = %v, want %v", p, got, want)
		}
	}
	if got := percentile([]time.Duration{10 * time.Second, 20 * time.Second}, 0.5); got != 15*time.Second {
		t.Errorf("median of 10s, 20s = %v", got)
	}
}

// Dead letters show on the pipeline page with their error and their raw value escaped: control
// characters and invalid UTF-8 as escapes, markup as text.
func TestPipelineShowsDeadLettersEscaped(t *testing.T) {
	pool := storetest.NewDB(t)
	s := store.New(pool)
	raw := []byte("\x1b[31m<img src=x onerror=alert(1)>\xff{\"event_type\":\"x\"}")
	if _, err := s.Ingest(t.Context(), []store.Message{{Topic: "booking-events", Partition: 2, Offset: 41,
		Key: []byte("k<script>"), Value: raw, Err: errors.New("malformed: <b>unknown event_type</b>")}}); err != nil {
		t.Fatal(err)
	}
	w := get(t, newTestHandler(t, pool, nil), "/pipeline")
	body := w.Body.String()
	if w.Code != 200 {
		t.Fatalf("pipeline: %d", w.Code)
	}
	for _, want := range []string{
		`<span class="n">1</span> dead letters`,
		"booking-events/2@41",
		`\u001b[31m&lt;img src=x onerror=alert(1)&gt;\xff{&#34;event_type&#34;:&#34;x&#34;}`,
		"malformed: &lt;b&gt;unknown event_type&lt;/b&gt;",
		"k&lt;script&gt;",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("pipeline page lacks %q", want)
		}
	}
	if strings.Contains(body, "<img") || strings.Contains(body, "<b>") || strings.Contains(body, "\x1b") {
		t.Error("a dead letter's bytes reached the page unescaped")
	}
}

// The hourly rollup counts each stored event once: a replay of the whole set (all duplicates)
// adds nothing, and its sums equal a count over booking_events.
func TestHourlyRollupMatchesTheEvents(t *testing.T) {
	pool, _ := practiceDB(t)
	s := store.New(pool)
	ingest(t, s, practiceEvents(t)) // a replay: every event a duplicate
	want := map[string]int64{}
	rows, err := pool.Query(t.Context(), `select date_trunc('hour', occurred_at, 'UTC'), event_type, count(*)
		from booking_events group by 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	var hour time.Time
	var typ string
	var n, total int64
	for rows.Next() {
		if err := rows.Scan(&hour, &typ, &n); err != nil {
			t.Fatal(err)
		}
		want[hour.UTC().Format(time.RFC3339)+" "+typ] = n
		total += n
	}
	var got []store.HourCount
	var stored int64
	if err := s.ReadOnly(t.Context(), store.ReadOptions{Timeout: time.Second}, func(r *store.Reader) error {
		var err error
		if got, err = r.EventsPerHour(t.Context(), time.Unix(0, 0), time.Now().Add(24*time.Hour)); err != nil {
			return err
		}
		stored, _, err = r.IngestTotals(t.Context())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if stored != total || total != int64(len(practiceEvents(t))+2) {
		t.Fatalf("rollup total %d, booking_events %d, ingested %d distinct", stored, total, len(practiceEvents(t))+2)
	}
	if len(got) != len(want) {
		t.Fatalf("rollup has %d hour/type buckets, the events %d", len(got), len(want))
	}
	for _, h := range got {
		if k := h.Hour.UTC().Format(time.RFC3339) + " " + h.EventType; want[k] != h.Events {
			t.Errorf("%s: rollup %d, events %d", k, h.Events, want[k])
		}
	}
}

// Kafka unreachable: the pipeline page still answers, from PostgreSQL, and says why the lag is
// missing.
func TestPipelineWithoutKafkaDegrades(t *testing.T) {
	h := newTestHandler(t, storetest.NewDB(t), func(c *Config) { c.Lag = kafkabus.GroupLag([]string{"127.0.0.1:1"}, "booking-events", "g") })
	w := get(t, h, "/pipeline")
	if body := w.Body.String(); w.Code != 200 || !strings.Contains(body, `id="kafka-error"`) || !strings.Contains(body, "Kafka did not answer") {
		t.Fatalf("pipeline with Kafka down: %d\n%s", w.Code, body)
	}
}
