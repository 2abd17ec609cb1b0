package crawler

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// soldOutRow is the one row a classic club page keeps in its table for a sold-out date.
const soldOutRow = `<tr class="res"><td colspan=2>예약 가능한 시간이 없습니다.</td></tr>`

// TestHTMLEmptyWhenMarkerRow: a sold-out date's marker row matches row, holds no required cell and
// matches empty_when: the page is a sold-out answer (its listings close as on any sold-out page),
// not a rejected row. Without the key the same row is rejected.
func TestHTMLEmptyWhenMarkerRow(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	soldOut := false
	srv := newSourceServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		mu.Lock()
		marker := soldOut && r.URL.Query().Get("book_date") == "20261202"
		mu.Unlock()
		rows := `<tr class="res"><td>13:00</td><td>130,000원</td></tr>`
		if marker {
			rows = soldOutRow
		}
		fmt.Fprint(w, `<html><body><table id="resList"><tr><th>시간</th><th>그린피</th></tr>`+rows+`</table></body></html>`)
	})
	for _, tc := range []struct {
		name, key string
		rejected  int
	}{
		{"with empty_when", "    empty_when: [{contains: \"예약 가능한 시간이 없습니다\"}]\n", 0},
		{"without", "", 1},
	} {
		st := recompiled(t, sourceSite(t, srv.URL, clubPageSite+tc.key), func(s *site.SiteSpec) { s.Politeness.NoRetry, s.Politeness.Retries = true, 0 })
		var reports []PageReport
		deps := newRecorder().deps(t)
		deps.OnPage = func(p PageReport) { mu.Lock(); reports = append(reports, p); mu.Unlock() }
		mu.Lock()
		soldOut = true
		mu.Unlock()
		res, err := Collect(t.Context(), st, sourcesAt, deps)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Complete || res.Rejected != tc.rejected || len(res.Listings) != 1 {
			t.Errorf("%s: complete %v, %d rejected (want %d), %d listings", tc.name, res.Complete, res.Rejected, tc.rejected, len(res.Listings))
		}
		empty := 0
		for _, p := range reports {
			if p.Empty {
				empty++
			}
		}
		if want := 1 - tc.rejected; empty != want {
			t.Errorf("%s: %d sold-out answers, want %d", tc.name, empty, want)
		}
	}
	if _, err := site.ParseSites([]byte(strings.ReplaceAll(clubPageSite, "{{BASE}}", "http://x.kr") + "    empty_when: [{selector: td, contains: x}]\n")); err == nil ||
		!strings.Contains(err.Error(), "empty_when[0]: set selector or contains") {
		t.Errorf("an entry with both keys: %v", err)
	}
}
