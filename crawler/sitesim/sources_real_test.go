package sitesim

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// realSite serves a site of one club of three parts (plus a second club) at a fixed instant.
func realSite(t *testing.T, edit func(*Config)) (*Site, string, time.Time) {
	t.Helper()
	at := time.Date(2025, 12, 1, 8, 0, 0, 0, KST)
	cfg := Config{Seed: 5, Now: func() time.Time { return at }, DaysAhead: 4, BadRowRate: -1, AlwaysPriced: true,
		Courses: []Course{{Name: "원 CC", Parts: []string{"1", "2", "3"}, BasePriceKRW: 150000}, {Name: "투 CC", Parts: []string{"1A", "1B"}, BasePriceKRW: 170000}}}
	if edit != nil {
		edit(&cfg)
	}
	site := New(cfg)
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	return site, srv.URL, at
}

// fetch sends a request to the test server and returns the answer's header and body.
func fetch(t *testing.T, method, u, contentType, body string) (http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header, string(b)
}

const formType = "application/x-www-form-urlencoded"

// countOn is how many tee times of club ci are on the site's pages on date at at.
func countOn(site *Site, ci int, date string, at time.Time) int {
	n := 0
	for _, tr := range site.Visible(at) {
		if tr.Course == site.cfg.Courses[ci].Name && tr.PlayDate == date {
			n++
		}
	}
	return n
}

// The server-side shapes (sources_real.go) show their club's tee times with the details that
// make them what they are: BK_CHARGE's middle amount, the member page's per-part blocks with the
// part only in p.resv, the agency's booked rows kept and team prices, the tee sheet's time in a
// submit button, the OTA API's echo and NumBook.
func TestRealShapes(t *testing.T) {
	t.Parallel()
	site, base, at := realSite(t, nil)
	want := countOn(site, 0, "2025-12-03", at)
	if want == 0 {
		t.Fatal("no listings to compare")
	}

	var itsone struct {
		ResultCode string
		Rows       []map[string]string
	}
	_, page := fetch(t, "GET", base+PathITSONETeeList+"?&date=20251203&_=1", "", "")
	if err := json.Unmarshal([]byte(page), &itsone); err != nil {
		t.Fatal(err)
	}
	if len(itsone.Rows) != want || itsone.ResultCode != "0000" {
		t.Fatalf("getTeeList.do: %d rows, want %d", len(itsone.Rows), want)
	}
	for _, r := range itsone.Rows {
		parts := strings.Split(r["BK_CHARGE"], ",")
		paid, errPaid := strconv.Atoi(parts[min(1, len(parts)-1)])
		list, errList := strconv.Atoi(r["BK_BASIC_CHARGE"])
		if len(parts) != 3 || parts[0] != "21" || errPaid != nil || errList != nil || paid >= list || r["BK_COS"] == r["BK_COS_NM"] {
			t.Errorf("getTeeList.do row %v: want BK_CHARGE 21,<amount below the list price>,<flag> and a code beside the name", r)
		}
	}
	_, page = fetch(t, "GET", base+PathITSONETeeList+"?&date=20251203&cos=B", "", "")
	if strings.Contains(page, `"BK_COS":"A"`) || !strings.Contains(page, `"BK_COS":"B"`) {
		t.Errorf("cos=B answered other parts: %s", page)
	}

	form := url.Values{"txtDate": {"2025-12-03"}, "txtMode": {"I"}, "tel1": {"010"}, "tel2": {"5512"}, "tel3": {"7734"}}.Encode()
	_, page = fetch(t, "POST", base+PathMemberTimeList, formType, form)
	if got := strings.Count(page, `<p class="resv"`); got != want || strings.Count(page, "<h3>") != 3 ||
		!strings.Contains(page, "<h3>LAKE 코스</h3>") || !strings.Contains(page, "010-5512-7734") {
		t.Errorf("member page: %d p.resv, want %d, three part headings and the member's phone:\n%s", got, want, page)
	}

	_, page = fetch(t, "GET", base+PathAgencyDetail+"?menu=1&golf=137&date=20251202&cdate=20251203", "", "")
	open, booked := strings.Count(page, "reserveSubmit('"), strings.Count(page, "btn_regist_no.gif")
	if open != want || booked == 0 || !strings.Contains(page, "할인요금(4人기준)") {
		t.Errorf("agency detail: %d open and %d booked rows, want %d open and some booked kept", open, booked, want)
	}
	l := site.visibleOn(time.Date(2025, 12, 3, 0, 0, 0, 0, KST), at)[0]
	price, _ := l.StateAt(at)
	if !strings.Contains(page, "<span class=orange_s>"+commas(*price*4)+"</span>") {
		t.Errorf("agency detail: no team price %s for %s", commas(*price*4), l.ID)
	}

	form = url.Values{"txtSearchStartDate": {"2025-12-03"}, "txtSearchEndDate": {"2025-12-03"}}.Encode()
	_, page = fetch(t, "POST", base+PathAgencySearch, formType, form)
	all := countOn(site, 0, "2025-12-03", at) + countOn(site, 1, "2025-12-03", at)
	if got := strings.Count(page, "detail.jsp?menu=1&"); got != all || !strings.Contains(page, "07:00~08:00") {
		t.Errorf("agency search: %d rows, want %d and the pre-booking table", got, all)
	}

	_, page = fetch(t, "GET", base+PathTeeSheet+"?calDate="+url.QueryEscape("12/03/2025")+"&displayOpt=All", "", "")
	if got := strings.Count(page, `<input type="submit" value="`); got != want || !strings.Contains(page, `value="6:00 AM"`) {
		t.Errorf("tee sheet: %d submit buttons, want %d with 12-hour times", got, want)
	}
	_, page = fetch(t, "GET", base+PathTeeSheet+"?index=9", "", "")
	if !strings.Contains(page, "not available to members yet") || strings.Contains(page, `id="times"`) {
		t.Errorf("tee sheet past the window: want the notice and no table:\n%s", page)
	}

	var ota struct {
		Result     struct{ Status int }
		Data       []map[string]any
		CourseCode string `json:"CourseCode"`
		OTACode    string `json:"OTA_Code"`
	}
	_, page = fetch(t, "POST", base+PathOTATeeTimes, "application/json", `{"Token":"x","CourseCode":"137","Date":"2025-12-03","OTA_Code":"OTA-1","Hole":18}`)
	if err := json.Unmarshal([]byte(page), &ota); err != nil {
		t.Fatal(err)
	}
	if ota.Result.Status != 200 || len(ota.Data) != want || ota.CourseCode != "137" || ota.OTACode != "OTA-1" {
		t.Fatalf("OTA: status %d, %d rows (want %d), echo %q %q", ota.Result.Status, len(ota.Data), want, ota.CourseCode, ota.OTACode)
	}
	for _, r := range ota.Data {
		if nb := r["NumBook"].(float64); nb < 0 || nb > 1 || r["CaddieFee"].(float64) != 150000 {
			t.Errorf("OTA row %v: want NumBook 0 or 1 and the fees on every row", r)
		}
	}
}

// The second round's other shapes (sources_corpus2.go): the fixed cart fee, the not-open code
// beside the sold-out answer, the month check, JSON labelled text/html, foreUP's false, the date
// in the path, the part only in an attribute and the prices in link arguments; and a club whose
// parts tee off apart on one day only (Config.PartStart).
func TestCorpus2Shapes(t *testing.T) {
	t.Parallel()
	site, base, at := realSite(t, func(c *Config) {
		c.PartStart = func(d time.Time, part int) time.Duration {
			if d.Day() == 3 {
				return time.Duration(part) * 3 * time.Minute
			}
			return 0
		}
	})
	want := countOn(site, 1, "2025-12-03", at)

	_, page := fetch(t, "GET", base+PathGreenCartFee+"?golfId=138&playDate=2025-12-03", "", "")
	if got := strings.Count(page, `"CART_FEE":100000`); got != want || want == 0 {
		t.Errorf("cart fee: %d rows with CART_FEE 100000, want %d", got, want)
	}
	for date, code := range map[string]string{"20251203": `"rtnCode":"0000"`, "20251212": `"rtnCode":"9001"`} {
		if _, page := fetch(t, "GET", base+PathRtnCode+"?clubId=138&ymd="+date, "", ""); !strings.Contains(page, code) {
			t.Errorf("rtnCode on %s: %s, want %s", date, page, code)
		}
	}
	if _, page := fetch(t, "GET", base+PathMonthTeeList+"?coDiv=138&selYM=202511&selDate=20251203", "", ""); !strings.Contains(page, `"resultCode":"9100"`) {
		t.Errorf("a month not the date's: %s, want 9100", page)
	}
	h, page := fetch(t, "GET", base+PathZingTeeTimes+"?nid=138&key=1234&date=2025-12-03", "", "")
	if !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.HasPrefix(page, "[") || !strings.Contains(page, `.00"`) {
		t.Errorf("golfzing: %s %s", h.Get("Content-Type"), page)
	}
	if _, page := fetch(t, "GET", base+PathForeUpTimes+"?date=12-03-2025&schedule_id=999", "", ""); strings.TrimSpace(page) != "false" {
		t.Errorf("foreUP, unknown schedule: %s, want false", page)
	}
	if _, page := fetch(t, "GET", base+PathBookingTimePrefix+"20251203", "", ""); strings.Count(page, `"bk_time"`) != countOn(site, 0, "2025-12-03", at) {
		t.Errorf("booking/time: %s", page)
	}
	_, page = fetch(t, "POST", base+PathAjaxTimeList, formType, "mode=mobile&date=20251203")
	if !strings.Contains(page, `data-coursekor="1"`) || !strings.Contains(page, " : ") {
		t.Errorf("AjaxTimeList: want the part in data-coursekor and spaced times:\n%s", page)
	}
	_, page = fetch(t, "POST", base+PathASPXTimeList, formType, "__VIEWSTATE=x&Choice_Date=2025-12-03")
	if !strings.Contains(page, "fnReservation('20251203','11','") || !strings.Contains(page, `<span class="course">1</span>`) {
		t.Errorf("ReservationTimeList.aspx: want codes in the link and names in spans:\n%s", page)
	}

	// Staggered on the 3rd only: unique by tee time there, not on the 4th.
	for day, unique := range map[int]bool{3: true, 4: false} {
		seen, dup := map[string]bool{}, false
		for _, l := range site.listingsOn(time.Date(2025, 12, day, 0, 0, 0, 0, KST)) {
			if l.course != 0 {
				continue
			}
			dup = dup || seen[l.TeeTime]
			seen[l.TeeTime] = true
		}
		if dup == unique {
			t.Errorf("December %d: tee times unique across parts %v, want %v", day, !dup, unique)
		}
	}
}
