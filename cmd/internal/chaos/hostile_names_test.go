//go:build chaos

package chaos_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/text/encoding/korean"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// namePages are the hostile-pages scenario's Korean cases: an EUC-KR page
// declared only by <meta>, one sent with the alias label ms949, and a page whose course gains a
// trailing LRM after the first crawl. They are crawled three times; every name must be stored as
// a browser shows it, and the LRM must close and reopen nothing.
type namePages struct{ lrm atomic.Bool }

func handleNamePages(t *testing.T, mux *http.ServeMux) *namePages {
	n := &namePages{}
	euc := func(w http.ResponseWriter, contentType, head string, rows ...string) {
		b, err := korean.EUCKR.NewEncoder().Bytes([]byte("<html><head>" + head + "</head><body><table class=\"tee-list\"><tbody>" +
			strings.Join(rows, "\n") + "</tbody></table></body></html>"))
		if err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", contentType)
		_, _ = w.Write(b)
	}
	mux.HandleFunc("GET /euc-meta", func(w http.ResponseWriter, r *http.Request) {
		// Both at 07:00: read as UTF-8 they were one garbage name, one tee time lost.
		euc(w, "text/html", `<meta charset="euc-kr">`, row("남서울 CC", "07:00", "130,000원"), row("서서울 CC", "07:00", "130,000원"))
	})
	mux.HandleFunc("GET /euc-alias", func(w http.ResponseWriter, r *http.Request) {
		euc(w, "text/html; charset=ms949", "", row("레이크 CC", "07:00", "130,000원"), row("파인힐스 CC", "07:01", "130,000원"))
	})
	mux.HandleFunc("GET /lrm", func(w http.ResponseWriter, r *http.Request) {
		lake := "레이크 CC"
		if n.lrm.Load() {
			lake += "\u200e"
		}
		page(w, []string{row(lake, "07:00", "130,000원"), row(lake, "07:01", "130,000원"), row("힐스 CC", "07:00", "130,000원")}, "")
	})
	return n
}

// crawl runs the three crawls of the name pages, its runner given its publisher by attach.
func (n *namePages) crawl(t *testing.T, ctx context.Context, base string, attach func(*crawler.Runner), logger *slog.Logger, at time.Time) {
	sites, err := site.ParseSites([]byte(sitesYAML(base, [][2]string{
		{"hostile-euc-meta", "/euc-meta"}, {"hostile-euc-alias", "/euc-alias"}, {"hostile-lrm", "/lrm"},
	})))
	if err != nil {
		t.Fatal(err)
	}
	now := at
	r := &crawler.Runner{Sites: sites, State: crawler.StateDir{Dir: t.TempDir()}, Logger: logger,
		Now: func() time.Time { return now }}
	attach(r)
	for i := range 3 {
		n.lrm.Store(i > 0)
		sum, err := r.Run(ctx)
		if err != nil {
			t.Fatalf("name pages, crawl %d: %v", i+1, err)
		}
		for _, s := range sum.Sites {
			t.Logf("crawl %d site %s: complete=%v opened=%d changed=%d closed=%d", i+1, s.Source, s.Complete, s.Opened, s.Changed, s.Closed)
		}
		now = now.Add(10 * time.Minute)
	}
}

// check compares what PostgreSQL stored with what the pages show.
func (n *namePages) check(t *testing.T, db *pgxpool.Pool) {
	got := map[string]int{}
	rows, err := db.Query(t.Context(), `select source || ' ' || event_type || ' ' || course_name from booking_events
		where source in ('hostile-euc-meta', 'hostile-euc-alias', 'hostile-lrm')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got[s]++
	}
	want := map[string]int{
		"hostile-euc-meta listing_opened 남서울 CC": 1, "hostile-euc-meta listing_opened 서서울 CC": 1,
		"hostile-euc-alias listing_opened 레이크 CC": 1, "hostile-euc-alias listing_opened 파인힐스 CC": 1,
		"hostile-lrm listing_opened 레이크 CC": 2, "hostile-lrm listing_opened 힐스 CC": 1,
	}
	if len(got) != len(want) {
		t.Errorf("name pages stored %v, want %v", got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("name pages stored %v, want %v", got, want)
			return
		}
	}
}
