package suggest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestSuggestReadsKoreanTimesAndPrices: a club page that writes its tee times as 06시 30분 and
// its green fees as 14만5천원, which the crawler reads (ParseTeeTime, ParsePrice): the suggestion
// is complete and crawls the page into the same listings the page shows.
func TestSuggestReadsKoreanTimesAndPrices(t *testing.T) {
	day := time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul())
	times := []string{"06시 30분", "06시 30분", "07시", "07시 반", "07시 반"} // the parts share tee times (rule (a))
	prices := []string{"14만5천원", "14만5천원", "15만원", "15만 5천원", "16만원"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<html><body><table class="tbl"><tr><th>시간</th><th>코스</th><th>그린피</th><th>인원</th><th>예약</th></tr>`)
		if r.URL.Query().Get("date") == day.Format("20060102") {
			for i := range times {
				fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td><td>%s</td><td>4명</td><td><a href="#">예약</a></td></tr>`,
					times[i], []string{"동코스", "서코스"}[i%2], prices[i])
			}
		}
		b.WriteString(`</table></body></html>`)
		fmt.Fprint(w, b.String())
	}))
	t.Cleanup(srv.Close)
	curl := "curl '" + srv.URL + "/reserve/list.asp?club=101&date=" + day.Format("20060102") + "' -H 'Accept: text/html'"
	sg, _ := runSuggest(t, curl, Options{Date: day, DaysAhead: 1, Targets: []site.Target{{"id": "101", "name": "레이크 CC"}}})
	if !sg.Complete {
		t.Fatalf("partial suggestion: missing %v", sg.Missing)
	}
	res, err := crawler.Collect(t.Context(), sg.Site, day.Add(9*time.Hour), crawler.CollectDeps{Logger: testkit.Logger(t, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range res.Listings {
		got = append(got, fmt.Sprintf("%s %s %s %d", l.PlayDate, l.TeeTime, l.CoursePart, *l.PriceKRW))
	}
	want := "2026-12-05 06:30 동코스 145000,2026-12-05 06:30 서코스 145000,2026-12-05 07:00 동코스 150000," +
		"2026-12-05 07:30 동코스 160000,2026-12-05 07:30 서코스 155000"
	sort.Strings(got)
	if strings.Join(got, ",") != want || res.Rejected != 0 {
		t.Errorf("the suggestion crawls %v (%d rejected), want %s", got, res.Rejected, want)
	}
}

// TestSuggestProposesNotOpen: a club page that answers a date past its booking window with only an
// alert, and a sold-out date of the window with its table and no rows: suggest's probe finds the
// two answers differ, proposes not_open with the alert's text, and the entry reads such a date as
// not open (no failed page) and the sold-out one as sold out. When every date but the play date
// alerts alike (issue 49 item 5), the alert may say sold out too: not_open is not proposed, and
// stderr says so.
func TestSuggestProposesNotOpen(t *testing.T) {
	day := time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul())
	for _, soldOut := range []bool{true, false} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			d, _ := time.ParseInLocation("20060102", r.URL.Query().Get("date"), site.Seoul())
			if d.After(day.AddDate(0, 0, 1)) || d.After(day) && !soldOut {
				fmt.Fprint(w, `<script>alert('예약 가능한 일자가 아닙니다.');history.back();</script>`)
				return
			}
			fmt.Fprint(w, `<html><body><table class="tbl"><tr><th>시간</th><th>코스</th></tr>`)
			if d.Equal(day) {
				fmt.Fprint(w, `<tr><td>06:30</td><td>동코스</td></tr><tr><td>07:00</td><td>서코스</td></tr>`)
			}
			fmt.Fprint(w, `</table></body></html>`)
		}))
		t.Cleanup(srv.Close)
		curl := "curl '" + srv.URL + "/reserve/list.asp?club=101&date=" + day.Format("20060102") + "' -H 'Accept: text/html'"
		now := func() time.Time { return day.Add(8 * time.Hour) }
		sg, stderr := runSuggest(t, curl, Options{Date: day, DaysAhead: 2, ProbeEmpty: true, Now: now, Targets: []site.Target{{"id": "101", "name": "레이크 CC"}}})
		if !soldOut {
			if sg.Site == nil || sg.Site.NotOpen != nil || !strings.Contains(stderr, "not_open is not proposed") {
				t.Errorf("every other date alerts alike: not_open %+v; want none, and stderr saying so", sg.Site)
			}
			continue
		}
		if !sg.Complete || sg.Site.NotOpen == nil || sg.Site.NotOpen.Contains != "예약 가능한 일자가 아닙니다" || !strings.Contains(stderr, "not_open ← contains") {
			t.Fatalf("no not_open proposed: complete %v, not_open %+v", sg.Complete, sg.Site.NotOpen)
		}
		res, err := crawler.Collect(t.Context(), sg.Site, day.Add(9*time.Hour), crawler.CollectDeps{Logger: testkit.Logger(t, 0)})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Complete || len(res.FailedPages) != 0 || len(res.NotOpenSets) != 1 || len(res.Listings) != 2 {
			t.Errorf("the entry's crawl: complete %v, failed %v, not open %v, %d listings", res.Complete, res.FailedPages, res.NotOpenSets, len(res.Listings))
		}
	}
}
