package sitesim

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// The shapes of the sites language show exactly the tee times of their club and date, each in
// the form its comment describes: the list price beside a sale price of the tee times whose price
// dropped, a course cell spanning its rows, rows grouped by date and course, and lists that answer
// only with the token or session id of an earlier answer.
func TestLangShapes(t *testing.T) {
	t.Parallel()
	// 2025-12-03 09:00: the discounts two days ahead of 12-05 have come.
	at := time.Date(2025, 12, 3, 10, 0, 0, 0, KST)
	site := New(Config{Seed: 5, Now: func() time.Time { return at }, DaysAhead: 4, BadRowRate: -1})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	do := func(method, path, form string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(form))
		if form != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		return testkit.Do(t, client, req)
	}
	var want []Truth
	byTime := map[string]Truth{} // by part and HHMM
	for _, tr := range site.Visible(at) {
		if tr.Course == "레이크&힐스 CC" && tr.PlayDate == "2025-12-05" {
			want = append(want, tr)
			byTime[tr.Part+"|"+strings.ReplaceAll(tr.TeeTime, ":", "")] = tr
		}
	}
	if len(want) == 0 {
		t.Fatal("no listings to compare")
	}

	t.Run("sale else list", func(t *testing.T) {
		var ans struct {
			MsNum, RtnCode string
			Rows           []map[string]string
		}
		_, body := do("POST", PathGetTeeList, "coDiv=138&date=20251205&cos=All&msNum="+MemberNumber)
		if err := json.Unmarshal([]byte(body), &ans); err != nil {
			t.Fatal(err)
		}
		if ans.RtnCode != "0000" || ans.MsNum != MemberNumber || len(ans.Rows) != len(want) {
			t.Fatalf("rtnCode %s, msNum %q, %d rows; want 0000, the member number echoed, %d rows", ans.RtnCode, ans.MsNum, len(ans.Rows), len(want))
		}
		sales := 0
		for _, r := range ans.Rows {
			tr, ok := byTime[r["BK_COS_NM"]+"|"+r["BK_TIME"]]
			if !ok {
				t.Errorf("row %v: no such tee time", r)
				continue
			}
			price, _ := tr.StateAt(at)
			shown := r["BK_S_CHARGE_NM"]
			if shown == "" {
				shown = r["BK_B_CHARGE_NM"]
			} else {
				sales++
			}
			if price != nil && shown != commas(*price) || price == nil && shown != "" {
				t.Errorf("row %v: sale else list %q, want the price %s", r, shown, shownPrice(price))
			}
			if r["BK_ROUNDF"] != "1" || !regexp.MustCompile(`^[A-C]$`).MatchString(r["BK_COS"]) {
				t.Errorf("row %v: a course code or BK_ROUNDF unlike the club's", r)
			}
		}
		if sales == 0 || sales == len(ans.Rows) {
			t.Errorf("%d of %d rows show a sale price: want some, not all", sales, len(ans.Rows))
		}
		_, body = do("POST", PathGetTeeList, "coDiv=138&date=20251209&cos=All")
		if !strings.Contains(body, `"rtnCode":"9001"`) || !strings.Contains(body, getTeeListNotOpen) || !strings.Contains(body, `"rows":[]`) {
			t.Errorf("a date past the window: %s", body)
		}
	})

	t.Run("rowspan", func(t *testing.T) {
		_, page := do("GET", PathTimeTable+"?club=138&date=20251205", "")
		if got := strings.Count(page, "fnReserve("); got != len(want) {
			t.Errorf("%d booking links, want %d", got, len(want))
		}
		spans := regexp.MustCompile(`<tr><td rowspan="(\d+)">([^<]*)</td>`).FindAllStringSubmatch(page, -1)
		if len(spans) != 2 || spans[0][2] != "동코스" || spans[1][2] != "서코스" {
			t.Errorf("course cells %q, want one spanning cell per course", spans)
		}
		_, page = do("GET", PathTimeTable+"?club=138&date=20251209", "")
		if !strings.Contains(page, `<td colspan="6">예약 가능한 시간이 없습니다.</td>`) {
			t.Errorf("a date without tee times shows no marker row:\n%s", page)
		}
	})

	t.Run("grouped", func(t *testing.T) {
		var ans struct {
			Count int
			Dates map[string][]struct {
				CourseNm string
				Times    []map[string]any
			}
		}
		_, body := do("GET", PathGroupedTimes+"?clubId=138&date=2025-12-05", "")
		if err := json.Unmarshal([]byte(body), &ans); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, c := range ans.Dates["2025-12-05"] {
			n += len(c.Times)
		}
		if ans.Count != len(want) || n != len(want) || len(ans.Dates["2025-12-06"]) == 0 {
			t.Errorf("count %d, %d times of the date, next date %d courses; want %d, %d and some", ans.Count, n, len(ans.Dates["2025-12-06"]), len(want), len(want))
		}
	})

	t.Run("csrf", func(t *testing.T) {
		form := "club=138&date=20251205"
		if status, _ := do("POST", PathCSRFTimes, form+"&_csrf=guess"); status != http.StatusForbidden {
			t.Errorf("a times request without the form's token: status %d, want 403", status)
		}
		_, page := do("GET", PathCSRFForm, "")
		m := regexp.MustCompile(`name="_csrf" value="([0-9a-f]{16})"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no token in the form page:\n%s", page)
		}
		var ans struct {
			Result string
			List   []map[string]string
		}
		_, body := do("POST", PathCSRFTimes, form+"&_csrf="+m[1])
		if err := json.Unmarshal([]byte(body), &ans); err != nil || ans.Result != "ok" || len(ans.List) != len(want) {
			t.Errorf("with the form's token: %v %s", err, body)
		}
		_, body = do("GET", PathCSRFToken, "")
		if !strings.Contains(body, `"csrfToken":"`+m[1]+`"`) {
			t.Errorf("the token endpoint does not show the session's token: %s", body)
		}
	})

	t.Run("sid", func(t *testing.T) {
		if _, page := do("GET", PathSIDList+"?sid=guess&club=138&date=20251205", ""); page != sidExpired {
			t.Errorf("a list without a live sid:\n%s", page)
		}
		_, page := do("GET", PathSIDMain, "")
		m := regexp.MustCompile(`href="/sid/real_list\.asp\?sid=([0-9a-f]{16})&amp;menu=real"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no sid in the main page's menu:\n%s", page)
		}
		_, page = do("GET", PathSIDList+"?"+url.Values{"sid": {m[1]}, "club": {"138"}, "date": {"20251205"}}.Encode(), "")
		if got := strings.Count(page, "<tr class=\"slot\">"); got != len(want) || !strings.Contains(page, "sid="+m[1]) {
			t.Errorf("%d rows (want %d), or the rows' links lack the sid", got, len(want))
		}
		if secrets := site.IssuedSecrets(); len(secrets) != 4 {
			t.Errorf("issued %q, want the csrf and sid sessions' ids and tokens", secrets)
		}
	})
}
