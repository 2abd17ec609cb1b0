package crawler

import (
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// pageRow is one row of the test page of pageSite.
type pageRow struct {
	Course, Part, Date, Time string
	Price                    int64
}

// pageSite serves one page whose rows are whatever rows() returns at request time, and returns a
// site that crawls it (no politeness delays, no retries).
func pageSite(t testing.TB, name string, rows func() []pageRow) Site {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<html><body><table class="tee-list">`)
		for _, row := range rows() {
			fmt.Fprintf(&b, `<tr class="tee-row"><td class="course">%s</td><td class="part">%s</td><td class="date">%s</td><td class="time">%s</td><td class="price">%d</td><td class="players">4</td></tr>`,
				html.EscapeString(row.Course), html.EscapeString(row.Part), row.Date, row.Time, row.Price)
		}
		b.WriteString(`</table></body></html>`)
		io.WriteString(w, b.String())
	}))
	t.Cleanup(srv.Close)
	s := Site{Name: name, StartURLs: []string{srv.URL + "/tee"}, Row: "table.tee-list tr.tee-row",
		Fields: Fields{Course: Field{Selector: "td.course"}, CoursePart: Field{Selector: "td.part"},
			RoundDate: Field{Selector: "td.date"}, TeeTime: Field{Selector: "td.time"},
			Price: Field{Selector: "td.price"}, Players: Field{Selector: "td.players"}},
		Politeness: Politeness{NoDelay: true, IgnoreRobotsTxt: true, NoRetry: true}}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

// nRows is n distinct rows of one course, 12/01 onwards, with price p.
func nRows(n int, p int64) []pageRow {
	rows := make([]pageRow, n)
	for i := range rows {
		rows[i] = pageRow{Course: "레이크 CC", Part: "OUT", Date: fmt.Sprintf("12/%02d", 1+i/20),
			Time: fmt.Sprintf("%02d:%02d", 6+(i%20)/4, (i%4)*10), Price: p}
	}
	return rows
}

// pubRecorder is an EventPublisher that keeps what it is given.
type pubRecorder struct {
	mu  sync.Mutex
	evs []events.Event
}

func (p *pubRecorder) Publish(e events.Event) { p.mu.Lock(); p.evs = append(p.evs, e); p.mu.Unlock() }

func (p *pubRecorder) events() []events.Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]events.Event(nil), p.evs...)
}

// TestCrawlerRejectsOverlongRow is finding 1 of the reliability review, crawler side: a page with
// a course cell of 4,000 bytes made a valid-looking event whose listing_key no btree index can
// hold. The row is now rejected with reason field_too_long, counted and logged with its URL, and
// the other rows are crawled as usual.
func TestCrawlerRejectsOverlongRow(t *testing.T) {
	t.Parallel()
	rows := nRows(3, 150000)
	rows = append(rows, pageRow{Course: strings.Repeat("x", 4000), Part: "OUT", Date: "12/02", Time: "07:00", Price: 1},
		pageRow{Course: "레이크 CC", Part: strings.Repeat("가", 80), Date: "12/02", Time: "07:10", Price: 1}, // 240 bytes
		pageRow{Course: "레이크 CC", Part: "OUT", Date: "12/02" + strings.Repeat(" 토", 30), Time: "07:20", Price: 1})
	site := pageSite(t, "long", func() []pageRow { return rows })
	var logs syncBuffer
	pub := &pubRecorder{}
	m := NewCrawlerMetrics(nil)
	r := &Runner{Sites: []Site{site}, State: StateDir{Dir: t.TempDir()}, Publisher: pub, Metrics: m,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Now:    func() time.Time { return time.Date(2026, 11, 29, 10, 0, 0, 0, Seoul()) }}
	sum, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s := sum.Sites[0]; s.Rejected != 3 || s.Opened != 3 {
		t.Errorf("rejected %d rows, opened %d listings; want 3 and 3", s.Rejected, s.Opened)
	}
	for _, e := range pub.events() {
		if err := e.Validate(); err != nil || len(e.ListingKey) > 100 {
			t.Errorf("published %q: %v", e.ListingKey, err)
		}
	}
	if got := metricSum(t, m, "crawler_rows_rejected_total", map[string]string{"source": "long", "reason": RejectFieldTooLong}); got != 3 {
		t.Errorf("crawler_rows_rejected_total{reason=%q} = %v, want 3", RejectFieldTooLong, got)
	}
	if n := strings.Count(logs.String(), "reason="+RejectFieldTooLong); n != 3 || !strings.Contains(logs.String(), "url="+site.StartURLs[0]) {
		t.Errorf("%d log lines with reason %s (want 3, with the URL):\n%s", n, RejectFieldTooLong, logs.String())
	}
}

// TestLastMinuteBookingClosesAsBooked is finding 6 of the reliability review: a tee time gone at a
// complete crawl before it starts (first miss) and still gone at the next one, after it started,
// was booked, not expired; and its close happened when it was first observed gone.
func TestLastMinuteBookingClosesAsBooked(t *testing.T) {
	t.Parallel()
	l := mkListing("Alpha", "2026-12-05", "07:00", 150000, 4)
	_, snap, _ := Diff(emptySnap(), []events.Listing{l}, crawlAt(t, 1, "2026-12-05 06:40", true), DiffOptions{})
	out, snap, st := Diff(snap, nil, crawlAt(t, 2, "2026-12-05 06:50", true), DiffOptions{})
	if len(out) != 0 || st.Missed != 1 {
		t.Fatalf("06:50, first miss: %d events, %d missed", len(out), st.Missed)
	}
	out, _, _ = Diff(snap, nil, crawlAt(t, 3, "2026-12-05 07:00", true), DiffOptions{})
	if len(out) != 1 || out[0].EventType != events.ListingClosed {
		t.Fatalf("07:00, second miss: %+v", out)
	}
	firstMiss := seoulTime(t, "2026-12-05 06:50")
	if out[0].CloseReason != events.Booked || !out[0].OccurredAt.Equal(firstMiss) {
		t.Errorf("gone at 06:50 before its 07:00 tee time: closed %s at %s, want booked at %s",
			out[0].CloseReason, out[0].OccurredAt.In(Seoul()).Format("15:04"), firstMiss.Format("15:04"))
	}
	// Gone only after its tee time: expired, at that first miss.
	_, snap, _ = Diff(emptySnap(), []events.Listing{l}, crawlAt(t, 1, "2026-12-05 06:50", true), DiffOptions{})
	out, _, _ = Diff(snap, nil, crawlAt(t, 2, "2026-12-05 07:00", true), DiffOptions{})
	if len(out) != 1 || out[0].CloseReason != events.Expired || !out[0].OccurredAt.Equal(seoulTime(t, "2026-12-05 07:00")) {
		t.Errorf("gone at its tee time: %+v, want expired at 07:00", out)
	}
	// An ordinary booking: gone at 05:00 and 05:10, closed booked at 05:00.
	_, snap, _ = Diff(emptySnap(), []events.Listing{l}, crawlAt(t, 1, "2026-12-05 04:50", true), DiffOptions{})
	_, snap, _ = Diff(snap, nil, crawlAt(t, 2, "2026-12-05 05:00", true), DiffOptions{})
	_, snap, _ = Diff(snap, nil, crawlAt(t, 3, "2026-12-05 05:05", false), DiffOptions{}) // incomplete: not a miss
	out, _, _ = Diff(snap, nil, crawlAt(t, 4, "2026-12-05 05:10", true), DiffOptions{})
	if len(out) != 1 || out[0].CloseReason != events.Booked || !out[0].OccurredAt.Equal(seoulTime(t, "2026-12-05 05:00")) {
		t.Errorf("booked at 05:00: %+v", out)
	}
}
