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
	b.WriteString("<table class=\"tee-list\">\n<thead><tr>")
	writeHeaders(&b, teeListColumns)
	b.WriteString("</tr></thead>\n<tbody>\n")
	if len(rows) == 0 {
		b.WriteString(noTeeTimesRow("empty", len(teeListColumns)))
	}
	for _, l := range rows {
		fmt.Fprintf(&b, "<tr class=\"tee-row\" data-id=\"%s\">", l.ID)
		s.writeCells(&b, teeListColumns, l, now)
		b.WriteString("</tr>\n")
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

// column is one column of an HTML table of tee times: its header, its cells' class and a cell's
// HTML (escaped) for a listing, given its price and players at the page's instant. A page's header,
// cells and column count are written from one list of them, so a column is one line of the list.
type column struct {
	header, class string
	value         func(s *Site, l *listing, price *int64, players int) string
}

// teeListColumns are the columns of /tee's table (table.tee-list), in order.
var teeListColumns = []column{
	{"골프장", "course", func(_ *Site, l *listing, _ *int64, _ int) string { return html.EscapeString(l.Course) }},
	{"코스", "part", func(_ *Site, l *listing, _ *int64, _ int) string { return html.EscapeString(l.Part) }},
	{"날짜", "date", func(_ *Site, l *listing, _ *int64, _ int) string { return html.EscapeString(l.RoundDate) }},
	{"시간", "time", func(_ *Site, l *listing, _ *int64, _ int) string { return "&nbsp;" + html.EscapeString(l.ShownTeeTime) }},
	{"그린피", "price", func(_ *Site, _ *listing, price *int64, _ int) string { return shownPrice(price) }},
	{"인원", "players", func(_ *Site, _ *listing, _ *int64, players int) string { return strconv.Itoa(players) + "명" }},
}

// writeHeaders writes the header cells of cols (<th>, without their row).
func writeHeaders(b *bytes.Buffer, cols []column) {
	for _, c := range cols {
		fmt.Fprintf(b, "<th>%s</th>", c.header)
	}
}

// writeCells writes the cells of cols for listing l at now (<td class=...>, without their row).
func (s *Site) writeCells(b *bytes.Buffer, cols []column, l *listing, now time.Time) {
	price, players := l.StateAt(now)
	for _, c := range cols {
		fmt.Fprintf(b, "<td class=\"%s\">%s</td>", c.class, c.value(s, l, price, players))
	}
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
