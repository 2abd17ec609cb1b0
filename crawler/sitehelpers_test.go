package crawler

// Helpers shared with crawler/site's tests (each package's tests keep their own copy): sites and
// times built the way the site model's tests build them.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

const minimalSite = `
sites:
  - name: s
    start_urls: ["https://golf.example.kr/list"]
    row: "tr.row"
    fields:
      course: {selector: "td.c"}
      round_date: {selector: "td.d"}
      tee_time: {selector: "td.t"}
`

// burstKeys is a weekly burst: Monday 09:00, every 30 s for 10 minutes.
const burstKeys = "    burst: [{at: \"MON 09:00\", every: 30s, for: 10m}]\n"

// timedSite compiles minimalSite with extra keys (YAML lines indented under the site).
func timedSite(t *testing.T, keys string) *site.Site {
	t.Helper()
	sites, err := site.ParseSites([]byte(minimalSite + keys))
	if err != nil {
		t.Fatal(err)
	}
	return sites[0]
}

// timesOf is the site's SiteTimes under global.
func timesOf(t *testing.T, keys, global string) *site.SiteTimes {
	t.Helper()
	st, err := timedSite(t, keys).Times(global)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// kst is a time in Asia/Seoul; 2026-03-09 is a Monday.
func kst(day, h, m, s int) time.Time { return time.Date(2026, 3, day, h, m, s, 0, site.Seoul()) }

// seoulTime is a wall-clock time in Asia/Seoul.
func seoulTime(t testing.TB, s string) time.Time {
	t.Helper()
	tm, err := time.ParseInLocation("2006-01-02 15:04", s, site.Seoul())
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func pointerTo[T any](v T) *T { return &v }

// readmeSitesExample is the sites example of docs/sites.md ("One example per shape").
func readmeSitesExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "sites.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "One example per shape")
	_, after, ok2 := strings.Cut(after, "```yaml\n")
	example, _, ok3 := strings.Cut(after, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/sites.md has no sites example after \"One example per shape\"")
	}
	return example
}
