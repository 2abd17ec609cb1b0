package sitesim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Shapes of the suggest corpus re-created from the public server-side code, page templates or a
// recorded answer of real tee-time booking sites: the names, casing, value formats and page
// furniture those servers send, the listings of this package's model in them (values invented,
// no code taken). Each constant names the repository and file it came from; their routes join
// moreSources (init below), so no other file lists them.
const (
	// PathITSONETeeList is a club's getTeeList.do of the Spring/JSP booking backend several Korean
	// clubs share (rows of BK_* columns), as fnb-rnd-greenit/ROUTE52's page template
	// ROUTE52/src/main/webapp/WEB-INF/jsp/hills/reservation/reservation.jsp (first commit 04da942)
	// reads it, with js/tools.js (mAjax: a jQuery GET with cache off, so `_=<ms>`) and js/globals.js
	// (BK_PERSON_CD "01" is 3~4인, "02" 4인): resultCode "0000" and rows of BK_DAY (YYYYMMDD),
	// BK_COS (A, B, C) beside BK_COS_NM (the name the page shows), BK_TIME (HHMM), BK_ROUNDF_NM,
	// BK_PERSON_CD, BK_BASIC_CHARGE (the list price, struck through on the page when a sale applies)
	// and BK_CHARGE, "code,amount,flag": the page shows the amount (bkCharge[1]) as the price, and
	// flag M as 특가할인; the promotion and royal-time columns (PRO_DC_GU, R_GU "X" for none,
	// R_GREEN_AMT, R_CART_AMT, ...) ride along on every row. The same answer is read by
	// jaehyunlee25/teezzim_webview_server script/search_core/clubd_geochang.js. One club a site; a
	// sold-out or not-yet-open date answers rows [].
	//
	//	GET /hills/reservation/getTeeList.do?&date=YYYYMMDD[&cos=A]&_=<ms>
	PathITSONETeeList = "/hills/reservation/getTeeList.do"
	// PathMemberTimeList is a club's member booking page, after the recorded answer of a real club's
	// classic ASP server in ispope45/Script (TestDir/sejong/reservation.real_timeList.asp, an HTTP
	// capture from IIS 7.5): the calendar's form POST (txtDate=YYYY-MM-DD, the member's phone in
	// tel1..tel3) answers a page that first lists the member's own bookings (date, time, course,
	// 인터넷, the phone: rows shaped like tee times), echoes the form, then per course part a block
	// headed "LAKE 코스" whose table rows are No., TIME, HOLE and a booking button whose p.resv carries
	// date, course (the part's code, 1 2 3: the only place a row names its part), time, stat and
	// caddy (N: a no-caddie time). The header row is a row of td cells like the others. No price,
	// no players. One club a site; its parts are the codes, the headings their names.
	//
	//	POST /reservation/real_timeList.asp  txtFlag=&txtDate=YYYY-MM-DD&...&txtMode=I&tel1=..&tel2=..&tel3=..
	PathMemberTimeList = "/reservation/real_timeList.asp"
	// PathAgencyDetail is a booking agency's club page, after the JSP scriptlets of
	// perabopr/goodjob-golf (trunk/GoodJob_Golf/forGolfbooking/detailReal.jsp, with the GolfLinkDao
	// it calls): the club's name and price box (정상금액 struck through, 할인금액 a range), a 14-day
	// strip of availability images, then table#tbReserveList for the date cdate: 부킹날짜
	// (YYYY-MM-DD), 부킹시간 (HH:MM), 코스 (or <div class=red_ss>없음</div> for a club without parts),
	// 할인요금(4人기준), the price of a team of four (NH_price × 4, "520,000" 원), 홀구분, and
	// 예약가능여부: a reserveSubmit link when the tee time is open, the btn_regist_no image when it is
	// booked. A booked tee time stays on the page until it tees off.
	//
	//	GET /forGolfbooking/detail.jsp?menu=1&golf=ID&date=YYYYMMDD&cdate=YYYYMMDD
	PathAgencyDetail = "/forGolfbooking/detail.jsp"
	// PathAgencySearch is the same agency's quick search, after perabopr/goodjob-golf
	// (trunk/GoodJob_Golf/forGolfbooking/searchList.jsp): a form POST of a region and a date range
	// (YYYY-MM-DD; the JSP drops the dashes) answers every club's open tee times in the range, one
	// table row each (부킹날짜 YYYY-MM-DD, 골프장명, 부킹시간 HH:MM, 코스 or empty, a detail link), under
	// a count line, then a second table, "- 사전", of pre-booking windows ("07:00~08:00") that are no
	// tee times. No price, no players.
	//
	//	POST /forGolfbooking/searchList.jsp  ddlSearchRegion=&ddlSearchMenu=1&txtSearchStartDate=YYYY-MM-DD&txtSearchEndDate=YYYY-MM-DD
	PathAgencySearch = "/forGolfbooking/searchList.jsp"
	// PathTeeSheet is a member tee sheet as the mobile branch of a US club-software servlet writes
	// it, after uksubs66/java-v2 ("Java-v2 copy/Member_sheet.java": calDate=mm/dd/yyyy or index,
	// displayOpt All or Available, table#times with the header row Time | F/B | Players): an open
	// tee time's time is only the value of its form's submit button ("7:30 AM"), beside hidden
	// inputs echoing the date, the course and the names already in it (wasP1..wasP5); a full tee
	// time shows its time as text and no button; F/B says whether it starts on the front or the
	// back nine (the course part); the Players cell lists the members' names. No price. A date past
	// the booking window shows a notice and no table.
	//
	//	GET /v5/servlet/Member_sheet?calDate=MM/DD/YYYY&course=-ALL-&displayOpt=All
	PathTeeSheet = "/v5/servlet/Member_sheet"
	// PathOTATeeTimes is a course-management system's tee-time API for travel agencies, after the
	// Go (gin) server of cristianongan/golf (controllers/CTeeTimeOTA.go GetTeeTimeList,
	// controllers/response/BookingOTARes.go, controllers/request/RBookingOTA.go; route
	// POST /GetTeeTimesOfDay): a JSON body {Token, CourseCode, Date (YYYY-MM-DD), isMainCourse,
	// OTA_Code, Guest_Code, Hole, course, TeeType} answers result {status, infor} and data rows
	// of TeeOffStr (HH:MM), DateStr, TeeOff (ISO), Part (0, 1: the wave of the day, not the
	// course part), TimeIndex (the row number within a tee type), Tee, NumBook (places booked: 4
	// less the players), TeeType (1A, 1B, 1C: the nine it starts on, the course part), GreenFee,
	// CaddieFee and BuggyFee (the same fees on every row), Holes; the request echoed (CourseCode,
	// OTA_Code, Guest_Code, Date) and TeeTypeInfo naming each tee type. The server checks Token
	// against a hash of the agency's API key, the course and the date; the simulator takes any
	// token (a crawl could not compute one).
	//
	//	POST /ota/v1/GetTeeTimesOfDay  {"Token":"..","CourseCode":"ID","Date":"YYYY-MM-DD",...}
	PathOTATeeTimes = "/ota/v1/GetTeeTimesOfDay"
	// ITSONEPersonFour is BK_PERSON_CD for a tee time of four (globals.personCd.four); 01 is 3~4인.
	ITSONEPersonFour = "02"
)

// MemberCourseNames are the headings of PathMemberTimeList's course blocks, by part code.
var MemberCourseNames = map[string]string{"1": "LAKE", "2": "VALLEY", "3": "MOUNTAIN"}

// otaTeeNames are PathOTATeeTimes's TeeTypeInfo names, by tee type.
var otaTeeNames = map[string]string{"1A": "Lake", "1B": "Valley", "1C": "Mountain"}

// realSources are the routes of this file.
var realSources = map[string]func(*Site, http.ResponseWriter, *http.Request, time.Time){
	PathITSONETeeList:  (*Site).serveITSONETeeList,
	PathMemberTimeList: (*Site).serveMemberTimeList,
	PathAgencyDetail:   (*Site).serveAgencyDetail,
	PathAgencySearch:   (*Site).serveAgencySearch,
	PathTeeSheet:       (*Site).serveTeeSheet,
	PathOTATeeTimes:    (*Site).serveOTATeeTimes,
}

func init() { addSources(realSources) }

// addSources adds routes to moreSources, refusing a path taken already.
func addSources(routes map[string]func(*Site, http.ResponseWriter, *http.Request, time.Time)) {
	for path, serve := range routes {
		if _, dup := moreSources[path]; dup {
			panic("sitesim: route " + path + " registered twice")
		}
		moreSources[path] = serve
	}
}

// sheetRow is a tee time as a server that keeps booked tee times on the page shows it: released,
// not teed off yet, and booked or not at the instant shown.
type sheetRow struct {
	l      *listing
	booked bool
}

// daySheet is club ci's day as such a server shows it at now, in the model's page order.
func (s *Site) daySheet(ci int, date, now time.Time) []sheetRow {
	var out []sheetRow
	for _, l := range s.listingsOn(date) {
		if l.course != ci || now.Before(l.OpenedAt) || !now.Before(l.ExpiresAt) {
			continue
		}
		out = append(out, sheetRow{l: l, booked: !l.visibleAt(now)})
	}
	return out
}

// pastWindow reports whether date is after the last date the site has released.
func (s *Site) pastWindow(date, now time.Time) bool {
	return date.After(s.today(now).AddDate(0, 0, s.cfg.DaysAhead))
}

// partCode is the letter code of the listing's part: A for the first, B for the second, ...
func partCode(l *listing) string { return string(rune('A' + l.part)) }

// pick is a deterministic choice among n by key.
func pick(key string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(n))
}

func (s *Site) serveITSONETeeList(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	date, ok := s.parseDay(q.Get("date"), "20060102")
	if !ok {
		writeJSON(w, map[string]any{"resultCode": "9999", "resultMessage": "날짜를 선택하세요.", "rows": []any{}})
		return
	}
	cos := q.Get("cos")
	rows := []map[string]any{}
	for _, l := range s.clubRows(0, date, now) {
		if cos != "" && cos != partCode(l) {
			continue
		}
		price, players := l.StateAt(now)
		charge, basic := "", ""
		if price != nil {
			flag := "N"
			if *price < *l.PriceKRW {
				flag = "M"
			}
			charge = "21," + strconv.FormatInt(*price, 10) + "," + flag
			basic = strconv.FormatInt(*corpusListPrice(l), 10)
		}
		person := ITSONEPersonFour
		if players < 4 {
			person = "01"
		}
		rows = append(rows, map[string]any{
			"CO_DIV": "65", "BK_DAY": date.Format("20060102"), "BK_COS": partCode(l), "BK_COS_NM": l.Part,
			"BK_TIME": s.shownTime(l, true), "BK_ROUNDF": "1", "BK_ROUNDF_NM": "18", "BK_PERSON_CD": person,
			"BK_BASIC_CHARGE": basic, "BK_CHARGE": charge, "CL_BUSINESS": "1", "MN_COST_YN": "N",
			"PRO_DC_GU": "X", "PRO_DC_VALUE": "0", "PRO_ADV_YN": "N", "PRO_FOOD_YN": "N",
			"R_GU": "X", "R_AMT_GU": "0", "R_GREEN_AMT": "0", "R_CART_AMT": "0", "R_FOOD_AMT": "0",
			"R_ROUND_B_AMT": "0", "R_ROUND_A_AMT": "0",
		})
	}
	writeJSON(w, map[string]any{"resultCode": "0000", "resultMessage": "", "rows": rows})
}

// memberPageHead opens PathMemberTimeList's page: the site's furniture and the member's own
// bookings (two rows shaped like tee times, with the member's phone).
const memberPageHead = `<!DOCTYPE html>
<html lang="en">
<head>
	<meta charset="UTF-8">
	<meta name="viewport" content="width=device-width, initial-scale=1.0">
	<title>%s</title>
</head>
<body>
<div class="mobile-gnb"><ul class="mag-ul"><li><a href="/member/logout.asp">Log out</a></li><li><a href="/reservation/real_calendar.asp" class="reserve call-ajax">골프예약</a></li></ul></div>
<div class="subpage-content">
	<section class="subpage-content-width">
		<h1>회원예약</h1>
		<div class="location"><a href="/">HOME</a> &gt; MEMBERS &gt; 회원예약</div>
			<!-- [s]골프예약 조회/취소 -->
				<div class="reseCh">
					<table>
						<tr>
							<td class="sM-td non768">No.</td>
							<td class="sM-td">예약일자</td>
							<td class="sM-td">시간</td>
							<td class="sM-td">코스</td>
							<td class="sM-td non768">구분</td>
							<td class="sM-td non768">연락처</td>
							<td class="sM-td">위임</td>
							<td class="sM-td">변경</td>
							<td class="sM-td">취소</td>
						</tr>
`

func (s *Site) serveMemberTimeList(w http.ResponseWriter, r *http.Request, now time.Time) {
	if !postForm(w, r) {
		return
	}
	f := r.PostForm
	date, ok := s.parseDay(f.Get("txtDate"), "2006-01-02")
	if !ok {
		writeHTML(w, []byte("<script>alert('예약일자를 선택하세요.');history.back();</script>"))
		return
	}
	phone := strings.Join([]string{f.Get("tel1"), f.Get("tel2"), f.Get("tel3")}, "-")
	var b bytes.Buffer
	fmt.Fprintf(&b, memberPageHead, html.EscapeString(s.cfg.Courses[0].Name))
	for i, d := range []time.Time{date.AddDate(0, 0, 9), date.AddDate(0, 0, -5)} {
		fmt.Fprintf(&b, "\t<tr>\n\t\t<td class=\"non768\">%d</td>\n\t\t<td>%s</td>\n\t\t<td>%s</td>\n\t\t<td>Lakes</td>\n\t\t<td class=\"non768\">인터넷</td>\n\t\t<td class=\"non768\">%s</td>\n"+
			"\t\t<td><p class=\"resvEntrust\" date=\"%s\" course=\"1\" coursedesc=\"Lakes\" time=\"%s\" resvno=\"%d\" caddy=\"Y\"><a href=\"#\">위임</a></p></td>\n"+
			"\t\t<td><p class=\"resvModify\" date=\"%s\" resvno=\"%d\" penalty=\"N\" refuse=\"9\"><a href=\"#\">변경</a></p></td>\n"+
			"\t\t<td><p class=\"resvCancle\" date=\"%s\" course=\"1\" time=\"%s\" resvno=\"%d\"><a href=\"#\">취소</a></p></td>\n\t</tr>\n",
			i+1, d.Format("2006-01-02"), []string{"06:45", "06:38"}[i], html.EscapeString(phone),
			d.Format("2006-01-02"), []string{"06:45", "06:38"}[i], 2201+i, d.Format("2006-01-02"), 2201+i,
			d.Format("2006-01-02"), []string{"06:45", "06:38"}[i], 2201+i)
	}
	b.WriteString("\t\t\t\t\t</table>\n\t\t\t\t</div>\n\t\t\t<!-- [e]골프예약 조회/취소 -->\n")
	fmt.Fprintf(&b, "\t\t\t<div class=\"myReservDate\"><table><tr><td class=\"mrTd-1 mrti\">예약일자</td><td class=\"mrTd-2 mrti\">%d년 %d월 %d일</td></tr>\n", date.Year(), date.Month(), date.Day())
	b.WriteString("\t\t\t<tr><td class=\"mrTd-1\">긴급연락처</td><td class=\"mrTd-2\"><form name=\"frm1\" id=\"frm1\" method=\"POST\">\n")
	for _, k := range []string{"txtFlag", "txtDate", "txtCourse", "txtCourseDesc", "txtTime", "txtStat", "txtRsvnNo", "txtMode", "txtCaddy", "txtRemark"} {
		fmt.Fprintf(&b, "\t\t\t\t<input type=\"hidden\" name=\"%s\" id=\"%s\" value=\"%s\">\n", k, k, html.EscapeString(f.Get(k)))
	}
	fmt.Fprintf(&b, "\t\t\t\t<select name=\"tel1\" id=\"tel1\"><option value=\"%[1]s\" selected=\"selected\">%[1]s</option></select> <i>-</i>\n", html.EscapeString(f.Get("tel1")))
	fmt.Fprintf(&b, "\t\t\t\t<input type=\"text\" name=\"tel2\" id=\"tel2\" maxlength=\"4\" value=\"%s\"/> <i>-</i> <input type=\"text\" name=\"tel3\" id=\"tel3\" maxlength=\"4\" value=\"%s\"/>\n",
		html.EscapeString(f.Get("tel2")), html.EscapeString(f.Get("tel3")))
	b.WriteString("\t\t\t</form></td></tr></table></div>\n\t\t\t<div class=\"myReservDate-notice\">아래 표 안의 [예약] 버튼을 클릭하시면 예약이 진행됩니다.</div>\n\t\t\t<div class=\"myRes-tables\">\n")
	rows := s.clubRows(0, date, now)
	for _, part := range s.cfg.Courses[0].Parts {
		name := MemberCourseNames[part]
		if name == "" {
			name = part
		}
		fmt.Fprintf(&b, "\t\t\t\t<div>\n\t\t\t\t\t<h3>%s 코스</h3>\n\t\t\t\t\t<table class=\"mR-table-1\">\n\t\t\t\t\t\t<tr>\n\t\t\t\t\t\t\t<td class=\"mRtd-title\">No.</td>\n\t\t\t\t\t\t\t<td class=\"mRtd-title\">TIME</td>\n\t\t\t\t\t\t\t<td class=\"mRtd-title\">HOLE</td>\n\t\t\t\t\t\t\t<td class=\"mRtd-title mrEnd\">신청</td>\n\t\t\t\t\t\t</tr>\n",
			html.EscapeString(name))
		n := 0
		for _, l := range rows {
			if l.Part != part {
				continue
			}
			n++
			caddy := "Y"
			if l.TeeTime >= "11:30" {
				caddy = "N"
			}
			t := s.shownTime(l, false)
			fmt.Fprintf(&b, "\n\t\t\t\t\t\t\t\t\t\t<tr>\n\t\t\t\t\t\t\t\t\t\t\t<td>%d</td>\n\t\t\t\t\t\t\t\t\t\t\t<td>%s</td>\n\t\t\t\t\t\t\t\t\t\t\t<td><span class=\"font_red\">18홀</span></td>\n\t\t\t\t\t\t\t\t\t\t\t<td class=\"mrEnd\">\n"+
				"\t\t\t\t\t\t\t\t\t\t\t\t<p class=\"resv\" date=\"%s\" course=\"%s\" time=\"%s\" mode=\"I\" stat=\"RR\" caddy=\"%s\">\n\t\t\t\t\t\t\t\t\t\t\t\t<a class=\"res-open\" href=\"#\">예약</a>\n\t\t\t\t\t\t\t\t\t\t\t\t</p>\n\t\t\t\t\t\t\t\t\t\t\t</td>\n\t\t\t\t\t\t\t\t\t\t</tr>\n",
				n, t, date.Format("2006-01-02"), html.EscapeString(part), t, caddy)
		}
		b.WriteString("\t\t\t\t\t</table>\n\t\t\t\t</div>\n")
	}
	b.WriteString("\t\t\t</div>\n\t</section>\n</div>\n</body>\n</html>\n")
	w.Header().Set("Cache-Control", "no-store,private")
	w.Header().Set("X-Powered-By", "ASP.NET")
	writeHTML(w, b.Bytes())
}

func (s *Site) serveAgencyDetail(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	ci, ok := s.club(q.Get("golf"))
	if !ok {
		writeHTML(w, []byte("<script>location.href='reserve.jsp?menu=1';</script>"))
		return
	}
	date, okDate := s.parseDay(q.Get("date"), "20060102")
	cdate, okCdate := s.parseDay(q.Get("cdate"), "20060102")
	if !okDate || !okCdate {
		writeHTML(w, []byte("<script>location.href='reserve.jsp?menu=1';</script>"))
		return
	}
	c := s.cfg.Courses[ci]
	var b bytes.Buffer
	fmt.Fprintf(&b, "<TABLE border=0 cellSpacing=1 cellPadding=2 width=751 bgColor=#d2d2d2>\n<TBODY>\n<TR>\n<TD bgColor=white vAlign=top width=745 align=center>\n"+
		"<TABLE border=0 cellSpacing=0 cellPadding=0 width=\"100%%\"><TR><TD class=cc_name>%s</TD></TR>\n"+
		"<TR><TD class=normal_b height=23>홀구분</TD><TD>:</TD><TD class=orange>18홀</TD></TR>\n"+
		"<TR><TD><span class=normal_b>가격정보</span> <span class='red_ss'>(자세한 할인 금액은 아래 요일/시간 별로 확인해 주시기 바랍니다.)</span></TD></TR>\n"+
		"<TR><TD><TABLE border=0 cellSpacing=1 cellPadding=2 width=\"100%%\" bgColor=#d1d3d4>\n"+
		"<TR><TD class=normal_b bgColor=#f1f1f1 width=\"150\" align=center>구분</TD><TD class=normal_b bgColor=#f1f1f1 align=center height=20>주중</TD><TD class=normal_b bgColor=#f1f1f1 align=center>주말</TD></TR>\n"+
		"<TR><TD class=normal_s bgColor=white width=\"150\" align=center>그린피 정상금액</TD><TD class=normal_s bgColor=white align=center height=20><strike>%s</strike></TD><TD bgColor=white align=center><strike>%s</strike></TD></TR>\n"+
		"<TR><TD class=normal_s bgColor=white width=\"150\" align=center>그린피 할인금액</TD><TD class=saturday bgColor=white align=center height=20>%s ~ %s</TD><TD class=sunday bgColor=white align=center>%s ~ %s</TD></TR>\n"+
		"</TABLE></TD></TR></TABLE>\n",
		html.EscapeString(c.Name), commas(c.BasePriceKRW+40000), commas(c.BasePriceKRW*13/10+40000),
		commas(c.BasePriceKRW*8/10), commas(c.BasePriceKRW), commas(c.BasePriceKRW*13/10*8/10), commas(c.BasePriceKRW*13/10))
	b.WriteString("<TABLE border=0 cellSpacing=1 cellPadding=2 width=707 bgColor=#d1d3d4>\n<TR><TD bgColor=#f1f1f1 height=35 width=212 align=center><img src=\"../images/common/img_real_subject.gif\"></TD>\n")
	for i := range 14 {
		d := date.AddDate(0, 0, i)
		fmt.Fprintf(&b, "<TD bgColor=#f1f1f1 width=30 align=center><SPAN class=\"day\">%d/%d<BR></SPAN></TD>\n", d.Month(), d.Day())
	}
	fmt.Fprintf(&b, "</TR>\n<TR><TD style=\"PADDING-LEFT: 5px\" bgColor=white height=30><SPAN class=blue_list>%s</SPAN></TD>\n", html.EscapeString(c.Name))
	for i := range 14 {
		d := date.AddDate(0, 0, i)
		if d.Before(s.today(now)) || s.pastWindow(d, now) {
			b.WriteString("<TD bgColor=white height=30 align=center>&nbsp;</TD>\n")
			continue
		}
		fmt.Fprintf(&b, "<TD bgColor=white height=30 align=center><a href=\"/forGolfbooking/detail.jsp?menu=1&golf=%s&date=%s&cdate=%s\"><IMG border=0 src=\"../../images/booking/img_golf_pole.gif\" alt=\"예약가능\"></a></TD>\n",
			ClubID(ci), date.Format("20060102"), d.Format("20060102"))
	}
	b.WriteString("</TR>\n</TABLE>\n<TABLE id=\"tbReserveList\" border=0 cellSpacing=1 cellPadding=2 width=706 bgColor=#d1d3d4>\n<TR>\n" +
		"<TD class=normal_b bgColor=#f1f1f1 height=25 width=100 align=center>부킹날짜</TD>\n<TD class=normal_b bgColor=#f1f1f1 height=25 width=80 align=center>부킹시간</TD>\n" +
		"<TD class=normal_b bgColor=#f1f1f1 width=150 align=center>코스</TD>\n<TD class=normal_b bgColor=#f1f1f1 width=120 align=center>할인요금(4人기준)</TD>\n" +
		"<TD class=normal_b bgColor=#f1f1f1 width=90 align=center>홀구분</TD>\n<TD class=normal_b bgColor=#f1f1f1 width=160 align=center>예약가능여부</TD>\n</TR>\n")
	for _, row := range s.daySheet(ci, cdate, now) {
		l := row.l
		price, _ := l.StateAt(now)
		team := "0"
		if price != nil {
			team = commas(*price * 4)
		}
		course := html.EscapeString(l.Part)
		if course == "" {
			course = "<div class=red_ss>없음</div>"
		}
		fmt.Fprintf(&b, "<TR>\n<TD bgColor=white height=25 align=center><span class=normal_s>%s</span></TD>\n<TD bgColor=white align=center><span class=normal_s>%s</span></TD>\n"+
			"<TD bgColor=white align=center>%s</TD>\n<TD bgColor=white align=center><span class=orange_s>%s</span> <span class=normal_s>원</span></TD>\n"+
			"<TD bgColor=white align=center><span class=normal_s>18홀</span></TD>\n",
			cdate.Format("2006-01-02"), s.shownTime(l, false), course, team)
		if row.booked {
			b.WriteString("<TD bgColor=white height=25 align=center><IMG border=0 align=absMiddle src=\"../../images/booking/btn_regist_no.gif\" width=112 height=20></TD>\n</TR>\n")
			continue
		}
		fmt.Fprintf(&b, "<TD bgColor=white align=center><A href=\"javascript:;\" onclick=\"reserveSubmit('%d')\"><IMG border=0 align=absMiddle src=\"../../images/booking/btn_regist_ok.gif\" width=112 height=20></A></TD>\n</TR>\n",
			100000+pick(l.ID, 900000))
	}
	b.WriteString("</TABLE>\n</TD></TR></TBODY></TABLE>\n")
	writeHTML(w, b.Bytes())
}

func (s *Site) serveAgencySearch(w http.ResponseWriter, r *http.Request, now time.Time) {
	if !postForm(w, r) {
		return
	}
	f := r.PostForm
	from, okFrom := s.parseDay(strings.ReplaceAll(f.Get("txtSearchStartDate"), "-", ""), "20060102")
	to, okTo := s.parseDay(strings.ReplaceAll(f.Get("txtSearchEndDate"), "-", ""), "20060102")
	if !okFrom || !okTo {
		writeHTML(w, []byte("<script>alert('검색 기간을 입력하세요.');history.back();</script>"))
		return
	}
	type found struct {
		l    *listing
		date time.Time
	}
	var rows []found
	for d := from; !d.After(to) && d.Before(from.AddDate(0, 0, 31)); d = d.AddDate(0, 0, 1) {
		for _, l := range s.visibleOn(d, now) {
			rows = append(rows, found{l, d})
		}
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if !rows[i].date.Equal(rows[j].date) {
			return rows[i].date.Before(rows[j].date)
		}
		return rows[i].l.course < rows[j].l.course
	})
	var b bytes.Buffer
	b.WriteString("<TABLE border=0 cellSpacing=1 cellPadding=2 width=751 bgColor=#d2d2d2><TBODY>\n<TR>\n<TD bgColor=white vAlign=top width=745 align=center>\n<TABLE border=0 cellSpacing=0 cellPadding=0 width=\"95%\">\n<TBODY>\n" +
		"<TR>\n<TD class=location height=30 width=\"95%\" align=right><A href=\"/main.jsp\">HOME</A> &gt; <SPAN class=location_b>골프장 빠른검색</SPAN></TD></TR>\n<TR>\n" +
		"<TD style=\"PADDING-LEFT: 15px; PADDING-TOP: 4px\" class=sub_title bgColor=#d1d3d4 height=33>골프장 빠른검색</TD></TR>\n<TR>\n<TD vAlign=top>\n<TABLE border=0 cellSpacing=0 cellPadding=0 width=\"100%\">\n<TBODY>\n")
	fmt.Fprintf(&b, "<TR>\n<TD style=\"PADDING-LEFT: 10px\"><SPAN class=blue>전체</SPAN> 예약가능한타임 총 검색수 : <SPAN class=orange>%d</SPAN>건</TD></TR>\n", len(rows))
	b.WriteString("<TR>\n<TD align=center>&nbsp;</TD></TR>\n<TR>\n<TD align=\"left\"><b>- 실시간</b></TD></TR>\n<TR>\n<TD align=center>\n<TABLE border=0 cellSpacing=1 cellPadding=2 width=706 bgColor=#d1d3d4>\n<TBODY>\n<TR>\n" +
		"<TD class=normal_b bgColor=#f1f1f1 height=25 width=90 align=center>부킹날짜</TD>\n<TD class=normal_b bgColor=#f1f1f1 height=25 width=253 align=center>골프장명</TD>\n" +
		"<TD class=normal_b bgColor=#f1f1f1 height=25 width=100 align=center>부킹시간</TD>\n<TD class=normal_b bgColor=#f1f1f1 height=25 width=100 align=center>코스</TD>\n" +
		"<TD class=normal_b bgColor=#f1f1f1 width=142 align=center>예약가능여부</TD></TR>\n")
	for _, row := range rows {
		fmt.Fprintf(&b, "<TR>\n<TD bgColor=white height=25 align=center>%s</TD>\n<TD bgColor=white height=25 align=center>%s</TD>\n<TD bgColor=white height=25 align=center>%s</TD>\n<TD bgColor=white height=25 align=center>%s</TD>\n"+
			"<TD bgColor=white align=center><A href=\"/forGolfbooking/detail.jsp?menu=1&golf=%s&date=%s&cdate=%s\"><IMG border=0 align=absMiddle src=\"../../images/booking/btn_detail.gif\" width=112 height=20></A></TD></TR>\n",
			row.date.Format("2006-01-02"), html.EscapeString(row.l.Course), s.shownTime(row.l, false), html.EscapeString(row.l.Part),
			ClubID(row.l.course), row.date.Format("20060102"), row.date.Format("20060102"))
	}
	b.WriteString("</TBODY></TABLE></TD></TR>\n<TR>\n<TD align=center>&nbsp;</TD></TR>\n<TR>\n<TD align=\"left\"><b>- 사전</b></TD></TR>\n<TR>\n<TD align=center>\n<TABLE border=0 cellSpacing=1 cellPadding=2 width=706 bgColor=#d1d3d4>\n<TBODY>\n<TR>\n" +
		"<TD class=normal_b bgColor=#f1f1f1 height=25 width=90 align=center>부킹날짜</TD>\n<TD class=normal_b bgColor=#f1f1f1 height=25 width=253 align=center>골프장명</TD>\n" +
		"<TD class=normal_b bgColor=#f1f1f1 height=25 width=100 align=center>부킹시간</TD>\n<TD class=normal_b bgColor=#f1f1f1 width=142 align=center>예약가능여부</TD></TR>\n")
	for d := from; !d.After(to) && d.Before(from.AddDate(0, 0, 31)); d = d.AddDate(0, 0, 1) {
		for ci := range min(2, len(s.cfg.Courses)) {
			fmt.Fprintf(&b, "<TR>\n<TD bgColor=white height=25 align=center>%s</TD>\n<TD bgColor=white height=25 align=center>%s</TD>\n<TD bgColor=white height=25 align=center>%02d:00~%02d:00</TD>\n"+
				"<TD bgColor=white align=center><A href=\"/forGolfbooking/detail.jsp?menu=2&golf=%s&date=%s&cdate=%s\"><IMG border=0 align=absMiddle src=\"../../images/booking/btn_detail.gif\" width=112 height=20></A></TD></TR>\n",
				d.Format("2006-01-02"), html.EscapeString(s.cfg.Courses[ci].Name), 7+ci, 8+ci, ClubID(ci), d.Format("20060102"), d.Format("20060102"))
		}
	}
	b.WriteString("</TBODY></TABLE></TD></TR>\n<TR>\n<TD align=center>&nbsp;</TD></TR></TBODY></TABLE></TD></TR></TBODY></TABLE></TD></TR></TBODY></TABLE>\n")
	writeHTML(w, b.Bytes())
}

// memberNames are the names a member tee sheet lists in taken places.
var memberNames = []string{"Kim, Minjun", "Lee, Seoyeon", "Park, Jiho", "Choi, Yuna", "Jung, Haneul", "Kang, Doyun", "Yoon, Sea", "Guest of Lim"}

// usTime is a tee time as US club software labels it: 7:30 AM, 12:02 PM.
func usTime(hhmm string) string {
	t, err := time.Parse("15:04", hhmm)
	if err != nil {
		return hhmm
	}
	return t.Format("3:04 PM")
}

func (s *Site) serveTeeSheet(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	var date time.Time
	switch {
	case q.Get("index") != "":
		n, err := strconv.Atoi(q.Get("index"))
		if err != nil || n < 0 {
			http.Error(w, "index must be a day offset", http.StatusBadRequest)
			return
		}
		date = s.today(now).AddDate(0, 0, n)
	default:
		d, ok := s.parseDay(q.Get("calDate"), "01/02/2006")
		if !ok {
			http.Error(w, "calDate (mm/dd/yyyy) or index is required", http.StatusBadRequest)
			return
		}
		date = d
	}
	display := q.Get("displayOpt")
	if display != "Available" {
		display = "All"
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html>\n<head>\n<meta name=\"viewport\" content=\"width=device-width\">\n<title>Member Tee Sheet</title>\n</head>\n<body>\n"+
		"<div class=\"header\">%s<br>Welcome, %s</div>\n<div class=\"pagetitle\">Tee Sheet for %s</div>\n"+
		"<form action=\"Member_sheet\" method=\"get\"><input type=\"hidden\" name=\"calDate\" value=\"%s\"><div><select name=\"displayOpt\" onchange=\"this.form.submit()\">\n",
		html.EscapeString(s.cfg.Courses[0].Name), html.EscapeString(memberNames[0]), date.Format("Monday, January 2"), date.Format("01/02/2006"))
	for _, o := range [][2]string{{"All", "Entire Day"}, {"Available", "Open Times Only"}} {
		sel := ""
		if o[0] == display {
			sel = " selected"
		}
		fmt.Fprintf(&b, "<option%s value=\"%s\">%s</option>\n", sel, o[0], o[1])
	}
	b.WriteString("</select>\n</div></form>\n")
	if s.pastWindow(date, now) {
		b.WriteString("<div class=\"content\"><p class=\"notice\">Tee times for this date are not available to members yet.</p></div>\n</body>\n</html>\n")
		writeHTML(w, b.Bytes())
		return
	}
	b.WriteString("<div class=\"content\">\n<table cellpadding=\"0\" cellspacing=\"1\" border=\"1\" id=\"times\">\n<tr class=\"tableheader\">\n<td><strong>Time</strong></td>\n<td><strong>F/B</strong></td>\n<td><strong>Players</strong></td>\n</tr>\n")
	rows := s.daySheet(0, date, now)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].l.ExpiresAt.Before(rows[j].l.ExpiresAt) })
	index := int(date.Sub(s.today(now)).Hours() / 24)
	for _, row := range rows {
		l := row.l
		_, players := l.StateAt(now)
		taken := 4 - players
		if row.booked {
			if display == "Available" {
				continue
			}
			taken = 4
		}
		names := make([]string, 5)
		for i := range taken {
			names[i] = memberNames[(pick(l.ID, len(memberNames))+i)%len(memberNames)]
		}
		label := usTime(s.shownTime(l, false))
		b.WriteString("<tr>\n<td>")
		if row.booked {
			b.WriteString(label)
		} else {
			b.WriteString("<form action=\"Member_slot\" method=\"post\" target=\"_top\">\n")
			for _, in := range [][2]string{{"displayOpt", display}, {"ttdata", fmt.Sprintf("%08x%08x", pick(l.ID, 1<<30), pick(l.ID+"tt", 1<<30))},
				{"date", date.Format("20060102")}, {"day", date.Format("Monday")}, {"index", strconv.Itoa(index)}, {"course", ""},
				{"returnCourse", ""}, {"jump", "0"}, {"wasP1", names[0]}, {"wasP2", names[1]}, {"wasP3", names[2]}, {"wasP4", names[3]},
				{"wasP5", names[4]}, {"p5", "No"}} {
				fmt.Fprintf(&b, "<input type=\"hidden\" name=\"%s\" value=\"%s\">\n", in[0], html.EscapeString(in[1]))
			}
			fmt.Fprintf(&b, "<input type=\"submit\" value=\"%s\">\n<input type=\"hidden\" name=\"contimes\" value=\"1\">\n</form>\n", label)
		}
		fmt.Fprintf(&b, "</td>\n<td>\n%s\n</td>\n<td style=\"background-color:#F5F5DC\">\n", html.EscapeString(l.Part))
		if taken == 0 {
			b.WriteString("&nbsp\n")
		} else {
			esc := make([]string, taken)
			for i := range taken {
				esc[i] = html.EscapeString(names[i])
			}
			b.WriteString(strings.Join(esc, "<BR>") + "\n")
		}
		b.WriteString("</td>\n</tr>\n")
	}
	b.WriteString("</table>\n</div>\n<div><p>&nbsp;</p><p>&nbsp;</p></div>\n</body>\n</html>\n")
	writeHTML(w, b.Bytes())
}

// otaRequest is PathOTATeeTimes's body (request.GetTeeTimeOTAList of the source).
type otaRequest struct {
	Token        string `json:"Token"`
	CourseCode   string `json:"CourseCode"`
	Date         string `json:"Date"`
	IsMainCourse bool   `json:"isMainCourse"`
	OTACode      string `json:"OTA_Code"`
	GuestCode    string `json:"Guest_Code"`
	Hole         int    `json:"Hole"`
	Course       string `json:"course"`
	TeeType      string `json:"TeeType"`
}

func (s *Site) serveOTATeeTimes(w http.ResponseWriter, r *http.Request, now time.Time) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var req otaRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
		writeJSON(w, map[string]any{"message": err.Error(), "status": http.StatusBadRequest})
		return
	}
	answer := map[string]any{
		"result": map[string]any{"status": 200, "infor": ""}, "data": nil, "isMainCourse": req.IsMainCourse, "Token": nil,
		"TeeTypeInfo": nil, "CourseCode": req.CourseCode, "OTA_Code": req.OTACode, "Guest_Code": req.GuestCode,
		"Date": req.Date, "GolfPriceRate": "", "NumTeeTime": 0,
	}
	ci, ok := s.club(req.CourseCode)
	date, okDate := s.parseDay(req.Date, "2006-01-02")
	if !ok || !okDate {
		answer["result"] = map[string]any{"status": 500, "infor": "Course Code not found"}
		writeJSON(w, answer)
		return
	}
	hole := req.Hole
	if hole == 0 {
		hole = 18
	}
	data := []map[string]any{}
	index := map[string]int{}
	for _, l := range s.clubRows(ci, date, now) {
		if req.TeeType != "" && req.TeeType != l.Part {
			continue
		}
		price, players := l.StateAt(now)
		var fee int64
		if price != nil {
			fee = *price
		}
		wave := 0
		if l.TeeTime >= "11:00" {
			wave = 1
		}
		index[l.Part]++
		t := s.shownTime(l, false)
		data = append(data, map[string]any{
			"TeeOffStr": t, "DateStr": req.Date, "TeeOff": req.Date + "T" + t + ":00", "Part": wave, "TimeIndex": index[l.Part],
			"Tee": 1, "NumBook": 4 - players, "isMainCourse": req.IsMainCourse, "TeeType": l.Part,
			"GreenFee": fee, "CaddieFee": 150000, "BuggyFee": 100000, "Holes": hole,
		})
	}
	var types []map[string]any
	for _, p := range s.cfg.Courses[ci].Parts {
		types = append(types, map[string]any{"TeeType": p, "Name": otaTeeNames[p], "ImageLink": "", "Note": ""})
	}
	answer["data"], answer["TeeTypeInfo"], answer["NumTeeTime"] = data, types, len(data)
	answer["result"] = map[string]any{"status": 200, "infor": fmt.Sprintf("Get data OK(%d tee time)-at %s", len(data), req.Date)}
	writeJSON(w, answer)
}
