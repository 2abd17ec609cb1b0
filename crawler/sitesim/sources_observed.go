package sitesim

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"time"
)

// Shapes of the same model observed in public tee-time crawlers of Korean club sites (their
// request and answer shapes; no code taken from them). The old ASP page is after
// yeonjae0901/bearcreek (bearcreek_checker.py: the club's Reservation.aspx table, whose rows' td
// cells are course, time and fee without classes); the MM/DD JSON is the project's own.
//
//	GET /Reservation/TeeList.asp?gc=ID&ymd=YYYY.MM.DD   an old ASP page of one club in EUC-KR, declared
//	                                                    only by its <meta>, rows without classes (every
//	                                                    club on one page is euckr.go's)
//	GET /api/teeTimes.json?ccNo=ID&playDate=YYYYMMDD     JSON rows with year-less MM/DD dates
const (
	PathASP       = "/Reservation/TeeList.asp"
	PathJSONMMDD  = "/api/teeTimes.json"
	aspNoTeeTimes = "예약 가능한 시간이 없습니다."
	// AlertNotOpen is what PathASP answers for a date past the booking window (Config.AlertPastWindow).
	AlertNotOpen = "<script>alert('예약 가능한 일자가 아닙니다.');history.back();</script>"
)

// PathJSONCaddie is a JSON API whose rows name each tee time's caddie (after the teescanner rows
// as dlfmzlspdh764-svg/golf-fees-pohang-gyeongju-yeongcheon, refresh.py, reads them: caddie_name
// per row; values invented): the caddie
// assigned to a tee time changes every six hours, so a crawler that took it for the course part
// would close and reopen the tee time with each change. A club without parts sends courseNm "".
//
//	GET /api/caddie/teeList.json?ccId=ID&ymd=YYYYMMDD
const PathJSONCaddie = "/api/caddie/teeList.json"

// caddies are the caddie names PathJSONCaddie rows carry.
var caddies = []string{"김민지 캐디", "이서연 캐디", "박지훈 캐디", "최유나 캐디", "정하늘 캐디", "강도윤 캐디", "윤세아 캐디", "임태양 캐디", "한별 캐디"}

// moreSources are the routes of the shapes beyond sources.go's: the observed ones here, the
// corpus's (sources_corpus.go), the list-and-sale-price ones (sources_prices.go) and those of the
// sites language (sources_lang.go).
var moreSources = map[string]func(*Site, http.ResponseWriter, *http.Request, time.Time){
	PathASP:                   (*Site).serveASP,
	PathJSONMMDD:              (*Site).serveJSONMMDD,
	PathJSONCaddie:            (*Site).serveJSONCaddie,
	PathTeescanner:            (*Site).serveTeescanner,
	PathReservationController: (*Site).serveReservationController,
	PathRealTimeList:          (*Site).serveRealTimeList,
	PathBookCalendar:          (*Site).serveBookCalendar,
	PathKoreanGrid:            (*Site).serveKoreanGrid,
	PathPricesHTML:            (*Site).servePricesHTML,
	PathPricesJSON:            (*Site).servePricesJSON,
	PathGetTeeList:            (*Site).serveGetTeeList,
	PathTimeTable:             (*Site).serveTimeTable,
	PathGroupedTimes:          (*Site).serveGroupedTimes,
	PathCSRFForm:              (*Site).serveCSRFForm,
	PathCSRFToken:             (*Site).serveCSRFToken,
	PathCSRFTimes:             (*Site).serveCSRFTimes,
	PathSIDMain:               (*Site).serveSIDMain,
	PathSIDList:               (*Site).serveSIDList,
}

func isMoreSourcePath(path string) bool {
	_, ok := moreSources[path]
	return ok || prefixSource(path) != nil
}

func (s *Site) serveMoreSource(w http.ResponseWriter, r *http.Request, now time.Time) {
	if serve, ok := moreSources[r.URL.Path]; ok {
		serve(s, w, r, now)
		return
	}
	prefixSource(r.URL.Path)(s, w, r, now)
}

// serveASP writes one club's day as an EUC-KR table without classes on its rows.
func (s *Site) serveASP(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	ci, ok := s.club(q.Get("gc"))
	date, okDate := s.parseDay(q.Get("ymd"), "2006.01.02")
	if !ok || !okDate {
		http.Error(w, "gc and ymd (YYYY.MM.DD) are required", http.StatusBadRequest)
		return
	}
	if s.cfg.AlertPastWindow && date.After(s.today(now).AddDate(0, 0, s.cfg.DaysAhead)) {
		writeEUCKR(w, []byte(AlertNotOpen))
		return
	}
	var b bytes.Buffer
	b.WriteString("<html>\r\n<head>\r\n<meta http-equiv=\"Content-Type\" content=\"text/html; charset=euc-kr\">\r\n")
	fmt.Fprintf(&b, "<title>%s 실시간예약</title>\r\n</head>\r\n<body>\r\n<table class=\"tbl_list\" width=\"100%%\">\r\n", html.EscapeString(s.cfg.Courses[ci].Name))
	b.WriteString("<tr><th>코스</th><th>시간</th><th>그린피</th><th>인원</th><th>예약</th></tr>\r\n")
	rows := s.clubRows(ci, date, now)
	if len(rows) == 0 {
		fmt.Fprintf(&b, "<tr><td colspan=\"5\" align=\"center\">%s</td></tr>\r\n", aspNoTeeTimes)
	}
	for _, l := range rows {
		price, players := l.StateAt(now)
		fmt.Fprintf(&b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%d명</td><td><a href=\"javascript:goRes('%s')\">예약</a></td></tr>\r\n",
			html.EscapeString(l.Part), s.shownTime(l, false), shownPrice(price), players, l.ID)
	}
	b.WriteString("</table>\r\n</body>\r\n</html>\r\n")
	writeEUCKR(w, b.Bytes())
}

// serveJSONMMDD answers a club's day as JSON whose rows carry the play date as MM/DD.
func (s *Site) serveJSONMMDD(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	ci, ok := s.club(q.Get("ccNo"))
	date, okDate := s.parseDay(q.Get("playDate"), "20060102")
	if !ok || !okDate {
		writeJSON(w, map[string]any{"rtnCode": "99", "rtnMsg": "invalid parameter", "resultList": nil})
		return
	}
	rows := s.clubRows(ci, date, now)
	list := make([]map[string]any, 0, len(rows))
	for _, l := range rows {
		price, players := l.StateAt(now)
		fee := ""
		if price != nil {
			fee = won(*price)
			fee = fee[:len(fee)-len("원")]
		}
		list = append(list, map[string]any{
			"playDay": date.Format("01/02"), "teeTm": s.shownTime(l, false), "courseNm": l.Part,
			"greenFee": fee, "playerCnt": strconv.Itoa(players),
		})
	}
	msg := "success"
	if len(list) == 0 {
		msg = "no data"
	}
	writeJSON(w, map[string]any{"rtnCode": "00", "rtnMsg": msg, "resultCnt": len(list), "resultList": list})
}

// serveJSONCaddie answers a club's day as JSON rows that carry the tee time's caddie.
func (s *Site) serveJSONCaddie(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	ci, ok := s.club(q.Get("ccId"))
	date, okDate := s.parseDay(q.Get("ymd"), "20060102")
	if !ok || !okDate {
		writeJSON(w, map[string]any{"resultCode": "E01", "data": nil})
		return
	}
	shift := now.Unix() / (6 * 3600)
	rows := s.clubRows(ci, date, now)
	list := make([]map[string]any, 0, len(rows))
	for i, l := range rows {
		price, players := l.StateAt(now)
		fee := ""
		if price != nil {
			fee = strconv.FormatInt(*price, 10)
		}
		list = append(list, map[string]any{
			"teeTime": s.shownTime(l, false), "courseNm": l.Part, "caddie_name": caddies[(int(shift)+i)%len(caddies)],
			"greenFee": fee, "playerCnt": players,
		})
	}
	writeJSON(w, map[string]any{"resultCode": "0000", "data": list})
}
