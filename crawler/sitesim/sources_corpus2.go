package sitesim

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The suggest corpus's second round beside sources_real.go: three shapes re-created from the
// description in issue #49 (the project's own), one from a booking API its maintainers described
// in their issue threads, and four from public crawler code of club sites (request and answer
// shapes only; values invented, no code taken). Each constant says where it came from.
const (
	// PathGreenCartFee is a JSON API whose rows carry GREEN_FEE (the price a golfer pays) beside
	// CART_FEE, the cart's fee for the team, 100,000 on every row and below every green fee
	// (issue #49: "price ← CART_FEE is the price a golfer pays"). The project's own, from the
	// issue's description.
	//
	//	GET /api/teetime/list?golfId=ID&playDate=YYYY-MM-DD
	PathGreenCartFee = "/api/teetime/list"
	// PathRtnCode is a JSON API that answers a date past the booking window with rtnCode 9001
	// ("예약 가능한 일자가 아닙니다.", data null) and a sold-out date with rtnCode 0000 and an empty
	// list (issue #49: the far-date answer became empty_when, so the real sold-out answer failed
	// every crawl). The project's own, from the description.
	//
	//	GET /api/rsv/timeList?clubId=ID&ymd=YYYYMMDD
	PathRtnCode = "/api/rsv/timeList"
	// PathMonthTeeList is a JSON API whose request spells the play date's month beside the date
	// (selYM=202612 with selDate=20261205) and refuses a month that is not the date's (issue #49
	// item 5). The project's own.
	//
	//	GET /golf/teeTimeList.do?coDiv=ID&selYM=YYYYMM&selDate=YYYYMMDD
	PathMonthTeeList = "/golf/teeTimeList.do"
	// PathZingTeeTimes is a tee-time API as its maintainers described it in robinneb/golfzing
	// issues #13 and #28 (GetCourseTeeTimes.php?nid=..&key=..&date=YYYY-MM-DD): a top-level array
	// of courseID, ezlinksID, date, time (HH:MM:SS), available (golfers who can still book),
	// is_eighteenholes, includes_cart, rate (per golfer), rack (the rack rate), allowed_golfers
	// ("1,2,3,4"), sponsorID, rewards_cost (points) and GolfersNote, every value a string as PHP
	// writes MySQL's, the prices with cents ("150000.00"), under Content-Type text/html (#28: "It
	// is not returning JSON"). A course has no parts.
	//
	//	GET /api/GetCourseTeeTimes.php?nid=ID&key=1234&date=YYYY-MM-DD
	PathZingTeeTimes = "/api/GetCourseTeeTimes.php"
	// PathForeUpTimes is a booking platform's public times API as austinsomer/golfgpt-app calls
	// it (services/scraper/src/scrapers/foreup.ts, types.ts ForeUpTimeSlot): date=MM-DD-YYYY,
	// schedule_id, api_key=no_limits; a top-level array of time ("YYYY-MM-DD HH:MM"), course_id,
	// course_name, schedule_id, teesheet_holes, available_spots and green_fee (null when none);
	// false for an unknown schedule. A course has no parts.
	//
	//	GET /index.php/api/booking/times?time=all&date=MM-DD-YYYY&holes=all&players=0&schedule_id=ID&specials_only=0&api_key=no_limits
	PathForeUpTimes = "/index.php/api/booking/times"
	// PathBookingTimePrefix is a club vendor's JSON times API with the date in the path, as
	// jaehyunlee25/teezzim_webview_server (script/search_core/haera.js; geojeview.js and
	// highest.js read the same vendor) reads it: a top-level array of bk_cours (the part's code:
	// A, B), bk_green_fee ("150,000"), bk_hole and bk_time (HHMM). One club a site.
	//
	//	GET /booking/time/YYYYMMDD
	PathBookingTimePrefix = "/booking/time/"
	// PathAjaxTimeList is a club's AJAX fragment as jaehyunlee25/teezzim_webview_server
	// (script/search_core/hanmir.js) reads it: a form POST mode=mobile&date=YYYYMMDD answers
	// table.tbl02 whose tbody rows carry the part only in data-coursekor, the wave (1부, 2부) in
	// their first cell and the time with spaces ("06 : 30") in their second. No price. One club a
	// site.
	//
	//	POST /Reservation/AjaxTimeList  mode=mobile&date=YYYYMMDD&changeDate=&changeSeq=&course=
	PathAjaxTimeList = "/Reservation/AjaxTimeList"
	// PathASPXTimeList is a club's ASP.NET WebForms page as jaehyunlee25/teezzim_webview_server
	// (script/search_core/hiddenvalley.js) posts to it: the form's __VIEWSTATE and
	// __EVENTVALIDATION beside Choice_Date=YYYY-MM-DD; each open tee time is an li.bt_reserved
	// whose link's arguments are the date, the part's code (11, 22, 33), the time (HHMM), the holes
	// and, ninth, the list price after the price paid (eighth); the link's spans show the part's
	// name, the time and the price paid. The simulator ignores the view state. One club a site.
	//
	//	POST /Mobile/Reservation/ReservationTimeList.aspx  __VIEWSTATE=..&__EVENTVALIDATION=..&Choice_Date=YYYY-MM-DD&...
	PathASPXTimeList = "/Mobile/Reservation/ReservationTimeList.aspx"
	// RtnCodeNotOpen is PathRtnCode's answer code for a date past the booking window.
	RtnCodeNotOpen = "9001"
	// CartFeeKRW is PathGreenCartFee's CART_FEE on every row.
	CartFeeKRW = 100000
)

// corpus2Sources are the routes of this file with an exact path.
var corpus2Sources = map[string]func(*Site, http.ResponseWriter, *http.Request, time.Time){
	PathGreenCartFee: (*Site).serveGreenCartFee,
	PathRtnCode:      (*Site).serveRtnCode,
	PathMonthTeeList: (*Site).serveMonthTeeList,
	PathZingTeeTimes: (*Site).serveZingTeeTimes,
	PathForeUpTimes:  (*Site).serveForeUpTimes,
	PathAjaxTimeList: (*Site).serveAjaxTimeList,
	PathASPXTimeList: (*Site).serveASPXTimeList,
}

func init() { addSources(corpus2Sources) }

// prefixSource is the route of a path that carries a value (PathBookingTimePrefix), or nil.
func prefixSource(path string) func(*Site, http.ResponseWriter, *http.Request, time.Time) {
	if strings.HasPrefix(path, PathBookingTimePrefix) {
		return (*Site).serveBookingTime
	}
	return nil
}

// aspxPartCodes are PathASPXTimeList's part codes, by the part's place in its course.
var aspxPartCodes = []string{"11", "22", "33", "44"}

// formDate parses a form POST and its date field key in layout; when either fails it answers
// (405, or 400 naming the field) and returns ok false.
func (s *Site) formDate(w http.ResponseWriter, r *http.Request, key, layout string) (time.Time, bool) {
	if !postForm(w, r) {
		return time.Time{}, false
	}
	date, ok := s.parseDay(r.PostForm.Get(key), layout)
	if !ok {
		http.Error(w, key+" ("+layout+") is required", http.StatusBadRequest)
	}
	return date, ok
}

func (s *Site) serveGreenCartFee(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	ci, ok := s.club(q.Get("golfId"))
	date, okDate := s.parseDay(q.Get("playDate"), "2006-01-02")
	if !ok || !okDate {
		writeJSON(w, map[string]any{"resultCode": "E0400", "resultMsg": "invalid parameter", "resultData": nil})
		return
	}
	list := []map[string]any{}
	for _, l := range s.clubRows(ci, date, now) {
		price, _ := l.StateAt(now)
		list = append(list, map[string]any{
			"PLAY_DATE": date.Format("20060102"), "TEE_TIME": s.shownTime(l, true), "COURSE_NAME": l.Part,
			"GREEN_FEE": price, "CART_FEE": CartFeeKRW, "HOLE_CNT": 18,
		})
	}
	writeJSON(w, map[string]any{"resultCode": "S0000", "resultMsg": "success",
		"resultData": map[string]any{"golfId": ClubID(ci), "playDate": date.Format("2006-01-02"), "teeList": list}})
}

func (s *Site) serveRtnCode(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	ci, ok := s.club(q.Get("clubId"))
	date, okDate := s.parseDay(q.Get("ymd"), "20060102")
	switch {
	case !ok || !okDate:
		writeJSON(w, map[string]any{"rtnCode": "9999", "rtnMsg": "잘못된 요청입니다.", "data": nil})
		return
	case s.pastWindow(date, now):
		writeJSON(w, map[string]any{"rtnCode": RtnCodeNotOpen, "rtnMsg": "예약 가능한 일자가 아닙니다.", "data": nil})
		return
	}
	list := []map[string]any{}
	for _, l := range s.clubRows(ci, date, now) {
		price, players := l.StateAt(now)
		list = append(list, map[string]any{
			"ymd": date.Format("20060102"), "teeTime": s.shownTime(l, false), "cosNm": l.Part,
			"fee": shownPrice(price), "persons": strconv.Itoa(players),
		})
	}
	writeJSON(w, map[string]any{"rtnCode": "0000", "rtnMsg": "정상 처리되었습니다.", "data": map[string]any{"list": list}})
}

func (s *Site) serveMonthTeeList(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	ci, ok := s.club(q.Get("coDiv"))
	date, okDate := s.parseDay(q.Get("selDate"), "20060102")
	switch {
	case !ok || !okDate:
		writeJSON(w, map[string]any{"resultCode": "9999", "resultMessage": "잘못된 요청입니다.", "rows": nil})
		return
	case q.Get("selYM") != date.Format("200601"):
		writeJSON(w, map[string]any{"resultCode": "9100", "resultMessage": "조회월이 올바르지 않습니다.", "rows": nil})
		return
	}
	rows := []map[string]any{}
	for _, l := range s.clubRows(ci, date, now) {
		price, players := l.StateAt(now)
		fee := ""
		if price != nil {
			fee = commas(*price)
		}
		rows = append(rows, map[string]any{
			"TEE_TIME": s.shownTime(l, true), "COS_NM": l.Part, "GREEN_FEE": fee, "PERSON": strconv.Itoa(players),
		})
	}
	writeJSON(w, map[string]any{"resultCode": "0000", "resultMessage": "", "rows": rows})
}

func (s *Site) serveZingTeeTimes(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	rows := []map[string]string{}
	ci, ok := s.club(q.Get("nid"))
	date, okDate := s.parseDay(q.Get("date"), "2006-01-02")
	if ok && okDate {
		for _, l := range s.clubRows(ci, date, now) {
			price, players := l.StateAt(now)
			rate, rack := "", ""
			if price != nil {
				rate = strconv.FormatInt(*price, 10) + ".00"
				rack = strconv.FormatInt(*corpusListPrice(l), 10) + ".00"
			}
			allowed := make([]string, players)
			for i := range allowed {
				allowed[i] = strconv.Itoa(i + 1)
			}
			cart := "0"
			if l.TeeTime < "11:00" {
				cart = "1"
			}
			points := "0"
			if price != nil {
				points = strconv.FormatInt(*price/100, 10)
			}
			t := s.shownTime(l, false)
			rows = append(rows, map[string]string{
				"courseID": ClubID(ci), "ezlinksID": strconv.Itoa(4021 + ci), "date": date.Format("2006-01-02"), "time": t + ":00",
				"available": strconv.Itoa(players), "is_eighteenholes": "1", "includes_cart": cart, "rate": rate, "rack": rack,
				"allowed_golfers": strings.Join(allowed, ","), "sponsorID": "2", "rewards_cost": points, "GolfersNote": "",
			})
		}
	}
	writeJSONAs(w, rows, "text/html; charset=UTF-8")
}

func (s *Site) serveForeUpTimes(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	ci, ok := s.club(q.Get("schedule_id"))
	if !ok {
		writeJSON(w, false)
		return
	}
	date, ok := s.parseDay(q.Get("date"), "01-02-2006")
	if !ok {
		writeJSON(w, false)
		return
	}
	slots := []map[string]any{}
	for _, l := range s.clubRows(ci, date, now) {
		price, players := l.StateAt(now)
		id, _ := strconv.Atoi(ClubID(ci))
		slots = append(slots, map[string]any{
			"time": date.Format("2006-01-02") + " " + s.shownTime(l, false), "course_id": 19766 + ci, "course_name": l.Course,
			"schedule_id": id, "teesheet_holes": 18, "available_spots": players, "green_fee": price,
		})
	}
	writeJSON(w, slots)
}

func (s *Site) serveBookingTime(w http.ResponseWriter, r *http.Request, now time.Time) {
	date, ok := s.parseDay(strings.TrimPrefix(r.URL.Path, PathBookingTimePrefix), "20060102")
	if !ok {
		http.NotFound(w, r)
		return
	}
	rows := []map[string]string{}
	for _, l := range s.clubRows(0, date, now) {
		price, _ := l.StateAt(now)
		fee := ""
		if price != nil {
			fee = commas(*price)
		}
		rows = append(rows, map[string]string{
			"bk_cours": partCode(l), "bk_green_fee": fee, "bk_hole": "18", "bk_time": s.shownTime(l, true),
		})
	}
	writeJSON(w, rows)
}

func (s *Site) serveAjaxTimeList(w http.ResponseWriter, r *http.Request, now time.Time) {
	date, ok := s.formDate(w, r, "date", "20060102")
	if !ok {
		return
	}
	var b bytes.Buffer
	b.WriteString("<table class=\"tbl02\">\n<colgroup><col width=\"20%\"><col width=\"30%\"><col width=\"20%\"><col width=\"30%\"></colgroup>\n<thead><tr><th>구분</th><th>시간</th><th>홀</th><th>예약</th></tr></thead>\n<tbody>\n")
	rows := s.clubRows(0, date, now)
	if len(rows) == 0 {
		b.WriteString("<tr><td colspan=\"4\" class=\"nodata\">예약 가능한 타임이 없습니다.</td></tr>\n")
	}
	for _, l := range rows {
		wave := "1부"
		if l.TeeTime >= "11:00" {
			wave = "2부"
		}
		t := s.shownTime(l, false)
		fmt.Fprintf(&b, "<tr data-coursekor=\"%s\" data-course=\"%s\" data-seq=\"%d\">\n\t<td>%s</td>\n\t<td> %s </td>\n\t<td>9홀</td>\n\t<td><a href=\"#\" class=\"btn_reserve\" onclick=\"return fnReserve(this);\">예약</a></td>\n</tr>\n",
			html.EscapeString(l.Part), partCode(l), 1000+pick(l.ID, 9000), wave, strings.Replace(t, ":", " : ", 1))
	}
	b.WriteString("</tbody>\n</table>\n")
	writeHTML(w, b.Bytes())
}

func (s *Site) serveASPXTimeList(w http.ResponseWriter, r *http.Request, now time.Time) {
	date, ok := s.formDate(w, r, "Choice_Date", "2006-01-02")
	if !ok {
		return
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\">\n<head><title>%s 모바일 예약</title></head>\n<body>\n"+
		"<form method=\"post\" action=\"./ReservationTimeList.aspx\" id=\"form1\">\n<div class=\"aspNetHidden\">\n"+
		"<input type=\"hidden\" name=\"__VIEWSTATE\" id=\"__VIEWSTATE\" value=\"/wEPDwUKMTY1NDU2MTA1Mg9kFgICAw9kFgICAQ8WAh4EVGV4dAUK%s\" />\n</div>\n"+
		"<input type=\"hidden\" name=\"Choice_Date\" id=\"Choice_Date\" value=\"%s\" />\n<ul class=\"time_list\">\n",
		html.EscapeString(s.cfg.Courses[0].Name), date.Format("20060102"), date.Format("2006-01-02"))
	rows := s.clubRows(0, date, now)
	if len(rows) == 0 {
		b.WriteString("<li class=\"nodata\">예약 가능한 시간이 없습니다.</li>\n")
	}
	for _, l := range rows {
		price, _ := l.StateAt(now)
		paid, list, shown := "0", "0", "전화문의"
		if price != nil {
			paid, list, shown = strconv.FormatInt(*price, 10), strconv.FormatInt(*corpusListPrice(l), 10), won(*price)
		}
		code := aspxPartCodes[l.part%len(aspxPartCodes)]
		t := s.shownTime(l, false)
		fmt.Fprintf(&b, "<li class=\"bt_reserved\"><a href=\"javascript:fnReservation('%s','%s','%s','1','N','18','0','%s','%s');\"><span class=\"course\">%s</span> <span class=\"time\">%s</span> <span class=\"hole\">18홀</span> <span class=\"fee\">%s</span></a></li>\n",
			date.Format("20060102"), code, strings.ReplaceAll(t, ":", ""), paid, list, html.EscapeString(l.Part), t, shown)
	}
	b.WriteString("</ul>\n<input type=\"hidden\" name=\"__EVENTVALIDATION\" id=\"__EVENTVALIDATION\" value=\"/wEdAAS0hWm0\" />\n</form>\n</body>\n</html>\n")
	w.Header().Set("X-AspNet-Version", "4.0.30319")
	writeHTML(w, b.Bytes())
}
