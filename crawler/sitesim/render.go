package sitesim

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"time"
)

const pageHead = `<!DOCTYPE html>
<html lang="ko">
<head>
<meta charset="utf-8">
<title>%s</title>
</head>
<body>
<h1>실시간 티타임 예약</h1>
<p class="now">기준 시각: %s</p>
`

// writeTabs writes the date tabs, one per shown date, marking sel (may be zero).
func (s *Site) writeTabs(b *bytes.Buffer, now, sel time.Time) {
	b.WriteString("<ul class=\"date-tabs\">\n")
	for _, d := range s.Dates(now) {
		class := "tab"
		if d.Equal(sel) {
			class = "tab on"
		}
		fmt.Fprintf(b, "<li class=\"%s\"><a href=\"/tee?date=%s&amp;page=1\">%s</a></li>\n",
			class, d.Format("20060102"), roundDate(d))
	}
	b.WriteString("</ul>\n")
}

func roundDate(d time.Time) string {
	return d.Format("01/02") + "(" + weekdayKO[d.Weekday()] + ")"
}

func (s *Site) serveIndex(w http.ResponseWriter, now time.Time) {
	var b bytes.Buffer
	fmt.Fprintf(&b, pageHead, "티타임 예약", now.In(s.cfg.Location).Format("2006-01-02 15:04"))
	s.writeTabs(&b, now, time.Time{})
	b.WriteString("<p class=\"notice\">날짜를 선택하세요. 예약 오픈: ")
	fmt.Fprintf(&b, "%d일 전 %02d:00</p>\n</body>\n</html>\n", s.cfg.DaysAhead, s.cfg.ReleaseHour)
	writeHTML(w, b.Bytes())
}

func (s *Site) serveTee(w http.ResponseWriter, r *http.Request, now time.Time) {
	q := r.URL.Query()
	date, ok := s.parseDate(q.Get("date"), now)
	if !ok {
		http.Error(w, "date must be YYYYMMDD or MMDD", http.StatusBadRequest)
		return
	}
	page := 1
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			http.Error(w, "page must be a positive integer", http.StatusBadRequest)
			return
		}
		page = n
	}
	rows := s.visibleOn(date, now)
	pages := max(1, (len(rows)+s.cfg.PageSize-1)/s.cfg.PageSize)
	if page > pages {
		http.NotFound(w, r)
		return
	}
	rows = rows[(page-1)*s.cfg.PageSize : min(len(rows), page*s.cfg.PageSize)]

	var b bytes.Buffer
	fmt.Fprintf(&b, pageHead, "티타임 예약 - "+roundDate(date), now.In(s.cfg.Location).Format("2006-01-02 15:04"))
	s.writeTabs(&b, now, date)
	b.WriteString("<table class=\"tee-list\">\n<thead><tr><th>골프장</th><th>코스</th><th>날짜</th><th>시간</th><th>그린피</th><th>인원</th></tr></thead>\n<tbody>\n")
	if len(rows) == 0 {
		b.WriteString(noTeeTimesRow("empty", 6))
	}
	for _, l := range rows {
		price, players := l.StateAt(now)
		fmt.Fprintf(&b, "<tr class=\"tee-row\" data-id=\"%s\"><td class=\"course\">%s</td><td class=\"part\">%s</td>"+
			"<td class=\"date\">%s</td><td class=\"time\">&nbsp;%s</td><td class=\"price\">%s</td><td class=\"players\">%d명</td></tr>\n",
			l.ID, html.EscapeString(l.Course), html.EscapeString(l.Part), html.EscapeString(l.RoundDate),
			html.EscapeString(l.ShownTeeTime), shownPrice(price), players)
	}
	b.WriteString("</tbody>\n</table>\n<div class=\"paging\">")
	if page > 1 {
		fmt.Fprintf(&b, "<a class=\"prev\" href=\"/tee?date=%s&amp;page=%d\">이전</a> ", date.Format("20060102"), page-1)
	}
	fmt.Fprintf(&b, "<span class=\"page\">%d / %d</span>", page, pages)
	if page < pages {
		fmt.Fprintf(&b, " <a class=\"next\" href=\"/tee?date=%s&amp;page=%d\">다음</a>", date.Format("20060102"), page+1)
	}
	b.WriteString("</div>\n</body>\n</html>\n")
	writeHTML(w, b.Bytes())
}

// shownPrice is a price as the HTML pages show it: won's format, or 전화문의 (call us) when the
// listing has none.
func shownPrice(price *int64) string {
	if price == nil {
		return "전화문의"
	}
	return won(*price)
}

// noTeeTimesRow is the table row an HTML page shows when no tee time is left: a cell of cols
// columns in a row of the page's class.
func noTeeTimesRow(class string, cols int) string {
	return fmt.Sprintf("<tr class=\"%s\"><td colspan=\"%d\">예약 가능한 시간이 없습니다.</td></tr>\n", class, cols)
}

// won formats a price the way Korean sites do: 150000 → "150,000원".
func won(p int64) string {
	s := strconv.FormatInt(p, 10)
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b) + "원"
}

func writeHTML(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body) // the client went away: nothing to do
}
