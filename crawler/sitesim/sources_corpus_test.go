package sitesim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/korean"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// Every corpus shape shows exactly the tee times of its club and date, a list price that does not
// follow the discounts beside the price paid where it has one, and its own sold-out and
// not-open answers.
func TestCorpusShapes(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 12, 1, 8, 0, 0, 0, KST)
	site := New(Config{Seed: 5, Now: func() time.Time { return at }, DaysAhead: 4, BadRowRate: -1})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	do := func(method, path, form string) string {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(form))
		if form != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		_, page := testkit.Do(t, http.DefaultClient, req)
		return page
	}
	want := 0
	for _, tr := range site.Visible(at) {
		if tr.Course == "레이크&힐스 CC" && tr.PlayDate == "2025-12-03" {
			want++
		}
	}
	if want == 0 {
		t.Fatal("no listings to compare")
	}

	var ts struct {
		ResultCode string
		Data       struct{ TeeTimeList []map[string]any }
	}
	if err := json.Unmarshal([]byte(do("GET", PathTeescanner+"?golfclub_seq=138&roundDay=2025-12-03&orderType=", "")), &ts); err != nil {
		t.Fatal(err)
	}
	if len(ts.Data.TeeTimeList) != want {
		t.Errorf("teescanner: %d rows, want %d", len(ts.Data.TeeTimeList), want)
	}
	for _, r := range ts.Data.TeeTimeList {
		if r["min_cost"] != nil && r["min_orgin_cost"].(float64) <= r["min_cost"].(float64) {
			t.Errorf("teescanner: list price %v not above the price paid %v", r["min_orgin_cost"], r["min_cost"])
		}
	}

	var ctl struct{ Rows []map[string]string }
	form := url.Values{"method": {"getTeeList"}, "coDiv": {"138"}, "cos": {"All"}, "part": {"All"}, "date": {"20251203"}}.Encode()
	if err := json.Unmarshal([]byte(do("POST", PathReservationController, form)), &ctl); err != nil {
		t.Fatal(err)
	}
	if len(ctl.Rows) != want || len(ctl.Rows[0]["BK_TIME"]) != 4 || !strings.Contains(ctl.Rows[0]["BK_CHARGE"], ",") {
		t.Errorf("controller: %+v, want %d rows with HHMM times and comma prices", ctl.Rows, want)
	}
	if got := do("GET", PathReservationController+"?"+form, ""); !strings.Contains(got, "POST only") {
		t.Errorf("controller answered a GET: %q", got)
	}

	page := do("POST", PathRealTimeList, url.Values{"courseid": {"138"}, "pointdate": {"20251203"}}.Encode())
	if got := strings.Count(page, "golfsubcmd("); got != want {
		t.Errorf("real-time list: %d rows, want %d", got, want)
	}
	if got := do("POST", PathRealTimeList, url.Values{"courseid": {"138"}, "pointdate": {"20251210"}}.Encode()); !strings.Contains(got, "cm_no_data") {
		t.Error("real-time list: a date without tee times shows no marker row")
	}

	decode := func(s string) string {
		b, err := korean.EUCKR.NewDecoder().String(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cal := decode(do("GET", PathBookCalendar, ""))
	if !strings.Contains(cal, "charset=euc-kr") || strings.Count(cal, "JavaScript:Date_Click(") != 5 {
		t.Errorf("calendar: want five Date_Click links in an EUC-KR page:\n%s", cal)
	}
	// Only the second course, and only in the links.
	wantCal := 0
	for _, tr := range site.Visible(at) {
		if tr.Course == site.Clubs()[CalendarClub].Name && tr.PlayDate == "2025-12-03" {
			wantCal++
		}
	}
	times := decode(do("POST", PathBookCalendar, "book_date=20251203"))
	if got := strings.Count(times, "JavaScript:Book_time('20251203',"); got != wantCal || strings.Contains(times, ">06:") {
		t.Errorf("times: %d Book_time links, want %d, values only in the links:\n%s", got, wantCal, times)
	}
	if got := decode(do("POST", PathBookCalendar, "book_date=20251212")); got != AlertNotOpen {
		t.Errorf("a date past the window: %q, want the not-open alert", got)
	}

	grid := do("POST", PathKoreanGrid, url.Values{"fStoreCd": {"138"}, "fRsvD": {"20251203"}}.Encode())
	if got := strings.Count(grid, `<div class="grid-content-container">`); got != want || !strings.Contains(grid, "시") || !strings.Contains(grid, "만") {
		t.Errorf("korean grid: %d rows, want %d with Korean times and prices:\n%s", got, want, grid)
	}
}

func TestKoreanSpellings(t *testing.T) {
	for in, want := range map[string]string{"06:30": "06시 30분", "07:00": "07시", "25:99": "25시 99분"} {
		if got := koreanTime(in); got != want {
			t.Errorf("koreanTime(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[int64]string{145000: "14만5천원", 150000: "15만원", 1200000: "120만원"} {
		if got := manwon(in); got != want {
			t.Errorf("manwon(%d) = %q, want %q", in, got, want)
		}
	}
}
