package sitesim

import (
	"bytes"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/korean"
)

// PathEUCKRPage is the classic ASP/IIS shape: every course of one date on one page, encoded in
// EUC-KR (windows-949) and declared only by <meta http-equiv="Content-Type">; the HTTP
// Content-Type is a bare text/html, as such servers send it.
//
//	GET /tee_euc.asp?book_date=YYYYMMDD
const PathEUCKRPage = "/tee_euc.asp"

const eucKRHead = `<html>
<head>
<meta http-equiv="Content-Type" content="text/html; charset=euc-kr">
<title>%s</title>
</head>
<body>
<p class="now">기준 시각: %s</p>
<table id="teeList" border="0">
`

// eucKRColumns are the columns of the EUC-KR page's table (#teeList), in order.
var eucKRColumns = []column{
	{"골프장", "club", func(_ *Site, l *listing, _ *int64, _ int) string { return html.EscapeString(l.Course) }},
	{"코스", "cos", func(_ *Site, l *listing, _ *int64, _ int) string { return html.EscapeString(l.Part) }},
	{"시간", "tm", func(s *Site, l *listing, _ *int64, _ int) string { return s.shownTime(l, false) }},
	{"그린피", "fee", func(_ *Site, _ *listing, price *int64, _ int) string { return shownPrice(price) }},
	{"인원", "cnt", func(_ *Site, _ *listing, _ *int64, players int) string { return strconv.Itoa(players) + "명" }},
}

func (s *Site) serveEUCKRPage(w http.ResponseWriter, r *http.Request, now time.Time) {
	date, ok := s.parseDay(r.URL.Query().Get("book_date"), "20060102")
	if !ok {
		http.Error(w, "book_date (YYYYMMDD) is required", http.StatusBadRequest)
		return
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, eucKRHead, "티타임 예약 "+date.Format("2006-01-02"), now.In(s.cfg.Location).Format("2006-01-02 15:04"))
	b.WriteString("<tr>")
	writeHeaders(&b, eucKRColumns)
	b.WriteString("</tr>\n")
	rows := s.visibleOn(date, now)
	if len(rows) == 0 {
		b.WriteString(noTeeTimesRow("none", len(eucKRColumns)))
	}
	for _, l := range rows {
		b.WriteString("<tr class=\"res\">")
		s.writeCells(&b, eucKRColumns, l, now)
		b.WriteString("</tr>\n")
	}
	b.WriteString("</table>\n</body>\n</html>\n")
	writeEUCKR(w, b.Bytes())
}

// writeEUCKR writes an HTML page encoded in EUC-KR under a bare text/html, as IIS serves it; a
// rune EUC-KR lacks becomes a numeric character reference, as IIS writes it.
func writeEUCKR(w http.ResponseWriter, page []byte) {
	body, err := encoding.HTMLEscapeUnsupported(korean.EUCKR.NewEncoder()).Bytes(page)
	if err != nil {
		http.Error(w, "encode: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// EUCKRSite is the sites-file entry (a list item, indented for "sites:") that reads
// PathEUCKRPage at base under name: corpus.yaml's sim-euckr (CorpusEntry), renamed. It says
// nothing about the charset: the page's <meta> does.
func EUCKRSite(name, base string) string {
	return strings.Replace(CorpusEntry("sim-euckr", base), "  - name: sim-euckr\n", "  - name: "+name+"\n", 1)
}

// TeeListSite is the sites-file entry (a list item, indented for "sites:") of a one-page tee list
// in the shipped HTML shape (table.tee-list tr.tee-row, a cell per field) at url, under name,
// with no delay, no retry and robots.txt ignored: the shape tests serve from their own handlers.
func TeeListSite(name, url string) string {
	return `  - name: ` + name + `
    start_urls: ["` + url + `"]
    row: "table.tee-list tr.tee-row"
    fields:
      course: {selector: "td.course"}
      course_part: {selector: "td.part"}
      round_date: {selector: "td.date"}
      tee_time: {selector: "td.time"}
      price: {selector: "td.price"}
      players: {selector: "td.players"}
    politeness: {no_delay: true, ignore_robots_txt: true, no_retry: true}
`
}
