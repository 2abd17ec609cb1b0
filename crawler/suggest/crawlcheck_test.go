package suggest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// The entry is run through the crawler's own parser on the fetched page: a row the crawl would
// reject (here a notice row that matches row) is said, with its reason, before any crawl.
func TestSuggestCrawlsTheFetchedPage(t *testing.T) {
	day := time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<html><body><table class="tbl"><tr><th>시간</th><th>그린피</th><th>비고</th></tr>`+
			`<tr><td>06:30</td><td>130,000원</td><td></td></tr><tr><td>07:00</td><td>140,000원</td><td></td></tr>`+
			`<tr><td>07:30</td><td>140,000원</td><td></td></tr><tr><td>08:00</td><td>150,000원</td><td></td></tr>`+
			`<tr><td></td><td></td><td>우천 시 취소됩니다</td></tr></table></body></html>`)
	}))
	t.Cleanup(srv.Close)
	_, stderr := runSuggest(t, "curl '"+srv.URL+"/tee.asp?date=20261205'", Options{Date: day, Name: "레이크 CC"})
	if !strings.Contains(stderr, "crawl check: warning: the crawler's parser reads 4 listing(s) from the fetched page with this entry and rejects 1 row(s) (bad_tee_time 1)") {
		t.Errorf("the crawl check does not say the rejected row")
	}
}
