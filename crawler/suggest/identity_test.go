package suggest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// A site of one club whose rows name no club: with --name and no --target the course is that
// name (course: {value: …}); without either, the entry is partial and says to give one.
func TestOneClubCourseFromName(t *testing.T) {
	day := time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<html><body><table class="tbl"><tr><th>시간</th><th>그린피</th></tr>`)
		if r.URL.Query().Get("date") == day.Format("20060102") {
			fmt.Fprint(w, `<tr><td>06:30</td><td>130,000원</td></tr><tr><td>07:00</td><td>140,000원</td></tr>`)
		}
		fmt.Fprint(w, `</table></body></html>`)
	}))
	t.Cleanup(srv.Close)
	curl := "curl '" + srv.URL + "/tee.asp?date=" + day.Format("20060102") + "'"
	sg, _ := runSuggest(t, curl, Options{Date: day, DaysAhead: 1, Name: "레이크 CC"})
	if !sg.Complete || sg.Site.Fields["course"].Value != "레이크 CC" {
		t.Errorf("complete %v, course %+v; want course: {value: 레이크 CC}", sg.Complete, sg.Site.Fields["course"])
	}
	sg, stderr := runSuggest(t, curl, Options{Date: day, DaysAhead: 1})
	if sg.Complete || !strings.Contains(stderr, "give --name") {
		t.Errorf("without --name or --target: complete %v; want a partial entry asking for --name", sg.Complete)
	}
}

// notExactly's regex reads every text but the word.
func TestNotExactly(t *testing.T) {
	re := regexp.MustCompile(notExactly("없음"))
	for v, want := range map[string]bool{"없음": false, "": false, "동코스": true, "없": true, "없음코스": true, "A": true, "음": true} {
		if m := re.FindStringSubmatch(v); (m != nil && m[1] == v) != want {
			t.Errorf("%q: match %v, want %v", v, m, want)
		}
	}
}
