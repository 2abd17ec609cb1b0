package sitesim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// The simulator's other shapes of the same booking model, one route each (see ServeSources):
//
//	GET  /api/getTeeTimeList?club=ID&roundDay=YYYY-MM-DD   aggregator JSON API
//	POST /api/v2/teetime/list  {"clubId":"ID","date":"YYYYMMDD"}   JSON API with a JSON body
//	POST /club/login  user_id=..&user_pw=..                  login form; sets the SIMSESS cookie
//	POST /club/ajax/teeList  golfResDate=YYYYMMDD&courseId=ID   login-guarded HTML fragment of rows
//	GET  /list.asp?club_code=ID&book_date=YYYYMMDD            HTML list of one club per page
//	GET  /tee_euc.asp?book_date=YYYYMMDD                     EUC-KR page declared only by <meta> (euckr.go)
//
// Where their request and answer shapes came from (public crawler code; values invented, no code
// taken): the GET API after the teescanner API as dlfmzlspdh764-svg/golf-fees-pohang-gyeongju-yeongcheon
// (refresh.py) calls it (teetime_time, course_name in HTML entities, min_cost; the parameters
// renamed); the login and its guarded AJAX list after ksh20531/pythonProject (sunVally_config.py:
// a member login, then reservation/ajax/golfTimeList answering only within the session); the club
// page after jaehyunlee25/teezzim_webview_server (script/search_core/baystars.js: a GET with
// book_date=YYYYMMDD, a table of course, time and fee). The JSON POST is the project's own.
//
// Every shape shows exactly the listings of the HTML site (/tee), from the same model and ground
// truth; only the form differs. A malformed listing shows a bad tee time in every shape, since the
// date there comes from the request, not the row.
const (
	PathAPIGet    = "/api/getTeeTimeList"
	PathAPIPost   = "/api/v2/teetime/list"
	PathLogin     = "/club/login"
	PathClubAJAX  = "/club/ajax/teeList"
	PathClubPage  = "/list.asp"
	SessionCookie = "SIMSESS"
	DefaultUser   = "golfer"
	// DevPassword is the club login's documented development password: `crawler sim` uses it
	// when SIM_CLUB_PASSWORD is unset, and compose/dev/sites.yaml names it under
	// login.dev_defaults. Not a secret; compose/app never uses it.
	DevPassword    = "sim-dev-password"
	loginPageTitle = "회원 로그인"
)

// Club is a course as the club-shaped routes address it: its id and name.
type Club struct {
	ID   string
	Name string
}

// ClubID is the id of the i-th course (0-based) on the club-shaped routes: 137, 138, ...
func ClubID(i int) string { return strconv.Itoa(137 + i) }

// Clubs returns the site's courses with their club ids.
func (s *Site) Clubs() []Club {
	out := make([]Club, len(s.cfg.Courses))
	for i, c := range s.cfg.Courses {
		out[i] = Club{ID: ClubID(i), Name: c.Name}
	}
	return out
}

func (s *Site) club(id string) (int, bool) {
	for i := range s.cfg.Courses {
		if ClubID(i) == id {
			return i, true
		}
	}
	return 0, false
}

// Logins returns how many successful logins the site has seen.
func (s *Site) Logins() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logins
}

// ExpireSessions ends every session: the next guarded request answers with the login page.
func (s *Site) ExpireSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions = map[string]int{}
}

// isSourcePath reports whether path is one of the routes of this file.
func isSourcePath(path string) bool {
	switch path {
	case PathAPIGet, PathAPIPost, PathLogin, PathClubAJAX, PathClubPage, PathEUCKRPage:
		return true
	}
	return isMoreSourcePath(path)
}

// serveSource serves the routes of this file; faults were applied by the caller (not to login).
func (s *Site) serveSource(w http.ResponseWriter, r *http.Request, now time.Time) {
	switch r.URL.Path {
	case PathAPIGet:
		s.serveAPIGet(w, r, now)
	case PathAPIPost:
		s.serveAPIPost(w, r, now)
	case PathLogin:
		s.serveLogin(w, r)
	case PathClubAJAX:
		s.serveClubAJAX(w, r, now)
	case PathClubPage:
		s.serveClubPage(w, r, now)
	case PathEUCKRPage:
		s.serveEUCKRPage(w, r, now)
	default:
		s.serveMoreSource(w, r, now)
	}
}

// clubRows returns the listings of course ci on date visible at now.
func (s *Site) clubRows(ci int, date, now time.Time) []*listing {
	var out []*listing
	for _, l := range s.visibleOn(date, now) {
		if l.course == ci {
			out = append(out, l)
		}
	}
	return out
}

func (s *Site) parseDay(v, layout string) (time.Time, bool) {
	d, err := time.ParseInLocation(layout, v, s.cfg.Location)
	return d, err == nil
}

func writeJSON(w http.ResponseWriter, v any) { writeJSONAs(w, v, "application/json; charset=utf-8") }

// writeJSONAs writes v as JSON under the Content-Type contentType (some servers label JSON as
// text/html).
func writeJSONAs(w http.ResponseWriter, v any, contentType string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // maps and strings: cannot fail
	w.Header().Set("Content-Type", contentType)
	_, _ = w.Write(b.Bytes())
}

// entities writes every non-ASCII rune and '&' as a numeric HTML entity, as some APIs do.
func entities(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r >= utf8.RuneSelf:
			fmt.Fprintf(&b, "&#%d;", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (s *Site) shownTime(l *listing, compact bool) string {
	t := l.TeeTime
	if l.ShownTeeTime != l.TeeTime || strings.HasPrefix(l.RoundDate, "13/45") {
		t = "25:99" // a malformed row, whatever the kind: the date here comes from the request
	}
	if compact {
		return strings.ReplaceAll(t, ":", "")
	}
	return t
}

func (s *Site) serveAPIGet(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	ci, ok := s.club(q.Get("club"))
	if !ok {
		writeJSON(w, map[string]any{"resultCode": "9001", "resultMessage": entities("골프장 없음"), "data": nil})
		return
	}
	date, ok := s.parseDay(q.Get("roundDay"), "2006-01-02")
	if !ok {
		writeJSON(w, map[string]any{"resultCode": "9002", "resultMessage": "bad roundDay", "data": nil})
		return
	}
	rows := s.clubRows(ci, date, now)
	if len(rows) == 0 {
		writeJSON(w, map[string]any{"resultCode": "0000", "resultMessage": "OK", "data": nil})
		return
	}
	list := make([]map[string]any, 0, len(rows))
	for i, l := range rows {
		price, players := l.StateAt(now)
		t := s.shownTime(l, false)
		if i%3 == 1 && len(t) == 5 {
			t += ":00"
		}
		var cost any
		if price != nil {
			cost = *price
			if i%2 == 1 {
				cost = strconv.FormatInt(*price, 10) // some rows send numbers as strings
			}
		}
		list = append(list, map[string]any{
			"teetime_time": t, "course_name": entities(l.Course), "course_part": entities(l.Part),
			"min_cost": cost, "round_people": players,
		})
	}
	writeJSON(w, map[string]any{"resultCode": "0000", "resultMessage": "OK",
		"data": map[string]any{"clubId": ClubID(ci), "teeTimeList": list}})
}

func (s *Site) serveAPIPost(w http.ResponseWriter, r *http.Request, now time.Time) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var req struct {
		ClubID string `json:"clubId"`
		Date   string `json:"date"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&req); err != nil {
		http.Error(w, "body must be JSON {clubId, date}", http.StatusBadRequest)
		return
	}
	ci, ok := s.club(req.ClubID)
	date, okDate := s.parseDay(req.Date, "20060102")
	if !ok || !okDate {
		writeJSON(w, map[string]any{"list": nil, "msg": "BAD_REQUEST"})
		return
	}
	rows := s.clubRows(ci, date, now)
	list := make([]map[string]any, 0, len(rows))
	for _, l := range rows {
		price, players := l.StateAt(now)
		fee := ""
		if price != nil {
			fee = strconv.FormatInt(*price, 10)
		}
		list = append(list, map[string]any{
			"bookTime": s.shownTime(l, true), "CourseName": l.Part, "greenFeeDC": fee,
			"visitorCnt": strconv.Itoa(players),
		})
	}
	msg := "OK"
	if len(list) == 0 {
		msg = "NO_DATA"
	}
	writeJSON(w, map[string]any{"list": list, "msg": msg})
}

func (s *Site) loginPage(w http.ResponseWriter, note string) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"ko\"><head><meta charset=\"utf-8\"><title>%s</title></head><body>\n", loginPageTitle)
	if note != "" {
		fmt.Fprintf(&b, "<p class=\"error\">%s</p>\n", html.EscapeString(note))
	}
	fmt.Fprintf(&b, "<form id=\"login\" method=\"post\" action=\"%s\"><input name=\"user_id\"><input type=\"password\" name=\"user_pw\"><button>로그인</button></form>\n</body></html>\n", PathLogin)
	writeHTML(w, b.Bytes())
}

func (s *Site) serveLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		s.loginPage(w, "")
		return
	}
	if err := r.ParseForm(); err != nil {
		s.loginPage(w, "아이디와 비밀번호를 입력하세요.")
		return
	}
	if r.PostForm.Get("user_id") != s.cfg.LoginUser || r.PostForm.Get("user_pw") != s.cfg.LoginPassword {
		s.loginPage(w, "아이디 또는 비밀번호가 올바르지 않습니다.")
		return
	}
	s.mu.Lock()
	s.logins++
	token := fmt.Sprintf("s%d-%d", s.cfg.Seed, s.logins)
	s.sessions[token] = s.cfg.SessionRequests
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: SessionCookie, Value: token, Path: "/", HttpOnly: true})
	writeHTML(w, []byte("<!DOCTYPE html>\n<html lang=\"ko\"><body><p class=\"welcome\">환영합니다.</p></body></html>\n"))
}

// session reports whether the request carries a live session, and counts the request against it.
func (s *Site) session(r *http.Request) bool {
	c, err := r.Cookie(SessionCookie)
	if err != nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	left, ok := s.sessions[c.Value]
	switch {
	case !ok:
		return false
	case left == 0: // no limit
		return true
	case left == 1:
		delete(s.sessions, c.Value)
		return true
	}
	s.sessions[c.Value] = left - 1
	return true
}

func (s *Site) serveClubAJAX(w http.ResponseWriter, r *http.Request, now time.Time) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if !s.session(r) {
		s.loginPage(w, "로그인이 필요합니다.")
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	ci, date, ok := s.clubDay(w, r.PostForm, "courseId", "golfResDate")
	if !ok {
		return
	}
	var b bytes.Buffer
	s.writeClubRows(&b, ci, date, now, 4, func(l *listing, price string, players int) string {
		return fmt.Sprintf("<tr class=\"slot\"><td class=\"part\">%s</td><td class=\"time\">%s</td><td class=\"fee\">%s</td><td class=\"cnt\">%d명</td></tr>\n",
			html.EscapeString(l.Part), s.shownTime(l, true), price, players)
	})
	writeHTML(w, b.Bytes())
}

// writeClubRows writes the club's tee times on date, one table row each by row (given the price
// as shown and the players at now), or the "none" row of cols columns when none is left.
func (s *Site) writeClubRows(b *bytes.Buffer, ci int, date, now time.Time, cols int, row func(l *listing, price string, players int) string) {
	rows := s.clubRows(ci, date, now)
	if len(rows) == 0 {
		b.WriteString(noTeeTimesRow("none", cols))
	}
	for _, l := range rows {
		price, players := l.StateAt(now)
		b.WriteString(row(l, shownPrice(price), players))
	}
}

// clubDay reads the club and the YYYYMMDD day of an HTML route from the values clubKey and
// dayKey of v; when either is missing or bad it answers 400 naming both and returns ok false.
func (s *Site) clubDay(w http.ResponseWriter, v url.Values, clubKey, dayKey string) (ci int, date time.Time, ok bool) {
	ci, okClub := s.club(v.Get(clubKey))
	date, okDate := s.parseDay(v.Get(dayKey), "20060102")
	if !okClub || !okDate {
		http.Error(w, clubKey+" and "+dayKey+" (YYYYMMDD) are required", http.StatusBadRequest)
		return 0, time.Time{}, false
	}
	return ci, date, true
}

func (s *Site) serveClubPage(w http.ResponseWriter, r *http.Request, now time.Time) {
	ci, date, ok := s.clubDay(w, r.URL.Query(), "club_code", "book_date")
	if !ok {
		return
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, pageHead, html.EscapeString(s.cfg.Courses[ci].Name)+" 예약", now.In(s.cfg.Location).Format("2006-01-02 15:04"))
	b.WriteString("<table id=\"resList\">\n<tr><th>코스</th><th>시간</th><th>그린피</th></tr>\n")
	s.writeClubRows(&b, ci, date, now, 3, func(l *listing, price string, _ int) string {
		return fmt.Sprintf("<tr class=\"res\"><td class=\"cos\">%s</td><td>%s</td><td>%s</td></tr>\n",
			html.EscapeString(l.Part), s.shownTime(l, false), price)
	})
	b.WriteString("</table>\n</body>\n</html>\n")
	writeHTML(w, b.Bytes())
}
