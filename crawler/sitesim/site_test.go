package sitesim

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// clock is a test clock the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

var t0 = time.Date(2025, 12, 1, 10, 0, 0, 0, KST)

func get(t *testing.T, h http.Handler, uri string) (int, http.Header, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, uri, nil))
	return rec.Code, rec.Header(), rec.Body.Bytes()
}

// row is one parsed tee-row of a page.
type row struct{ id, course, part, date, time, price, players string }

func parseRows(t *testing.T, body []byte) (rows []row, next string) {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("parse page: %v", err)
	}
	doc.Find("tr.tee-row").Each(func(_ int, s *goquery.Selection) {
		id, _ := s.Attr("data-id")
		txt := func(sel string) string { return strings.TrimSpace(s.Find(sel).Text()) }
		rows = append(rows, row{id, txt("td.course"), txt("td.part"), txt("td.date"), txt("td.time"), txt("td.price"), txt("td.players")})
	})
	next, _ = doc.Find("a.next").Attr("href")
	return rows, next
}

// crawlDay walks a date's pages by their next links and returns every row.
func crawlDay(t *testing.T, s *Site, date time.Time) []row {
	t.Helper()
	var all []row
	uri := "/tee?date=" + date.Format("20060102") + "&page=1"
	for pages := 0; uri != ""; pages++ {
		if pages > 50 {
			t.Fatalf("more than 50 pages for %s", date.Format("0102"))
		}
		code, _, body := get(t, s, uri)
		if code != http.StatusOK {
			t.Fatalf("GET %s: status %d", uri, code)
		}
		rows, next := parseRows(t, body)
		all = append(all, rows...)
		uri = next
	}
	return all
}

func TestDeterminism(t *testing.T) {
	t.Parallel()
	now := func() time.Time { return t0 }
	a, b := New(Config{Seed: 7, Now: now}), New(Config{Seed: 7, Now: now})
	other := New(Config{Seed: 8, Now: now})
	differs := false
	for _, uri := range []string{"/", "/tee?date=20251203&page=1", "/tee?date=20251215&page=2", "/tee?date=1210&page=1", "/ground-truth"} {
		ca, _, ba := get(t, a, uri)
		cb, _, bb := get(t, b, uri)
		if ca != cb || !bytes.Equal(ba, bb) {
			t.Errorf("GET %s differs between two sites with seed 7 (status %d vs %d)", uri, ca, cb)
		}
		_, _, bo := get(t, other, uri)
		differs = differs || !bytes.Equal(ba, bo)
	}
	if !differs {
		t.Error("seeds 7 and 8 served identical pages; the seed has no effect")
	}
}

// TestPaginationCoversAll: walking every date's pages yields every visible listing exactly once,
// with the values the ground truth says, at several instants.
func TestPaginationCoversAll(t *testing.T) {
	t.Parallel()
	c := &clock{t: t0}
	s := New(Config{Seed: 3, Now: c.Now})
	for _, at := range []time.Time{t0, t0.Add(23 * time.Hour), t0.Add(5*24*time.Hour + 2*time.Minute)} {
		c.Set(at)
		want := map[string]Truth{}
		for _, tr := range s.Visible(at) {
			want[tr.ID] = tr
		}
		if len(want) < 100 {
			t.Fatalf("at %s only %d listings visible; the model is too sparse to test", at, len(want))
		}
		seen := map[string]bool{}
		malformed := 0
		for _, d := range s.Dates(at) {
			for _, r := range crawlDay(t, s, d) {
				if seen[r.id] {
					t.Errorf("at %s listing %s shown twice", at, r.id)
				}
				seen[r.id] = true
				tr, ok := want[r.id]
				if !ok {
					t.Errorf("at %s page shows %s, not visible in the ground truth", at, r.id)
					continue
				}
				price, players := tr.StateAt(at)
				wantPrice := "전화문의"
				if price != nil {
					wantPrice = won(*price)
				}
				got := row{r.id, r.course, r.part, r.date, r.time, r.price, r.players}
				exp := row{tr.ID, tr.Course, tr.Part, tr.RoundDate, tr.ShownTeeTime, wantPrice, itoa(players) + "명"}
				if got != exp {
					t.Errorf("at %s row %+v, ground truth %+v", at, got, exp)
				}
				if tr.Malformed {
					malformed++
				}
			}
		}
		if len(seen) != len(want) {
			t.Errorf("at %s pages show %d listings, ground truth has %d visible", at, len(seen), len(want))
		}
		t.Logf("at %s: %d listings visible, %d malformed", at.Format(time.RFC3339), len(want), malformed)
	}
}

func itoa(n int) string { return string(rune('0' + n)) }

// TestTruthMatchesTime: a listing booked at T is on its page just before T and gone at T; one that
// opens at O is absent just before O; every lifecycle is coherent.
func TestTruthMatchesTime(t *testing.T) {
	t.Parallel()
	c := &clock{t: t0}
	s := New(Config{Seed: 11, Now: c.Now})
	truth := s.GroundTruth(t0, t0.Add(3*24*time.Hour))
	var booked, expired, changed int
	checked := 0
	for _, tr := range truth {
		if !tr.OpenedAt.Before(tr.ExpiresAt) || (tr.BookedAt != nil && !tr.BookedAt.Before(tr.ExpiresAt)) {
			t.Fatalf("incoherent lifecycle %+v", tr)
		}
		for _, ch := range tr.Changes {
			if ch.At.Before(tr.OpenedAt) || !ch.At.Before(tr.ClosedAt()) {
				t.Errorf("%s: change at %s outside its life [%s, %s)", tr.ID, ch.At, tr.OpenedAt, tr.ClosedAt())
			}
		}
		if len(tr.Changes) > 0 {
			changed++
		}
		if tr.BookedAt != nil {
			booked++
		} else {
			expired++
		}
		// Check the pages around the close instant of a sample of listings (rendering is not free).
		if tr.BookedAt == nil || checked >= 15 || tr.ClosedAt().Before(t0) {
			continue
		}
		checked++
		date, _ := time.ParseInLocation("2006-01-02", tr.PlayDate, KST)
		c.Set(tr.BookedAt.Add(-time.Second))
		if !containsID(crawlDay(t, s, date), tr.ID) {
			t.Errorf("%s booked at %s is not on the pages a second before", tr.ID, tr.BookedAt)
		}
		c.Set(*tr.BookedAt)
		if containsID(crawlDay(t, s, date), tr.ID) {
			t.Errorf("%s booked at %s is still on the pages at that instant", tr.ID, tr.BookedAt)
		}
	}
	if booked == 0 || expired == 0 || changed == 0 || checked == 0 {
		t.Errorf("over 3 days: %d booked, %d not booked, %d changed, %d checked; want all > 0", booked, expired, changed, checked)
	}
	t.Logf("over 3 days: %d listings, %d booked, %d not booked, %d with changes", len(truth), booked, expired, changed)

	// A release: nothing for today+14 just before 09:00, listings right at 09:00.
	release := time.Date(2025, 12, 2, 9, 0, 0, 0, KST)
	day := release.AddDate(0, 0, 14)
	c.Set(release.Add(-time.Second))
	if rows := crawlDay(t, s, day); len(rows) != 0 {
		t.Errorf("%d rows for %s before its release", len(rows), day.Format("0102"))
	}
	c.Set(release)
	if rows := crawlDay(t, s, day); len(rows) == 0 {
		t.Errorf("no rows for %s at its release", day.Format("0102"))
	}
}

func containsID(rows []row, id string) bool {
	for _, r := range rows {
		if r.id == id {
			return true
		}
	}
	return false
}

func TestFaultsDeterministic(t *testing.T) {
	t.Parallel()
	statuses := func() []int {
		s := New(Config{Seed: 5, Now: func() time.Time { return t0 }})
		s.InjectFaults(Faults{ErrorRate: 0.3, Status429Rate: 0.1})
		var out []int
		for i := range 60 {
			code, _, _ := get(t, s, "/tee?date=20251203&page="+string(rune('1'+i%3)))
			out = append(out, code)
		}
		return out
	}
	a, b := statuses(), statuses()
	count := map[int]int{}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("request %d: status %d then %d with the same seed and sequence", i, a[i], b[i])
		}
		count[a[i]]++
	}
	if count[200] == 0 || count[500] == 0 || count[429] == 0 {
		t.Errorf("statuses %v: want some 200, 500 and 429", count)
	}

	s := New(Config{Seed: 5, Now: func() time.Time { return t0 }})
	s.InjectFaults(Faults{FailFirst: 2, ThrottleFirst: 1, RetryAfter: 1500 * time.Millisecond,
		MissingPages: []string{"/tee?date=20251203&page=2"}})
	var seq []int
	for range 4 {
		code, hdr, _ := get(t, s, "/tee?date=20251203&page=1")
		seq = append(seq, code)
		if code == 429 && hdr.Get("Retry-After") != "2" {
			t.Errorf("Retry-After %q, want 2 (1.5 s rounded up)", hdr.Get("Retry-After"))
		}
	}
	if want := []int{429, 500, 200, 200}; !equalInts(seq, want) {
		t.Errorf("ThrottleFirst 1 + FailFirst 2: statuses %v, want %v", seq, want)
	}
	if code, _, _ := get(t, s, "/tee?date=20251203&page=2"); code != 404 {
		t.Errorf("missing page: status %d, want 404", code)
	}
	if code, _, _ := get(t, s, "/robots.txt"); code != 200 {
		t.Errorf("robots.txt: status %d; faults must not apply to it", code)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRoutes(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(New(Config{Seed: 1, Now: func() time.Time { return t0 }}))
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		uri    string
		status int
		match  string
	}{
		{"/healthz", 200, "ok"},
		{"/robots.txt", 200, "Allow: /"},
		{"/", 200, `href="/tee\?date=20251215&amp;page=1"`},
		{"/tee?date=20251201&page=1", 200, `class="tee-row"`},
		{"/tee?date=20251201&page=99", 404, ""},
		{"/tee?date=xx", 400, ""},
		{"/ground-truth?from=2025-12-01T00:00:00Z&to=2025-12-01T01:00:00Z", 200, `"play_date": "2025-12-`},
		{"/ground-truth?to=yesterday", 400, ""},
		{"/nope", 404, ""},
	} {
		resp, err := srv.Client().Get(srv.URL + tc.uri)
		if err != nil {
			t.Fatalf("GET %s: %v", tc.uri, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("GET %s: status %d, want %d", tc.uri, resp.StatusCode, tc.status)
		}
		if tc.match != "" && !regexp.MustCompile(tc.match).Match(body) {
			t.Errorf("GET %s: body does not match %q:\n%.400s", tc.uri, tc.match, body)
		}
		if resp.Header.Get("X-Sim-Now") != "2025-12-01T10:00:00+09:00" {
			t.Errorf("GET %s: X-Sim-Now %q", tc.uri, resp.Header.Get("X-Sim-Now"))
		}
	}
}

func TestSpeedClock(t *testing.T) {
	t.Parallel()
	realStart := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	real := realStart
	clk := SpeedClock(func() time.Time { return real }, realStart, t0, 60)
	real = realStart.Add(90 * time.Second)
	if got, want := clk(), t0.Add(90*time.Minute); !got.Equal(want) {
		t.Errorf("after 90 real seconds at 60x: %s, want %s", got, want)
	}
}

func TestWon(t *testing.T) {
	t.Parallel()
	for in, want := range map[int64]string{0: "0원", 999: "999원", 1000: "1,000원", 150000: "150,000원", 1234567: "1,234,567원"} {
		if got := won(in); got != want {
			t.Errorf("won(%d) = %q, want %q", in, got, want)
		}
	}
}
