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

// The shapes of the suggest corpus that the other source files lack, each re-created from the
// request and answer shapes of a public tee-time crawler named on its constant (values invented,
// no code taken). Every one shows the listings of the same model, so the simulator's ground truth
// is theirs.
const (
	// PathTeescanner is an aggregator's JSON GET, as dlfmzlspdh764-svg/golf-fees-pohang-gyeongju-yeongcheon
	// (refresh.py, ts_day and TTBuilder.add) reads it: golfclub_seq, roundDay=YYYY-MM-DD and an
	// empty orderType; data.teeTimeList rows with teetime_time, course_name (HTML entities),
	// min_cost (the price paid) beside min_orgin_cost (the list price), caddie_name,
	// benefit_comment, product_tag_nm, is_9h and is_4p, and the players as round_people.
	//
	//	GET /v1/booking/getTeeTimeListbyGolfclub?golfclub_seq=ID&roundDay=YYYY-MM-DD&orderType=
	PathTeescanner = "/v1/booking/getTeeTimeListbyGolfclub"
	// PathReservationController is a club's AJAX controller answering a form POST with JSON, as
	// jaehyunlee25/teezzim_webview_server (script/search_core/allday.js) calls it:
	// method=getTeeList, coDiv (the club), cos=All, part=All, date=YYYYMMDD; rows with BK_COS,
	// BK_TIME as HHMM, BK_BASIC_CHARGE (the list price) and BK_CHARGE (the price paid), both with
	// thousands commas. A sold-out date answers rows: [].
	//
	//	POST /controller/ReservationController.asp  method=getTeeList&coDiv=ID&cos=All&part=All&date=YYYYMMDD
	PathReservationController = "/controller/ReservationController.asp"
	// PathRealTimeList is a club's HTML fragment of one day's tee times for a form POST, as
	// jaehyunlee25/teezzim_webview_server (script/search_core/adelscott.js) reads it:
	// table.cm_time_list_tbl, a tbody row per tee time whose cells are a number, the course part,
	// the time, the holes, the list fee, the fee paid and a benefit; a sold-out date shows one
	// marker row.
	//
	//	POST /GolfRes/onepage/real_timelist_ajax_list.asp  golfrestype=real&courseid=ID&pointdate=YYYYMMDD&...
	PathRealTimeList = "/GolfRes/onepage/real_timelist_ajax_list.asp"
	// PathBookCalendar is a classic ASP club page, as jaehyunlee25/teezzim_webview_server
	// (script/search/island.js, mneCall and mneCallDetail) reads it: without book_date it is the
	// calendar, whose open dates are JavaScript:Date_Click('YYYY','MM','DD') links; a form POST
	// book_date=YYYYMMDD answers that day's times, whose values are only in the arguments of
	// JavaScript:Book_time('YYYYMMDD','1부','part','HHMM','fee') links (1부 the morning wave, 2부 the afternoon's). EUC-KR, declared only
	// by <meta>; a date past the booking window answers only an alert (AlertNotOpen), a sold-out
	// date the marker text. The page is of one club, the second course of the model.
	//
	//	GET  /reserve01.asp                       the calendar
	//	POST /reserve01.asp  book_date=YYYYMMDD    the times
	PathBookCalendar = "/reserve01.asp"
	// PathKoreanGrid is a club's mobile step-one page answering a form POST with div rows, as
	// jaehyunlee25/teezzim_webview_server (script/search_core/delphino.js) reads it: fRsvD=YYYYMMDD,
	// fStoreCd (the club); div.grid-content-container rows whose children are the time in Korean
	// (06시 30분), the course part and the fee in Korean units (14만5천원).
	//
	//	POST /m.rsv.selectMobileRsvStepOne.dp/dmparse.dm  fRsvD=YYYYMMDD&fJiyukCd=60&fStoreCd=ID
	PathKoreanGrid = "/m.rsv.selectMobileRsvStepOne.dp/dmparse.dm"
	// CalendarClub is the model's course that PathBookCalendar shows (레이크&힐스 CC).
	CalendarClub = 1
)

// listPriceExtra is how much the list prices of the corpus shapes (정가, min_orgin_cost,
// BK_BASIC_CHARGE) stand above a listing's opening price: a list price does not follow the
// discounts, so an entry that read it would miss every price drop.
const listPriceExtra = 30000

// corpusListPrice is the listing's list price: its opening price plus listPriceExtra (nil without one).
func corpusListPrice(l *listing) *int64 {
	if l.PriceKRW == nil {
		return nil
	}
	p := *l.PriceKRW + listPriceExtra
	return &p
}

// commas is p with thousands commas and no unit: 150000 → "150,000".
func commas(p int64) string { return strings.TrimSuffix(won(p), "원") }

// postForm parses a POST's form, answering 405 to another method and 400 to a bad body.
func postForm(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return false
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return false
	}
	return true
}

func (s *Site) serveTeescanner(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	ci, ok := s.club(q.Get("golfclub_seq"))
	date, okDate := s.parseDay(q.Get("roundDay"), "2006-01-02")
	if !ok || !okDate {
		writeJSON(w, map[string]any{"resultCode": "9999", "resultMsg": "invalid parameter", "data": nil})
		return
	}
	shift := now.Unix() / (6 * 3600)
	rows := s.clubRows(ci, date, now)
	list := make([]map[string]any, 0, len(rows))
	for i, l := range rows {
		price, players := l.StateAt(now)
		benefit, tag := "", ""
		if i%3 == 0 {
			benefit, tag = entities("카트비 포함"), "특가"
		}
		discount := "N"
		if price != nil && *price < *l.PriceKRW {
			discount = "Y"
		}
		list = append(list, map[string]any{
			"teetime_time": s.shownTime(l, false), "course_name": entities(l.Part),
			"min_cost": price, "min_orgin_cost": corpusListPrice(l), "caddie_name": caddies[(int(shift)+i)%len(caddies)],
			"benefit_comment": benefit, "product_tag_nm": tag, "discount_yn": discount,
			"is_9h": "N", "is_4p": map[bool]string{true: "Y", false: "N"}[players == 4], "round_people": players,
		})
	}
	writeJSON(w, map[string]any{"resultCode": "0000", "resultMsg": "success",
		"data": map[string]any{"golfclub_seq": ClubID(ci), "teeTimeList": list}})
}

func (s *Site) serveReservationController(w http.ResponseWriter, r *http.Request, now time.Time) {
	if !postForm(w, r) {
		return
	}
	f := r.PostForm
	ci, ok := s.club(f.Get("coDiv"))
	date, okDate := s.parseDay(f.Get("date"), "20060102")
	if f.Get("method") != "getTeeList" || !ok || !okDate {
		writeJSON(w, map[string]any{"resultCode": "-1", "resultMessage": "잘못된 요청입니다.", "rows": nil})
		return
	}
	rows := s.clubRows(ci, date, now)
	list := make([]map[string]any, 0, len(rows))
	for _, l := range rows {
		price, players := l.StateAt(now)
		basic, charge := "", ""
		if price != nil {
			basic, charge = commas(*corpusListPrice(l)), commas(*price)
		}
		list = append(list, map[string]any{
			"BK_DAY": date.Format("20060102"), "BK_COS": l.Part, "BK_TIME": s.shownTime(l, true),
			"BK_BASIC_CHARGE": basic, "BK_CHARGE": charge, "BK_PERSON": strconv.Itoa(players),
		})
	}
	writeJSON(w, map[string]any{"resultCode": "0000", "resultMessage": "", "rows": list})
}

func (s *Site) serveRealTimeList(w http.ResponseWriter, r *http.Request, now time.Time) {
	if !postForm(w, r) {
		return
	}
	ci, date, ok := s.clubDay(w, r.PostForm, "courseid", "pointdate")
	if !ok {
		return
	}
	var b bytes.Buffer
	b.WriteString("<table class=\"cm_time_list_tbl\">\n<thead><tr><th>No</th><th>코스</th><th>시간</th><th>홀</th><th>정상가</th><th>할인가</th><th>혜택</th><th>예약</th></tr></thead>\n<tbody>\n")
	rows := s.clubRows(ci, date, now)
	if len(rows) == 0 {
		b.WriteString("<tr><td colspan=\"8\" class=\"cm_no_data\">예약 가능한 시간이 없습니다.</td></tr>\n")
	}
	for i, l := range rows {
		price, players := l.StateAt(now)
		normal := "전화문의"
		if lp := corpusListPrice(l); lp != nil {
			normal = commas(*lp)
		}
		sale := "전화문의"
		if price != nil {
			sale = commas(*price)
		}
		benefit := ""
		if players < 4 {
			benefit = strconv.Itoa(players) + "인 가능"
		}
		fmt.Fprintf(&b, "<tr><td>%d</td><td>%s</td><td>%s</td><td>18홀</td><td>%s</td><td>%s</td><td>%s</td>"+
			"<td><button type=\"button\" class=\"cm_btn\" onclick=\"javascript:golfsubcmd('%s')\">예약</button></td></tr>\n",
			i+1, html.EscapeString(l.Part), s.shownTime(l, false), normal, sale, benefit, l.ID)
	}
	b.WriteString("</tbody>\n</table>\n")
	writeHTML(w, b.Bytes())
}

func (s *Site) serveBookCalendar(w http.ResponseWriter, r *http.Request, now time.Time) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	v := r.PostForm.Get("book_date")
	var b bytes.Buffer
	b.WriteString("<html>\r\n<head>\r\n<meta http-equiv=\"Content-Type\" content=\"text/html; charset=euc-kr\">\r\n")
	fmt.Fprintf(&b, "<title>%s 실시간 예약</title>\r\n</head>\r\n<body>\r\n", html.EscapeString(s.cfg.Courses[CalendarClub].Name))
	if v == "" {
		b.WriteString("<table class=\"calendar\">\r\n<tr>")
		for _, d := range s.Dates(now) {
			fmt.Fprintf(&b, "<td><a href=\"JavaScript:Date_Click('%s','%s','%s')\">%d</a></td>",
				d.Format("2006"), d.Format("01"), d.Format("02"), d.Day())
		}
		b.WriteString("</tr>\r\n</table>\r\n</body>\r\n</html>\r\n")
		writeEUCKR(w, b.Bytes())
		return
	}
	date, ok := s.parseDay(v, "20060102")
	if !ok {
		http.Error(w, "book_date (YYYYMMDD) is required", http.StatusBadRequest)
		return
	}
	if date.After(s.today(now).AddDate(0, 0, s.cfg.DaysAhead)) {
		writeEUCKR(w, []byte(AlertNotOpen))
		return
	}
	b.WriteString("<table class=\"time_list\" width=\"100%\">\r\n<tr><th>코스</th><th>예약</th></tr>\r\n")
	rows := s.clubRows(CalendarClub, date, now)
	if len(rows) == 0 {
		fmt.Fprintf(&b, "<tr><td colspan=\"2\" align=\"center\">%s</td></tr>\r\n", aspNoTeeTimes)
	}
	for _, l := range rows {
		price, _ := l.StateAt(now)
		fee := "" // 전화문의: no fee to book with
		if price != nil {
			fee = strconv.FormatInt(*price, 10)
		}
		wave := "1부"
		if l.TeeTime >= "11:00" {
			wave = "2부"
		}
		fmt.Fprintf(&b, "<tr><td><img src=\"/img/cos_%d.gif\" alt=\"\"></td><td><a href=\"JavaScript:Book_time('%s','%s','%s','%s','%s')\"><img src=\"/img/btn_res.gif\" alt=\"예약\"></a></td></tr>\r\n",
			l.part+1, date.Format("20060102"), wave, html.EscapeString(l.Part), s.shownTime(l, true), fee)
	}
	b.WriteString("</table>\r\n</body>\r\n</html>\r\n")
	writeEUCKR(w, b.Bytes())
}

func (s *Site) serveKoreanGrid(w http.ResponseWriter, r *http.Request, now time.Time) {
	if !postForm(w, r) {
		return
	}
	ci, date, ok := s.clubDay(w, r.PostForm, "fStoreCd", "fRsvD")
	if !ok {
		return
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, pageHead, html.EscapeString(s.cfg.Courses[ci].Name)+" 모바일 예약", now.In(s.cfg.Location).Format("2006-01-02 15:04"))
	b.WriteString("<div class=\"grid-wrap\">\n")
	rows := s.clubRows(ci, date, now)
	if len(rows) == 0 {
		b.WriteString("<div class=\"grid-content-container none\"><p>예약 가능한 시간이 없습니다.</p></div>\n")
	}
	for _, l := range rows {
		price, _ := l.StateAt(now)
		fee := "전화문의"
		if price != nil {
			fee = manwon(*price)
		}
		fmt.Fprintf(&b, "<div class=\"grid-content-container\"><span>%s</span><span>%s</span><span>%s</span><a href=\"#\" class=\"btn-rsv\">예약</a></div>\n",
			koreanTime(s.shownTime(l, false)), html.EscapeString(l.Part), fee)
	}
	b.WriteString("</div>\n</body>\n</html>\n")
	writeHTML(w, b.Bytes())
}

// koreanTime writes HH:MM as 06시 30분, a full hour as 07시.
func koreanTime(t string) string {
	h, m, ok := strings.Cut(t, ":")
	if !ok {
		return t
	}
	if m == "00" {
		return h + "시"
	}
	return h + "시 " + m + "분"
}

// manwon writes a price in 만 and 천: 145000 → 14만5천원, 150000 → 15만원.
func manwon(p int64) string {
	s := strconv.FormatInt(p/10000, 10) + "만"
	if k := p % 10000 / 1000; k > 0 {
		s += strconv.FormatInt(k, 10) + "천"
	}
	return s + "원"
}
