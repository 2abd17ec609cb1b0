package sitesim

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"html"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"
)

// The shapes real club servers answer that the sites language could not read before issue #48
// (fallback sources, tables read as the rendered grid, rows nested in groups, a value from an
// earlier answer). Every one shows the listings of the same model, so the simulator's ground
// truth is theirs; they are corpus shapes of crawler suggest too.
const (
	// PathGetTeeList is a real club's own booking server, re-created from its public server code
	// (values invented, no code taken): ShineKimm/podospring-jsp-version,
	// src/main/java/podo/podospring/dao/ReservationDAO.java (getTeeList answers the request's own
	// parameters, msNum included, with the rows and resultCode added),
	// src/main/resources/mappers/Reservation_SQL.xml (getTeeQuery1: BK_COS, the course code, beside
	// BK_COS_NM, its name; BK_TIME as HHMM; BK_ROUNDF; BK_B_CHARGE_NM, the list price, and
	// BK_S_CHARGE_NM, that tee time's sale price, '' when there is none; BK_CADDY) and
	// src/main/webapp/WEB-INF/views/reservation/reservation.jsp (the page shows BK_COS_NM, both
	// prices, and books at BK_S_CHARGE when it is not empty, else at BK_B_CHARGE). No player count.
	// The list price is the tee time's price at opening; a drop (the model's discount) is a sale
	// price of that one tee time. The answer codes follow issue #48's description: rtnCode "9001"
	// with 예약 가능한 일자가 아닙니다 for a date not open yet (past the window), "0000" with
	// rows: [] for a sold-out date.
	//
	//	POST /getTeeList  coDiv=ID&date=YYYYMMDD&cos=All&msNum=750010012345
	PathGetTeeList = "/getTeeList"
	// PathTimeTable is a club's HTML page of one day whose course cell spans the rows of its
	// course (<td rowspan="9">동코스</td> in each course's first row, the following rows one cell
	// shorter), cells without classes, and a booking link per row
	// <a onclick="fnReserve('YYYYMMDD','code','HHMM','fee','players')"> carrying the row's values.
	// A sold-out date shows one marker row spanning the columns. Re-created from issue #48's
	// description.
	//
	//	GET /reservation/timeTable.asp?club=ID&date=YYYYMMDD
	PathTimeTable = "/reservation/timeTable.asp"
	// PathGroupedTimes is a JSON API whose rows are nested in groups, dates → courses → times: the
	// requested date and the next one, each an object member keyed by the date (2006-01-02) whose
	// value is the courses, each with its name and its times; count is the number of the requested
	// date's tee times. Re-created from issue #48's description.
	//
	//	GET /api/v1/teetimes/grouped?clubId=ID&date=YYYY-MM-DD
	PathGroupedTimes = "/api/v1/teetimes/grouped"
	// PathCSRFForm, PathCSRFToken and PathCSRFTimes are a club whose times request needs a CSRF
	// token from an earlier answer: the form page (HTML, <input type="hidden" name="_csrf">) or
	// the token endpoint (JSON, csrfToken) starts a session (cookie CSRFCookie) and shows its
	// token; the times POST answers 403 unless it carries the session's cookie and token.
	// Re-created from issue #48's description.
	//
	//	GET  /member/reservation.php
	//	GET  /member/csrfToken.json
	//	POST /member/ajax/teeTimes.php  _csrf=TOKEN&club=ID&date=YYYYMMDD
	PathCSRFForm   = "/member/reservation.php"
	PathCSRFToken  = "/member/csrfToken.json"
	PathCSRFTimes  = "/member/ajax/teeTimes.php"
	CSRFCookie     = "CSRFSESS"
	csrfMismatched = "invalid CSRF token"
	// PathSIDMain and PathSIDList are a club that keeps its session id in its links, not in a
	// cookie: the main page's menu link carries ?sid=…, and the list of one day answers only
	// with a live sid (else an alert and a redirect to the main page), its booking links
	// carrying the sid again. Re-created from issue #48's description.
	//
	//	GET /sid/main.asp
	//	GET /sid/real_list.asp?sid=SID&club=ID&date=YYYYMMDD
	PathSIDMain = "/sid/main.asp"
	PathSIDList = "/sid/real_list.asp"
	sidExpired  = "<script>alert('세션이 만료되었습니다. 처음부터 다시 시작하세요.');location.href='/sid/main.asp';</script>"
	// MemberNumber is the logged-in member's number a golfer's copied getTeeList request carries
	// (msNum): the answer echoes it, and it is not needed.
	MemberNumber = "750010012345"
)

// getTeeListNotOpen is the message PathGetTeeList answers a date not open yet with.
const getTeeListNotOpen = "예약 가능한 일자가 아닙니다."

// inWindow reports whether date is one the site opens: today through DaysAhead days on.
func (s *Site) inWindow(date, now time.Time) bool {
	today := s.today(now)
	return !date.Before(today) && !date.After(today.AddDate(0, 0, s.cfg.DaysAhead))
}

func (s *Site) serveGetTeeList(w http.ResponseWriter, r *http.Request, now time.Time) {
	if !postForm(w, r) {
		return
	}
	answer := map[string]any{}
	for k, v := range r.PostForm {
		answer[k] = v[0] // the server answers the request's own parameters
	}
	f := r.PostForm
	answer["sDate"], answer["sCos"] = f.Get("date"), f.Get("cos")
	ci, ok := s.club(f.Get("coDiv"))
	date, okDate := s.parseDay(f.Get("date"), "20060102")
	if !ok || !okDate {
		answer["rtnCode"], answer["rtnMsg"], answer["rows"] = "9999", "잘못된 요청입니다.", []any{}
		writeJSON(w, answer)
		return
	}
	answer["monthWeek"], answer["weekDayCnt"], answer["weekEndCnt"] = weekOfYear(date), "0", "0"
	if !s.inWindow(date, now) {
		answer["rtnCode"], answer["rtnMsg"], answer["rows"] = "9001", getTeeListNotOpen, []any{}
		writeJSON(w, answer)
		return
	}
	business := "1" // 평일
	switch date.Weekday() {
	case time.Saturday:
		business = "2"
	case time.Sunday:
		business = "3"
	}
	rows := []map[string]any{}
	for _, l := range s.clubRows(ci, date, now) {
		price, _ := l.StateAt(now)
		listCode, list, saleCode, sale := "", "", "", ""
		if l.PriceKRW != nil {
			listCode, list = fmt.Sprintf("B%d", *l.PriceKRW/10000%10), commas(*l.PriceKRW)
			if price != nil && *price != *l.PriceKRW {
				saleCode, sale = fmt.Sprintf("S%d", *price/1000%10), commas(*price)
			}
		}
		rows = append(rows, map[string]any{
			"CO_DIV": ClubID(ci), "BK_DAY": date.Format("20060102"), "BK_COS": partCode(l), "BK_COS_NM": l.Part,
			"BK_TIME": s.shownTime(l, true), "BK_ROUNDF": "1", "CL_BUSINESS": business,
			"BK_B_CHARGE": listCode, "BK_B_CHARGE_NM": list, "BK_S_CHARGE": saleCode, "BK_S_CHARGE_NM": sale,
			"BK_CADDY": "캐디",
		})
	}
	answer["rtnCode"], answer["rtnMsg"], answer["rows"] = "0000", "", rows
	writeJSON(w, answer)
}

// weekOfYear is the date's ISO week, as the club's calendar counts CL_MONTH_WEEK.
func weekOfYear(d time.Time) int { _, w := d.ISOWeek(); return w }

func (s *Site) serveTimeTable(w http.ResponseWriter, r *http.Request, now time.Time) {
	ci, date, ok := s.clubDay(w, r.URL.Query(), "club", "date")
	if !ok {
		return
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, pageHead, html.EscapeString(s.cfg.Courses[ci].Name)+" 실시간 예약", now.In(s.cfg.Location).Format("2006-01-02 15:04"))
	b.WriteString("<table class=\"time_table\">\n<thead><tr><th>코스</th><th>시간</th><th>홀</th><th>그린피</th><th>인원</th><th>예약</th></tr></thead>\n<tbody>\n")
	rows := s.clubRows(ci, date, now)
	if len(rows) == 0 {
		b.WriteString("<tr><td colspan=\"6\">예약 가능한 시간이 없습니다.</td></tr>\n")
	}
	for i, l := range rows {
		price, players := l.StateAt(now)
		b.WriteString("<tr>")
		if i == 0 || rows[i-1].part != l.part {
			span := 0
			for _, o := range rows[i:] {
				if o.part != l.part {
					break
				}
				span++
			}
			fmt.Fprintf(&b, "<td rowspan=\"%d\">%s</td>", span, html.EscapeString(l.Part))
		}
		fee := ""
		if price != nil {
			fee = strconv.FormatInt(*price, 10)
		}
		fmt.Fprintf(&b, "<td>%s</td><td>18홀</td><td>%s</td><td>%d명</td>"+
			"<td><a href=\"javascript:void(0);\" onclick=\"fnReserve('%s','%s','%s','%s','%d');\">예약</a></td></tr>\n",
			s.shownTime(l, false), shownPrice(price), players, date.Format("20060102"), partCode(l), s.shownTime(l, true), fee, players)
	}
	b.WriteString("</tbody>\n</table>\n</body>\n</html>\n")
	writeHTML(w, b.Bytes())
}

func (s *Site) serveGroupedTimes(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	ci, ok := s.club(q.Get("clubId"))
	date, okDate := s.parseDay(q.Get("date"), "2006-01-02")
	if !ok || !okDate {
		writeJSON(w, map[string]any{"status": "error", "message": "clubId and date (YYYY-MM-DD) are required"})
		return
	}
	dates := map[string]any{}
	count := 0
	for i, d := range []time.Time{date, date.AddDate(0, 0, 1)} {
		if !s.inWindow(d, now) {
			continue
		}
		var courses []map[string]any
		var times []map[string]any
		rows := s.clubRows(ci, d, now)
		for j, l := range rows {
			price, players := l.StateAt(now)
			var fee any
			if price != nil {
				fee = *price
			}
			times = append(times, map[string]any{"teeTm": s.shownTime(l, false), "greenFee": fee, "player": players})
			if j == len(rows)-1 || rows[j+1].part != l.part {
				courses = append(courses, map[string]any{"courseCd": partCode(l), "courseNm": l.Part, "times": times})
				times = nil
			}
		}
		if i == 0 {
			count = len(rows)
		}
		if courses == nil {
			courses = []map[string]any{}
		}
		dates[d.Format("2006-01-02")] = courses
	}
	writeJSON(w, map[string]any{"status": "success", "clubId": ClubID(ci), "clubName": s.cfg.Courses[ci].Name,
		"count": count, "dates": dates})
}

// session ids and tokens of the capture routes (PathCSRFForm, PathSIDMain): issued ones are kept
// for the site's life, so that a test can look for them where they must not be.

// newSecret is the n-th secret of kind: 16 hex digits from the seed, the kind and n.
func (s *Site) newSecret(kind string, n int) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d|%s|%d", s.cfg.Seed, kind, n)
	return fmt.Sprintf("%016x", h.Sum64())
}

// startSession starts a session of the capture routes and returns its id and token.
func (s *Site) startSession() (sid, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tokens == nil {
		s.tokens = map[string]string{}
	}
	n := len(s.tokens)
	sid, token = s.newSecret("sid", n), s.newSecret("csrf", n)
	s.tokens[sid] = token
	return sid, token
}

// sessionToken is the token of a live session of the capture routes.
func (s *Site) sessionToken(sid string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[sid]
	return t, ok
}

// IssuedSecrets are the session ids and CSRF tokens the capture routes issued so far, sorted.
func (s *Site) IssuedSecrets() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for sid, token := range s.tokens {
		out = append(out, sid, token)
	}
	sort.Strings(out)
	return out
}

// csrfSession is the request's session of the CSRF routes, a new one (its cookie set) when it
// carries none that is live.
func (s *Site) csrfSession(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(CSRFCookie); err == nil {
		if token, ok := s.sessionToken(c.Value); ok {
			return token
		}
	}
	sid, token := s.startSession()
	http.SetCookie(w, &http.Cookie{Name: CSRFCookie, Value: sid, Path: "/", HttpOnly: true})
	return token
}

func (s *Site) serveCSRFForm(w http.ResponseWriter, r *http.Request, now time.Time) {
	token := s.csrfSession(w, r)
	var b bytes.Buffer
	fmt.Fprintf(&b, pageHead, "실시간 예약", now.In(s.cfg.Location).Format("2006-01-02 15:04"))
	fmt.Fprintf(&b, "<form id=\"rsvForm\" method=\"post\" action=\"%s\">\n<input type=\"hidden\" name=\"_csrf\" value=\"%s\">\n<select name=\"club\">\n", PathCSRFTimes, token)
	for _, c := range s.Clubs() {
		fmt.Fprintf(&b, "<option value=\"%s\">%s</option>\n", c.ID, html.EscapeString(c.Name))
	}
	b.WriteString("</select>\n<input type=\"text\" name=\"date\" placeholder=\"YYYYMMDD\">\n<button type=\"submit\">조회</button>\n</form>\n</body>\n</html>\n")
	writeHTML(w, b.Bytes())
}

func (s *Site) serveCSRFToken(w http.ResponseWriter, r *http.Request, _ time.Time) {
	writeJSON(w, map[string]any{"result": "ok", "csrfToken": s.csrfSession(w, r)})
}

func (s *Site) serveCSRFTimes(w http.ResponseWriter, r *http.Request, now time.Time) {
	if !postForm(w, r) {
		return
	}
	c, err := r.Cookie(CSRFCookie)
	token, live := "", false
	if err == nil {
		token, live = s.sessionToken(c.Value)
	}
	if !live || r.PostForm.Get("_csrf") != token {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, "{\"result\":\"error\",\"message\":%q}\n", csrfMismatched)
		return
	}
	ci, date, ok := s.clubDay(w, r.PostForm, "club", "date")
	if !ok {
		return
	}
	list := []map[string]any{}
	for _, l := range s.clubRows(ci, date, now) {
		price, players := l.StateAt(now)
		fee := ""
		if price != nil {
			fee = commas(*price)
		}
		list = append(list, map[string]any{"time": s.shownTime(l, true), "course": l.Part, "price": fee, "person": strconv.Itoa(players)})
	}
	writeJSON(w, map[string]any{"result": "ok", "date": date.Format("20060102"), "list": list})
}

func (s *Site) serveSIDMain(w http.ResponseWriter, _ *http.Request, now time.Time) {
	sid, _ := s.startSession()
	var b bytes.Buffer
	fmt.Fprintf(&b, pageHead, "골프클럽", now.In(s.cfg.Location).Format("2006-01-02 15:04"))
	fmt.Fprintf(&b, "<ul class=\"gnb\">\n<li><a class=\"menu\" href=\"%s?sid=%s&amp;menu=real\">실시간예약</a></li>\n<li><a class=\"menu\" href=\"/sid/notice.asp?sid=%s\">공지사항</a></li>\n</ul>\n</body>\n</html>\n",
		PathSIDList, sid, sid)
	writeHTML(w, b.Bytes())
}

func (s *Site) serveSIDList(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	sid := q.Get("sid")
	if _, ok := s.sessionToken(sid); !ok {
		writeHTML(w, []byte(sidExpired))
		return
	}
	ci, date, ok := s.clubDay(w, q, "club", "date")
	if !ok {
		return
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, pageHead, html.EscapeString(s.cfg.Courses[ci].Name)+" 실시간예약", now.In(s.cfg.Location).Format("2006-01-02 15:04"))
	b.WriteString("<table class=\"list\">\n<tr><th>코스</th><th>시간</th><th>그린피</th><th>인원</th><th>예약</th></tr>\n")
	rows := s.clubRows(ci, date, now)
	if len(rows) == 0 {
		b.WriteString(noTeeTimesRow("none", 5))
	}
	for _, l := range rows {
		price, players := l.StateAt(now)
		book := PathSIDList + "?" + url.Values{"sid": {sid}, "mode": {"book"}, "id": {l.ID}}.Encode()
		fmt.Fprintf(&b, "<tr class=\"slot\"><td class=\"cos\">%s</td><td class=\"time\">%s</td><td class=\"fee\">%s</td><td class=\"cnt\">%d명</td><td><a href=\"%s\">예약</a></td></tr>\n",
			html.EscapeString(l.Part), s.shownTime(l, false), shownPrice(price), players, html.EscapeString(book))
	}
	b.WriteString("</table>\n</body>\n</html>\n")
	writeHTML(w, b.Bytes())
}
