// Collect against the fixture pages of testdata: the golden listings, max_pages, the body limit
// and robots.txt.

package crawler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// fixtureServer serves the testdata pages of one list at /tee?date=20251206&page=N, plus whatever
// extra handlers a test adds.
func fixtureServer(t *testing.T, extra map[string]http.HandlerFunc) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/tee", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("date") != "20251206" {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(filepath.Join("testdata", "tee_list_p"+r.URL.Query().Get("page")+".html"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(b)
	})
	for p, h := range extra {
		mux.HandleFunc(p, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func fixtureSite(t *testing.T, srv *httptest.Server, start string) *site.Site {
	t.Helper()
	return recompiled(t, simSite(t, srv.URL, 0), func(s *site.SiteSpec) {
		s.URLTemplate, s.DaysAhead = "", 0
		s.StartURLs = []string{srv.URL + start}
		s.AllowedDomains = nil
	})
}

// TestCollectFixtureGolden parses the fixture pages (entities, nbsp, price and time notations,
// malformed rows, a row repeated across pages) and compares with testdata/tee_list.golden.
func TestCollectFixtureGolden(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t, nil)
	rec := newRecorder()
	res, err := Collect(t.Context(), fixtureSite(t, srv, "/tee?date=20251206&page=1"), t0, rec.deps(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != 2 || res.Rows != 11 || res.Rejected != 5 || len(res.Listings) != 5 || !res.Complete {
		t.Errorf("pages %d rows %d rejected %d listings %d complete %v; want 2, 11, 5, 5, complete",
			res.Pages, res.Rows, res.Rejected, len(res.Listings), res.Complete)
	}
	wantReasons := map[string]int{site.RejectBadRoundDate: 2, site.RejectBadTeeTime: 1, site.RejectMissingField: 1, site.RejectBadPrice: 1}
	if fmt.Sprint(rec.rejected) != fmt.Sprint(wantReasons) {
		t.Errorf("rejections %v, want %v", rec.rejected, wantReasons)
	}
	got, err := json.MarshalIndent(struct {
		Listings []events.Listing `json:"listings"`
		Pages    int              `json:"pages"`
		Rows     int              `json:"rows"`
		Rejected int              `json:"rejected"`
	}{res.Listings, res.Pages, res.Rows, res.Rejected}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(bytes.ReplaceAll(got, []byte(srv.URL), []byte("http://fixture")), '\n')
	testkit.Golden(t, filepath.Join("testdata", "tee_list.golden"), got)
}

func TestCollectMaxPages(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t, map[string]http.HandlerFunc{"/endless": func(w http.ResponseWriter, r *http.Request) {
		var n int
		_, _ = fmt.Sscan(r.URL.Query().Get("page"), &n)
		fmt.Fprintf(w, `<html><body><table class="tee-list"><tr class="tee-row"><td class="course">무한 CC</td>`+
			`<td class="date">12/06(토)</td><td class="time">07:%02d</td></tr></table>`+
			`<div class="paging"><a class="next" href="/endless?page=%d">다음</a></div></body></html>`, n%60, n+1)
	}})
	st := recompiled(t, fixtureSite(t, srv, "/endless?page=1"), func(s *site.SiteSpec) { s.Politeness.MaxPages = 5 })
	res, err := Collect(t.Context(), st, t0, newRecorder().deps(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Pages != 5 || !res.MaxPagesHit || res.Complete || len(res.Listings) != 5 {
		t.Errorf("pages %d max_pages_hit %v complete %v listings %d; want 5 pages, guard tripped, incomplete",
			res.Pages, res.MaxPagesHit, res.Complete, len(res.Listings))
	}
}

func TestCollectBodyTooLarge(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t, map[string]http.HandlerFunc{"/big": func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "<html><body>%s</body></html>", strings.Repeat("골프", 1000))
	}})
	st := recompiled(t, fixtureSite(t, srv, "/big"), func(s *site.SiteSpec) {
		s.StartURLs = append(s.StartURLs, srv.URL+"/tee?date=20251206&page=1")
		s.Politeness.MaxBodyBytes = 4096
	})
	res, err := Collect(t.Context(), st, t0, newRecorder().deps(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || len(res.FailedPages) != 1 || res.FailedPages[0] != srv.URL+"/big" || res.Pages != 2 {
		t.Errorf("complete %v failed %v pages %d; want /big refused and the two list pages parsed",
			res.Complete, res.FailedPages, res.Pages)
	}
}

func TestCollectRobots(t *testing.T) {
	t.Parallel()
	srv := fixtureServer(t, map[string]http.HandlerFunc{
		"/robots.txt": func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, "User-agent: *\nDisallow: /tee\n")
		},
	})
	for _, tc := range []struct {
		name     string
		ignore   bool
		complete bool
		pages    int
	}{{"Obeyed", false, false, 0}, {"OptedOut", true, true, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			st := recompiled(t, fixtureSite(t, srv, "/tee?date=20251206&page=1"), func(s *site.SiteSpec) { s.Politeness.IgnoreRobotsTxt = tc.ignore })
			res, err := Collect(t.Context(), st, t0, newRecorder().deps(t))
			if err != nil {
				t.Fatal(err)
			}
			if res.Complete != tc.complete || res.Pages != tc.pages || (!tc.ignore && len(res.FailedPages) != 1) {
				t.Errorf("complete %v pages %d failed %v; want complete %v, %d pages", res.Complete, res.Pages,
					res.FailedPages, tc.complete, tc.pages)
			}
		})
	}
}
