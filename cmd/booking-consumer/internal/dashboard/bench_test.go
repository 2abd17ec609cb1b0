package dashboard

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// BenchmarkPages measures every page's response time (the whole handler: read-only transaction,
// queries, template) over 1M events / 100k listings (storetest.LoadBenchEvents, the data of the
// views benchmarks) with the projection built and the hourly rollup filled by its trigger.
// Target: ≤ 200 ms per page. Reports the median of 5 requests per page in ms.
//
//	go test ./cmd/booking-consumer/internal/dashboard/ -run '^$' -bench Pages -benchtime 1x -v
func BenchmarkPages(b *testing.B) {
	pool := storetest.NewDB(b)
	storetest.LoadBenchEvents(b, pool)
	s := store.New(pool)
	st, err := s.RebuildProjection(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(b.Context(), "analyze listing_lifetimes; analyze booking_events_hourly"); err != nil {
		b.Fatal(err)
	}
	b.Logf("projection: %d listings in %v", st.Listings, st.Total)
	// The bench events occur on 2026-04-01/02 (UTC): the last 7 days as of 04-03 cover them all.
	cfg := Config{Store: s, AsOf: func() time.Time { return time.Date(2026, 4, 3, 12, 0, 0, 0, time.UTC) }}
	h, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	pages := []struct{ name, target string }{
		{"overview", "/"},
		{"listings", "/listings"},
		{"listings_filtered", "/listings?" + url.Values{"course": {"Course 7"}, "from": {"2026-06-01"}, "to": {"2026-06-30"}, "status": {"booked"}}.Encode()},
		{"listings_sorted_lifetime_p10", "/listings?sort=lifetime&dir=desc&size=100&page=10"},
		{"listings_sorted_price", "/listings?sort=last_price&status=expired"},
		{"listings_csv_week", "/listings.csv?from=2026-06-01&to=2026-06-07"},
		{"listing", "/listing?" + url.Values{"key": {"teeup|Course 7||2026-06-10|06:10"}}.Encode()},
		{"pipeline", "/pipeline"},
	}
	serve := func(target string) time.Duration {
		start := time.Now()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		d := time.Since(start)
		if w.Code != http.StatusOK {
			b.Fatalf("GET %s: %d\n%s", target, w.Code, w.Body.String())
		}
		_, _ = io.Copy(io.Discard, w.Body)
		return d
	}
	for _, p := range pages { // warm the caches once
		serve(p.target)
	}
	for b.Loop() {
		for _, p := range pages {
			serve(p.target)
		}
	}
	worst := 0.0
	for _, p := range pages {
		var ds []time.Duration
		for range 5 {
			ds = append(ds, serve(p.target))
		}
		slices.Sort(ds)
		ms := float64(ds[2].Microseconds()) / 1000
		worst = max(worst, ms)
		b.ReportMetric(ms, p.name+"_ms")
	}
	b.ReportMetric(worst, "worst_page_ms")
	// The overview's first load on a new server computes the time-to-book curves (one scan of
	// booking_lifetimes); the loads above reuse them (nothing was stored in between).
	var fresh []time.Duration
	for range 5 {
		if h, err = New(cfg); err != nil {
			b.Fatal(err)
		}
		fresh = append(fresh, serve("/"))
	}
	slices.Sort(fresh)
	b.ReportMetric(float64(fresh[2].Microseconds())/1000, "overview_curves_computed_ms")
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		b.Logf("load average: %s", strings.TrimSpace(string(la)))
	}
}
