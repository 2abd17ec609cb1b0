package sitesim

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"time"
)

// Shapes that show two prices for a tee time, the list price (정가, 정상가) and the price a golfer
// pays (할인가), re-created from public tee-time crawler code of Korean club sites (request and
// answer shapes only; values invented, no code taken):
//
//	POST /reservation/list/ajax_real_timeinfo_list.do  golfResType=real&clubCd=ID&pointDate=YYYYMMDD
//	     after jaehyunlee25/teezzim_webview_server script/search/lakeside.js, which posts
//	     pointDate to that path and reads the answer's table rows: the time, the course part, the
//	     정상가 and the 할인가 in cells of their own. Here the 정상가 is struck through (<del>),
//	     and every row also shows the 집합시간 (when the group meets, shared by the tee times of
//	     one half hour) before the tee time: two time-shaped columns, only one of them the tee
//	     time.
//	GET  /booking/bookingModels.asp?requestType=get&gc=ID&chosenDate=YYYY-MM-DD
//	     after jaehyunlee25/teezzim_webview_server script/search_core/cygnus.js, which reads the
//	     JSON answer's data rows: course, time, greenfee (the list price) and onegreenfee (the
//	     price a golfer pays).
//
// The price a golfer pays is the model's price (the ground truth: its drops are the listing's
// changes); the list price is the price at opening raised by a fifth, rounded to 10,000 won, and
// stays put.
const (
	PathPricesHTML = "/reservation/list/ajax_real_timeinfo_list.do"
	PathPricesJSON = "/booking/bookingModels.asp"
)

// listPrice is the list price shown beside a listing's price: nil when it has none.
func listPrice(l *listing) *int64 {
	if l.PriceKRW == nil {
		return nil
	}
	p := (*l.PriceKRW*12/10 + 5000) / 10000 * 10000
	return &p
}

// meetTime is when the group of the tee time meets: half an hour before the half hour it is in.
func meetTime(l *listing) string {
	t, err := time.Parse("15:04", l.TeeTime)
	if err != nil {
		return l.TeeTime
	}
	return t.Truncate(30 * time.Minute).Add(-30 * time.Minute).Format("15:04")
}

func (s *Site) servePricesHTML(w http.ResponseWriter, r *http.Request, now time.Time) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	ci, date, ok := s.clubDay(w, r.PostForm, "clubCd", "pointDate")
	if !ok {
		return
	}
	var b bytes.Buffer
	b.WriteString("<table class=\"cm_time_list_tbl\">\n<thead><tr><th>집합시간</th><th>시간</th><th>코스</th><th>홀</th><th>정상가</th><th>할인가</th><th>예약</th></tr></thead>\n<tbody>\n")
	s.writeClubRows(&b, ci, date, now, 7, func(l *listing, price string, _ int) string {
		return fmt.Sprintf("<tr><td>%s</td><td>%s</td><td>%s</td><td>18홀</td><td><del>%s</del></td><td>%s</td>"+
			"<td><a href=\"javascript:timefrom_change('%s')\">예약</a></td></tr>\n",
			meetTime(l), s.shownTime(l, false), html.EscapeString(l.Part), shownPrice(listPrice(l)), price, l.ID)
	})
	b.WriteString("</tbody>\n</table>\n")
	writeHTML(w, b.Bytes())
}

func (s *Site) servePricesJSON(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	ci, ok := s.club(q.Get("gc"))
	date, okDate := s.parseDay(q.Get("chosenDate"), "2006-01-02")
	if !ok || !okDate || q.Get("requestType") != "get" {
		writeJSON(w, map[string]any{"result": "fail", "data": nil})
		return
	}
	rows := s.clubRows(ci, date, now)
	list := make([]map[string]any, 0, len(rows))
	for _, l := range rows {
		price, _ := l.StateAt(now)
		fee, list0 := "", ""
		if price != nil {
			fee = fmt.Sprint(*price)
			list0 = fmt.Sprint(*listPrice(l))
		}
		list = append(list, map[string]any{
			"course": l.Part, "time": s.shownTime(l, false), "greenfee": list0, "onegreenfee": fee,
		})
	}
	writeJSON(w, map[string]any{"result": "success", "data": list})
}
