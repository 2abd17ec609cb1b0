package sitesim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// The two-price shapes show exactly the tee times of /tee for a club and date, each with a list
// price above the price a golfer pays, and the HTML rows a meeting time before the tee time.
func TestPriceSourcesShapes(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 12, 1, 8, 0, 0, 0, KST)
	site := New(Config{Seed: 5, Now: func() time.Time { return at }, BadRowRate: -1})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	want := 0
	for _, tr := range site.Visible(at) {
		if tr.Course == "레이크&힐스 CC" && tr.PlayDate == "2025-12-03" {
			want++
		}
	}
	var api struct {
		Result string
		Data   []map[string]string
	}
	_, body := testkit.Do(t, srv.Client(), newRequest(t, http.MethodGet, srv.URL+PathPricesJSON+"?requestType=get&gc=138&chosenDate=2025-12-03", ""))
	if err := json.Unmarshal([]byte(body), &api); err != nil {
		t.Fatal(err)
	}
	if api.Result != "success" || len(api.Data) != want || want == 0 {
		t.Fatalf("JSON: %d rows (%s), want %d", len(api.Data), api.Result, want)
	}
	for _, r := range api.Data {
		list, _ := strconv.Atoi(r["greenfee"])
		sale, _ := strconv.Atoi(r["onegreenfee"])
		if r["onegreenfee"] != "" && sale >= list {
			t.Errorf("JSON row %v: the list price is not above the sale price", r)
		}
	}
	form := url.Values{"golfResType": {"real"}, "clubCd": {"138"}, "pointDate": {"20251203"}}.Encode()
	req := newRequest(t, http.MethodPost, srv.URL+PathPricesHTML, form)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	_, page := testkit.Do(t, srv.Client(), req)
	if got := strings.Count(page, "<tr><td>"); got != want || strings.Count(page, "<del>") != want || !strings.Contains(page, "<th>집합시간</th>") {
		t.Errorf("HTML: %d rows (%d struck list prices), want %d:\n%s", got, strings.Count(page, "<del>"), want, page)
	}
}

func newRequest(t *testing.T, method, u, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}
