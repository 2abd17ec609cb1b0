package crawler

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/spool"
	"github.com/golfcrawler/golf-crawler/internal/atomicfile"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// pageRow is one row of the test page of pageSite.
type pageRow struct {
	Course, Part, Date, Time string
	Price                    int64
}

// pageSite serves one page whose rows are whatever rows() returns at request time, and returns a
// site that crawls it (no politeness delays, no retries).
func pageSite(t testing.TB, name string, rows func() []pageRow) *site.Site {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b strings.Builder
		b.WriteString(`<html><body><table class="tee-list">`)
		for _, row := range rows() {
			fmt.Fprintf(&b, `<tr class="tee-row"><td class="course">%s</td><td class="part">%s</td><td class="date">%s</td><td class="time">%s</td><td class="price">%d</td><td class="players">4</td></tr>`,
				html.EscapeString(row.Course), html.EscapeString(row.Part), row.Date, row.Time, row.Price)
		}
		b.WriteString(`</table></body></html>`)
		_, _ = io.WriteString(w, b.String())
	}))
	t.Cleanup(srv.Close)
	s, err := site.SiteSpec{Name: name, StartURLs: []string{srv.URL + "/tee"}, Row: "table.tee-list tr.tee-row",
		Fields: site.Fields{"course": {Selector: "td.course"}, "course_part": {Selector: "td.part"},
			"round_date": {Selector: "td.date"}, "tee_time": {Selector: "td.time"},
			"price": {Selector: "td.price"}, "players": {Selector: "td.players"}},
		Politeness: site.Politeness{NoDelay: true, IgnoreRobotsTxt: true, NoRetry: true}}.Compile()
	if err != nil {
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

// eventsOut gives r an events file in the test's temp dir and returns a reader of it: the events
// the crawls committed, in order, as `crawler run --events-out` writes them (through the spool).
func eventsOut(t testing.TB, r *Runner) func() []events.Event {
	t.Helper()
	path := filepath.Join(t.TempDir(), "events.jsonl")
	out, err := OpenEventLog(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
	r.EventsOut = out
	return func() []events.Event { return eventstest.ReadEvents(t, path) }
}

// failSaves stages failing saves on r through its fields, as a disk would: while the returned
// switch is on, a save's directory sync (StateDir.SyncDir) puts back the snapshot files that were
// in place when the crawl's batch was spooled (spool.Options.OnStep) and fails, so the old
// snapshot is on disk, as after a save that failed before its rename. It takes r's lock and opens
// its spool, released at the test's end.
func failSaves(t testing.TB, r *Runner) *atomic.Bool {
	t.Helper()
	var on atomic.Bool
	var mu sync.Mutex
	var before map[string][]byte // the snapshot files when the batch was spooled; nil: not read
	r.State.SyncDir = func(dir string) error {
		if !on.Load() {
			return atomicfile.SyncDir(dir)
		}
		mu.Lock()
		defer mu.Unlock()
		if before != nil {
			now, _ := filepath.Glob(filepath.Join(dir, "snapshot-*.json"))
			for _, f := range now {
				if _, ok := before[f]; !ok {
					_ = os.Remove(f)
				}
			}
			for f, b := range before {
				if err := os.WriteFile(f, b, 0o644); err != nil {
					t.Error(err)
				}
			}
			before = nil
		}
		return errors.New("sync: input/output error")
	}
	onStep := func(step string) {
		if step != spool.StepAppended || !on.Load() {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		files, _ := filepath.Glob(filepath.Join(r.State.Dir, "snapshot-*.json"))
		before = map[string][]byte{}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Error(err)
			}
			before[f] = b
		}
	}
	if err := r.Lock(); err != nil {
		t.Fatal(err)
	}
	sp, err := r.OpenSpool(spool.Options{OnStep: onStep})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sp.Close(); r.Unlock() })
	return &on
}

// TestCrawlerRejectsOverlongRow (crawler side): a page with
// a course cell of 4,000 bytes made a valid-looking event whose listing_key no btree index can
// hold. The row is now rejected with reason field_too_long, counted and logged with its URL, and
// the other rows are crawled as usual.
func TestCrawlerRejectsOverlongRow(t *testing.T) {
	t.Parallel()
	rows := nRows(3, 150000)
	rows = append(rows, pageRow{Course: strings.Repeat("x", 4000), Part: "OUT", Date: "12/02", Time: "07:00", Price: 1},
		pageRow{Course: "레이크 CC", Part: strings.Repeat("가", 80), Date: "12/02", Time: "07:10", Price: 1}, // 240 bytes
		pageRow{Course: "레이크 CC", Part: "OUT", Date: "12/02" + strings.Repeat(" 토", 30), Time: "07:20", Price: 1})
	st := pageSite(t, "long", func() []pageRow { return rows })
	var logs testkit.SyncBuffer
	m := newTestMetrics(nil)
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: t.TempDir()}, Metrics: m,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Now:    func() time.Time { return time.Date(2026, 11, 29, 10, 0, 0, 0, site.Seoul()) }}
	written := eventsOut(t, r)
	sum, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s := sum.Sites[0]; s.Rejected != 3 || s.Opened != 3 {
		t.Errorf("rejected %d rows, opened %d listings; want 3 and 3", s.Rejected, s.Opened)
	}
	for _, e := range written() {
		if err := e.Validate(); err != nil || len(e.ListingKey) > 100 {
			t.Errorf("published %q: %v", e.ListingKey, err)
		}
	}
	if got := metricSum(t, m, "crawler_rows_rejected_total", map[string]string{"source": "long", "reason": site.RejectFieldTooLong}); got != 3 {
		t.Errorf("crawler_rows_rejected_total{reason=%q} = %v, want 3", site.RejectFieldTooLong, got)
	}
	if n := strings.Count(logs.String(), "reason="+site.RejectFieldTooLong); n != 3 || !strings.Contains(logs.String(), "url="+st.StartURLs[0]) {
		t.Errorf("%d log lines with reason %s (want 3, with the URL):\n%s", n, site.RejectFieldTooLong, logs.String())
	}
}

// TestLastMinuteBookingClosesAsBooked : a tee time gone at a
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
			out[0].CloseReason, out[0].OccurredAt.In(site.Seoul()).Format("15:04"), firstMiss.Format("15:04"))
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

// TestRederivedTransitionsKeepTheirIDs : a diff re-run from
// the same snapshot (a failed save, a crash between publish and save, a second crawler on the state
// dir) re-derived the same transitions under the new crawl's id, hence new event ids. The id now
// depends on the transition only: re-deriving it in a later crawl gives the same id.
func TestRederivedTransitionsKeepTheirIDs(t *testing.T) {
	t.Parallel()
	cheaper := a0700
	cheaper.PriceKRW = pointerTo[int64](130000)
	_, s1, _ := Diff(emptySnap(), []events.Listing{a0700, a0730, b0800}, crawlAt(t, 1, "2026-11-20 08:00", true), DiffOptions{})
	_, s2, _ := Diff(s1, []events.Listing{cheaper, a0730}, crawlAt(t, 2, "2026-11-20 08:10", true), DiffOptions{})
	// The transitions of crawl 3 (a change, a close), derived from s2 by crawls 3, 4 and 5 in turn,
	// as if each one's snapshot had never been saved.
	var first []events.Event
	for n, at := range []string{"08:20", "08:30", "08:40"} {
		out, _, _ := Diff(s2, []events.Listing{a0700}, crawlAt(t, 3+n, "2026-11-20 "+at, true), DiffOptions{})
		if len(out) != 2 {
			t.Fatalf("crawl %d: %d events, want a change and a close: %+v", 3+n, len(out), out)
		}
		if first == nil {
			first = out
			continue
		}
		for i := range out {
			if out[i].EventID != first[i].EventID {
				t.Errorf("crawl %d re-derived %s %s with id %s; crawl 3 gave it %s", 3+n, out[i].EventType,
					out[i].ListingKey, out[i].EventID, first[i].EventID)
			}
		}
	}
}

// TestTransitionIDsStayDistinct: the price going 100 → 90 → 100 → 90 is four changes with four
// ids, a reopened listing's events never reuse its previous lifetime's ids, and a lost state
// (a fresh snapshot) starts a new epoch whose ids collide with nothing emitted before.
func TestTransitionIDsStayDistinct(t *testing.T) {
	t.Parallel()
	price := func(p int64) events.Listing { l := a0700; l.PriceKRW = &p; return l }
	snap := emptySnap()
	ids := map[string]string{}
	var all []events.Event
	crawl := func(n int, at string, cur ...events.Listing) []events.Event {
		t.Helper()
		out, next, _ := Diff(snap, cur, crawlAt(t, n, at, true), DiffOptions{})
		for _, e := range out {
			if prev, dup := ids[e.EventID.String()]; dup {
				t.Errorf("crawl %d: %s %s reuses the id of %s", n, e.EventType, e.ListingKey, prev)
			}
			ids[e.EventID.String()] = fmt.Sprintf("crawl %d's %s", n, e.EventType)
		}
		all = append(all, out...)
		snap = next
		return out
	}
	crawl(1, "2026-11-20 08:00", price(100))
	crawl(2, "2026-11-20 08:10", price(90))
	crawl(3, "2026-11-20 08:20", price(100))
	crawl(4, "2026-11-20 08:30", price(90))
	crawl(5, "2026-11-20 08:40")
	if out := crawl(6, "2026-11-20 08:50"); len(out) != 1 || out[0].EventType != events.ListingClosed {
		t.Fatalf("crawl 6: %+v, want the close", out)
	}
	if out := crawl(7, "2026-11-20 09:00", price(100)); len(out) != 1 || out[0].EventType != events.ListingOpened {
		t.Fatalf("crawl 7: %+v, want the reopen", out)
	}
	crawl(8, "2026-11-20 09:10", price(90))
	crawl(9, "2026-11-20 09:20")
	crawl(10, "2026-11-20 09:30")
	if len(all) != 8 {
		t.Errorf("%d events, want open, 3 changes, close, open, change, close", len(all))
	}
	// The closed listing stays in the snapshot (so that a reopen counts its lifetime) until its
	// tee time has passed.
	if e, ok := snap.Listings[a0700.Key()]; !ok || e.ClosedAt.IsZero() {
		t.Errorf("closed listing not kept as a tombstone: %+v", e)
	}
	_, after, _ := Diff(snap, nil, crawlAt(t, 11, "2026-12-05 07:00", true), DiffOptions{})
	if _, ok := after.Listings[a0700.Key()]; ok {
		t.Errorf("tombstone kept after its tee time")
	}
	// The state is lost: the next crawl opens the listing again, in a new epoch, under a new id.
	snap = emptySnap()
	crawl(12, "2026-11-20 10:00", price(90))
}

// TestSaveBeforePublish: when the snapshot cannot be saved, nothing is published; the next crawl
// derives the same transitions from the old snapshot and publishes them once, under the same ids.
func TestSaveBeforePublish(t *testing.T) {
	t.Parallel()
	price := int64(150000)
	var mu sync.Mutex
	st := pageSite(t, "save", func() []pageRow { mu.Lock(); defer mu.Unlock(); return nRows(3, price) })
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, site.Seoul())
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: t.TempDir()},
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }}
	written := eventsOut(t, r)
	failing := failSaves(t, r)
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	price = 130000
	mu.Unlock()
	failing.Store(true)
	for range 3 {
		now = now.Add(10 * time.Minute)
		if sum, _ := r.Run(context.Background()); sum.Sites[0].Err == nil {
			t.Fatal("a failed save did not fail the crawl")
		}
	}
	failing.Store(false)
	now = now.Add(10 * time.Minute)
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	changed := changedIDs(written())
	if len(changed) != 3 {
		t.Errorf("3 price changes published as %d distinct listing_changed events: %v", len(changed), changed)
	}
	for id, n := range changed {
		if n != 1 {
			t.Errorf("listing_changed %s published %d times", id, n)
		}
	}
}

// TestStateDirLock: a second crawler on the same state dir refuses to crawl, with a clear error,
// until the first one lets go.
func TestStateDirLock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := pageSite(t, "lock", func() []pageRow { return nRows(2, 1) })
	now := func() time.Time { return time.Date(2026, 11, 29, 10, 0, 0, 0, site.Seoul()) }
	r1 := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: dir}, Logger: slog.New(slog.DiscardHandler), Now: now}
	r2 := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: dir}, Logger: slog.New(slog.DiscardHandler), Now: now}
	written1, written2 := eventsOut(t, r1), eventsOut(t, r2)
	if err := r1.Lock(); err != nil {
		t.Fatal(err)
	}
	_, err := r2.Run(context.Background())
	if !errors.Is(err, ErrStateLocked) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "another crawler") {
		t.Fatalf("second crawler on %s: %v, want ErrStateLocked naming the dir", dir, err)
	}
	if err := r2.Lock(); !errors.Is(err, ErrStateLocked) {
		t.Fatalf("second Lock: %v", err)
	}
	if _, err := r1.Run(context.Background()); err != nil {
		t.Fatalf("the lock holder's own run: %v", err)
	}
	if len(written2()) != 0 || len(written1()) != 2 {
		t.Errorf("published %d events by the second crawler, %d by the first", len(written2()), len(written1()))
	}
	r1.Unlock()
	if _, err := r2.Run(context.Background()); err != nil {
		t.Fatalf("after the first let go: %v", err)
	}
}

// TestHealthzWithoutCompleteCrawls: a site with no complete crawl for UnhealthyAfter runs in a row
// makes /healthz answer 503 with the reason, and the per-site gauges say since when; a complete
// crawl makes it healthy again.
func TestHealthzWithoutCompleteCrawls(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	n := 20
	st := pageSite(t, "layout", func() []pageRow { mu.Lock(); defer mu.Unlock(); return nRows(n, 1) })
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, site.Seoul())
	m := newTestMetrics(nil)
	m.UnhealthyAfter = 3
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	health := func() (int, string) {
		resp, err := http.Get(srv.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: t.TempDir()}, Metrics: m,
		Diff: DiffOptions{CollapseCrawls: 100}, Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }}
	run := func() {
		_, _ = r.Run(context.Background())
		now = now.Add(10 * time.Minute)
	}
	run()
	complete := now.Add(-10 * time.Minute)
	mu.Lock()
	n = 1 // the site changed its layout: one row still parses
	mu.Unlock()
	for i := range 3 {
		if code, body := health(); code != http.StatusOK {
			t.Fatalf("after %d incomplete crawls: /healthz %d %s", i, code, body)
		}
		run()
	}
	code, body := health()
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "layout") || !strings.Contains(body, "no complete crawl") {
		t.Errorf("after 3 incomplete crawls: /healthz %d %s, want 503 naming the site", code, body)
	}
	if got := metricSum(t, m, "crawler_last_complete_crawl_timestamp_seconds", map[string]string{"source": "layout"}); got != float64(complete.Unix()) {
		t.Errorf("crawler_last_complete_crawl_timestamp_seconds = %v, want %d", got, complete.Unix())
	}
	if got := metricSum(t, m, "crawler_consecutive_incomplete_crawls", map[string]string{"source": "layout"}); got != 3 {
		t.Errorf("crawler_consecutive_incomplete_crawls = %v, want 3", got)
	}
	mu.Lock()
	n = 20
	mu.Unlock()
	run()
	if code, body := health(); code != http.StatusOK {
		t.Errorf("after a complete crawl: /healthz %d %s", code, body)
	}
}

// changedIDs counts the listing_changed events of evs by event id.
func changedIDs(evs []events.Event) map[string]int {
	changed := map[string]int{}
	for _, e := range evs {
		if e.EventType == events.ListingChanged {
			changed[e.EventID.String()]++
		}
	}
	return changed
}
