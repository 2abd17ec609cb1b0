package sitesim

import (
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// Every shape shows exactly the tee times of /tee for a club and date, and the club routes are
// guarded by the login, whose sessions expire after SessionRequests requests.
func TestSourcesShapes(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 12, 1, 8, 0, 0, 0, KST)
	site := New(Config{Seed: 5, Now: func() time.Time { return at }, LoginPassword: "pw", SessionRequests: 2, BadRowRate: -1})
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	get := func(method, path, ctype, body string) string {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		_, page := testkit.Do(t, c, req)
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
	var api struct {
		ResultCode string
		Data       struct{ TeeTimeList []map[string]any }
	}
	if err := json.Unmarshal([]byte(get("GET", PathAPIGet+"?club=138&roundDay=2025-12-03", "", "")), &api); err != nil {
		t.Fatal(err)
	}
	if api.ResultCode != "0000" || len(api.Data.TeeTimeList) != want || !strings.HasPrefix(api.Data.TeeTimeList[0]["course_name"].(string), "&#47112;") {
		t.Errorf("GET API: %+v, want %d rows with escaped names", api, want)
	}
	var post struct{ List []map[string]string }
	if err := json.Unmarshal([]byte(get("POST", PathAPIPost, "application/json", `{"clubId":"138","date":"20251203"}`)), &post); err != nil {
		t.Fatal(err)
	}
	if len(post.List) != want || len(post.List[0]["bookTime"]) != 4 {
		t.Errorf("POST API: %+v, want %d rows with HHMM times", post, want)
	}
	if got := strings.Count(get("GET", PathClubPage+"?club_code=138&book_date=20251203", "", ""), `<tr class="res">`); got != want {
		t.Errorf("club page: %d rows, want %d", got, want)
	}
	form := url.Values{"golfResDate": {"20251203"}, "courseId": {"138"}}.Encode()
	const formType = "application/x-www-form-urlencoded"
	if !strings.Contains(get("POST", PathClubAJAX, formType, form), `<form id="login"`) {
		t.Error("the AJAX route answered without a login")
	}
	if !strings.Contains(get("POST", PathLogin, formType, "user_id=golfer&user_pw=nope"), `<form id="login"`) || site.Logins() != 0 {
		t.Error("a wrong password logged in")
	}
	get("POST", PathLogin, formType, "user_id=golfer&user_pw=pw")
	for i := range 3 { // a session serves two requests
		rows := strings.Count(get("POST", PathClubAJAX, formType, form), `<tr class="slot">`)
		if (i < 2 && rows != want) || (i == 2 && rows != 0) {
			t.Errorf("request %d of a two-request session: %d rows, want %d", i, rows, map[bool]int{true: want, false: 0}[i < 2])
		}
	}
	if site.Logins() != 1 {
		t.Errorf("%d logins", site.Logins())
	}
}
