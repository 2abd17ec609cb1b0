//go:build chaos

package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/jackc/pgx/v5/pgxpool"
)

// maintenancePages serves the maintenance cases: club B of an HTML list and club 138 of an
// aggregator post answer 200 with a maintenance page / SERVER_BUSY once down is set.
type maintenancePages struct{ down atomic.Bool }

func handleMaintenancePages(mux *http.ServeMux) *maintenancePages {
	m := &maintenancePages{}
	mux.HandleFunc("GET /maint", func(w http.ResponseWriter, r *http.Request) {
		club := r.URL.Query().Get("club")
		if m.down.Load() && club == "B" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<html><body><h1>시스템 점검중입니다</h1></body></html>")
			return
		}
		var rows []string
		for i := range 6 {
			rows = append(rows, row("Maintenance Club "+club, fmt.Sprintf("%02d:00", 6+i), "150,000원"))
		}
		page(w, rows, "")
	})
	mux.HandleFunc("POST /busy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		var req struct{ ClubID string }
		_ = json.NewDecoder(r.Body).Decode(&req)
		if m.down.Load() && req.ClubID == "138" {
			fmt.Fprint(w, `{"msg":"SERVER_BUSY"}`)
			return
		}
		var list []string
		for i := range 6 {
			list = append(list, fmt.Sprintf(`{"bookTime":"%02d00","CourseName":"OUT","greenFeeDC":"130000","visitorCnt":4}`, 12+i)) // after the crawl's 10:00
		}
		fmt.Fprintf(w, `{"msg":"OK","list":[%s]}`, strings.Join(list, ","))
	})
	return m
}

// crawlMaintenance crawls the maintenance sites three times, ten minutes apart: one club of two in
// maintenance (HTML) and one answering SERVER_BUSY (JSON) after the first crawl. Their pages fail,
// the crawls are incomplete, nothing closes (before, the other club's half kept the site-level
// guard quiet and the club's 6 listings closed after two crawls).
func crawlMaintenance(ctx context.Context, t *testing.T, r *crawler.Runner, down *atomic.Bool, at *time.Time) {
	t.Helper()
	for i := range 3 {
		down.Store(i > 0)
		msum, _ := r.Run(ctx)
		for _, s := range msum.Sites {
			t.Logf("crawl %d, site %s: complete=%v incomplete=%q failed_pages=%d listings=%d opened=%d closed=%d err=%v",
				i+1, s.Source, s.Complete, s.Incomplete, len(s.FailedPages), s.Listings, s.Opened, s.Closed, s.Err)
			if s.Err != nil || s.Complete != (i == 0) || len(s.FailedPages) != min(i, 1) || s.Closed != 0 {
				t.Errorf("crawl %d of %s: complete %v, failed pages %d, closed %d; want the maintenance answers failed, nothing closed",
					i+1, s.Source, s.Complete, len(s.FailedPages), s.Closed)
			}
		}
		*at = at.Add(10 * time.Minute)
	}
}

// checkMaintenanceStored: the maintenance sites' 24 openings are stored, and no close.
func checkMaintenanceStored(t *testing.T, db *pgxpool.Pool) {
	t.Helper()
	var maintClosed, maintOpened int
	if err := db.QueryRow(t.Context(), "select count(*) filter (where event_type = 'listing_closed'), count(*) filter (where event_type = 'listing_opened') "+
		"from booking_events where source in ('hostile-maintenance', 'hostile-busy')").Scan(&maintClosed, &maintOpened); err != nil {
		t.Fatal(err)
	}
	t.Logf("maintenance sites: %d opened, %d closed events stored", maintOpened, maintClosed)
	if maintClosed != 0 || maintOpened != 24 {
		t.Errorf("maintenance sites: %d opened and %d closed events stored; want 24 opened and none closed", maintOpened, maintClosed)
	}
}

// maintenanceSitesYAML renders the sites of the maintenance cases: an HTML list of two clubs'
// pages (its list, table.tee-list, derived from the row selector) and the README's
// aggregator-post shape with two clubs, declared as the README had it before it gained success
// (a sites file copied from it must not close a busy club's listings either).
func maintenanceSitesYAML(base string) string {
	maint := strings.Replace(hostileHTMLSite("hostile-maintenance", base+"/maint?club=A"), `"]`, `", "`+base+`/maint?club=B"]`, 1)
	return "sites:\n" + maint + fmt.Sprintf(`  - name: hostile-busy
    targets: [{id: 137, name: 레이크 CC}, {id: 138, name: 힐스 CC}]
    requests:
      - method: POST
        url: '%[1]s/busy'
        json: {clubId: '{{.Target.id}}', date: '{{.Date.Format "20060102"}}'}
    format: json
    json:
      rows: list
      empty_when: [{path: msg, equals: NO_DATA}, {path: list, is: empty}]
    fields:
      course: {value: '{{.Target.name}}'}
      course_part: {path: CourseName}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {path: bookTime}
      price: {path: greenFeeDC}
      players: {path: visitorCnt}
    politeness: {no_delay: true, ignore_robots_txt: true, request_timeout: 3s, retries: 1, backoff_base: 10ms, backoff_cap: 20ms}
`, base)
}
