//go:build chaos

package chaos_test

import (
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
)

// hostilePages serves the hostile pages: hostile text, invalid UTF-8, a 10 MB page, endless
// pagination and a page that never finishes (hangs counts its requests).
type hostilePages struct{ hangs atomic.Int64 }

func handleHostilePages(mux *http.ServeMux) *hostilePages {
	h := &hostilePages{}
	mux.HandleFunc("GET /robots.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "User-agent: *\nAllow: /") })
	mux.HandleFunc("GET /text", func(w http.ResponseWriter, r *http.Request) {
		var rows []string
		for i, name := range hostileNames {
			rows = append(rows, row(html.EscapeString(name), fmt.Sprintf("%02d:00", 6+i), "150,000원"))
		}
		// A raw script element inside a cell and rows that must be rejected.
		rows = append(rows,
			row(`Raw <script>document.write("x")</script> Club`, "14:00", "120,000원"),
			`<tr class="tee-row"><td class="course">Bad Date Club</td><td class="part">A</td><td class="date">02/30</td><td class="time">07:00</td><td class="price">1원</td><td class="players">4명</td></tr>`,
			row("Bad Price Club", "16:00", "'; DROP TABLE x; --"),
			row("", "17:00", "100,000원"),
		)
		page(w, rows, "")
	})
	// Invalid UTF-8 in a name: the page is undecodable and fails whole (no garbage name is stored).
	mux.HandleFunc("GET /badutf8", func(w http.ResponseWriter, r *http.Request) {
		page(w, []string{row("Good Club", "07:00", "120,000원"), row("Bad \xff\xfe UTF-8 Club", "15:00", "120,000원")}, "")
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><body><table class=\"tee-list\">")
		chunk := strings.Repeat(row("Big Club", "07:00", "100,000원"), 100)
		for written := 0; written < 10<<20; written += len(chunk) {
			if _, err := fmt.Fprint(w, chunk); err != nil {
				return
			}
		}
		fmt.Fprint(w, "</table></body></html>")
	})
	mux.HandleFunc("GET /endless", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("page"))
		page(w, []string{row("Endless Club", fmt.Sprintf("%02d:%02d", 5+n/60%14, n%60), "100,000원")},
			fmt.Sprintf("/endless?page=%d", n+1))
	})
	mux.HandleFunc("GET /hang", func(w http.ResponseWriter, r *http.Request) {
		h.hangs.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><body><table class=\"tee-list\">"+row("Hang Club", "07:00", "100,000원"))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // never finishes
	})
	return h
}

func row(course, tee, price string) string {
	return fmt.Sprintf(`<tr class="tee-row"><td class="course">%s</td><td class="part">A</td><td class="date">04/05(일)</td>`+
		`<td class="time">%s</td><td class="price">%s</td><td class="players">4명</td></tr>`, course, tee, price)
}

func page(w http.ResponseWriter, rows []string, next string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, "<html><body><table class=\"tee-list\"><tbody>\n"+strings.Join(rows, "\n")+"</tbody></table>")
	if next != "" {
		fmt.Fprintf(w, `<div class="paging"><a class="next" href="%s">next</a></div>`, next)
	}
	fmt.Fprint(w, "</body></html>")
}

// hostileSitesYAML renders the sites file: one site per hostile path, with a small max_pages guard
// and a 3 s request timeout.
func hostileSitesYAML(base string) string {
	return sitesYAML(base, [][2]string{
		{"hostile-text", "/text"}, {"hostile-big", "/big"}, {"hostile-endless", "/endless?page=1"}, {"hostile-hang", "/hang"},
		{"hostile-badutf8", "/badutf8"},
	})
}

// sitesYAML renders a sites file of one site per {name, path} reading row's table.
func sitesYAML(base string, sites [][2]string) string {
	var b strings.Builder
	b.WriteString("sites:\n")
	for _, site := range sites {
		b.WriteString(hostileHTMLSite(site[0], base+site[1]))
	}
	return b.String()
}

// hostileHTMLSite is one HTML site of the hostile sites files, crawling url.
func hostileHTMLSite(name, url string) string {
	return fmt.Sprintf(`  - name: %s
    start_urls: ["%s"]
    row: "table.tee-list tr.tee-row"
    fields:
      course: {selector: "td.course"}
      course_part: {selector: "td.part"}
      round_date: {selector: "td.date"}
      tee_time: {selector: "td.time"}
      price: {selector: "td.price"}
      players: {selector: "td.players"}
    next_page: "div.paging a.next"
    allowed_domains: ["127.0.0.1"]
    politeness: {no_delay: true, request_timeout: 3s, retries: 1, backoff_base: 10ms, backoff_cap: 20ms, max_pages: 50}
`, name, url)
}

// deadSiteYAML is a sites file with one site on a black hole at addr: a 60 s request timeout and
// robots.txt obeyed, so only its 5 s deadline can end its crawl.
func deadSiteYAML(addr string) string {
	return fmt.Sprintf(`sites:
  - name: hostile-dead
    url_template: 'http://%s/tee?date={{.Date.Format "20060102"}}'
    days_ahead: 3
    row: "table.tee-list tr.tee-row"
    fields:
      course: {selector: "td.course"}
      round_date: {selector: "td.date"}
      tee_time: {selector: "td.time"}
    politeness: {no_delay: true, request_timeout: 60s, retries: 1, backoff_base: 10ms, backoff_cap: 20ms}
    deadline: 5s
`, addr)
}
