package dashboard

import (
	"net/url"
	"regexp"
	"testing"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// ingestTimes are the cells that show when the test ingested: an event's ingest time on the listing
// page (the cell before its id) and the overview's last ingest.
var ingestTimes = []struct {
	re   *regexp.Regexp
	mask string
}{
	{regexp.MustCompile(`<td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d</td><td><code>`), "<td>(ingested)</td><td><code>"},
	{regexp.MustCompile(`last ingest <span class="n small">[^<]*</span>`), `last ingest <span class="n small">(ingested)</span>`},
}

// TestPagesMatchTheirGoldens renders the pages that read booking_lifetimes rows (the overview, the
// Listings table sorted, filtered and paged, one listing, the CSV download) over the practice set as
// of practiceAsOf and compares them byte for byte with testdata/goldens (UPDATE_GOLDENS=1
// rewrites them): a change of the read model must not change a page. The cells that depend on when
// the test ran (ingestTimes) are masked.
func TestPagesMatchTheirGoldens(t *testing.T) {
	t.Parallel()
	pool, _ := practiceDB(t)
	h := newTestHandler(t, pool, nil)
	hostile := url.Values{"course": {hostileCourse}}.Encode()
	key := events.ListingKey("sim-golf", hostileCourse, "", "2026-04-19", "07:00")
	for _, tc := range []struct{ name, target string }{
		{"overview.html", "/"},
		{"listings.html", "/listings"},
		{"listings-lifetime-desc-page2.html", "/listings?sort=lifetime&dir=desc&size=25&page=2"},
		{"listings-booked-course.html", "/listings?status=booked&course=" + url.QueryEscape("레이크&힐스 CC") + "&sort=open_price"},
		{"listings-hostile.html", "/listings?" + hostile},
		{"listing-hostile.html", "/listing?" + url.Values{"key": {key}}.Encode()},
		{"listings-booked-day.csv", "/listings.csv?status=booked&from=2026-04-21&to=2026-04-21"},
		{"listings-hostile.csv", "/listings.csv?" + hostile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := get(t, h, tc.target)
			if w.Code != 200 {
				t.Fatalf("GET %s = %d:\n%s", tc.target, w.Code, w.Body)
			}
			body := w.Body.Bytes()
			for _, m := range ingestTimes {
				body = m.re.ReplaceAll(body, []byte(m.mask))
			}
			testkit.Golden(t, "testdata/goldens/"+tc.name, body)
		})
	}
}
