package crawler

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/spool"
)

// TestEventsFileHoldsOnlySavedTransitions: the events file must never hold a line that the saved
// snapshot does not record. A crawl whose save fails re-derives its transitions at the next crawl
// under the same ids, from the page as it is then; a line of the failed crawl in the file would
// be a second content for one id (a price never published), which a replay could store.
func TestEventsFileHoldsOnlySavedTransitions(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	rows := nRows(1, 130000)
	golfSite := pageSite(t, "pd", func() []pageRow { mu.Lock(); defer mu.Unlock(); return append([]pageRow(nil), rows...) })
	setRows := func(n int, last int64) {
		mu.Lock()
		defer mu.Unlock()
		rows = nRows(n, 130000)
		rows[n-1].Price = last
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	out, err := OpenEventLog(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, site.Seoul())
	r := &Runner{Sites: []*site.Site{golfSite}, State: StateDir{Dir: t.TempDir()}, EventsOut: out,
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	setRows(2, 200000)
	now = now.Add(10 * time.Minute)
	r.saveState = func(Snapshot) error { return fmt.Errorf("rename snapshot: operation not permitted") }
	if sum, _ := r.Run(context.Background()); sum.Sites[0].Err == nil {
		t.Fatal("a failed save did not fail the crawl")
	}
	r.saveState = nil
	setRows(2, 140000)
	now = now.Add(10 * time.Minute)
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	evs := eventstest.ReadEvents(t, path)
	byID := map[string][]events.Event{}
	for _, e := range evs {
		byID[e.EventID.String()] = append(byID[e.EventID.String()], e)
	}
	if len(evs) != 2 || len(byID) != 2 {
		t.Errorf("events file holds %d lines for %d ids, want 2 lines, one per id", len(evs), len(byID))
	}
	for id, es := range byID {
		for _, e := range es {
			var price int64
			if e.PriceKRW != nil {
				price = *e.PriceKRW
			}
			t.Logf("line: %s %s %s %d", e.EventType, id[:8], e.TeeTime, price)
			if e.TeeTime == rows[1].Time && price != 140000 {
				t.Errorf("event %s of %s holds price %d, which no saved snapshot recorded (saved: 140000)", id, e.TeeTime, price)
			}
		}
	}
}

// TestSpoolFullStillWritesTheEventsFile: with the spool at its cap the crawl goes on and saves;
// its events are dropped for Kafka (counted) and still reach the events file after the save.
func TestSpoolFullStillWritesTheEventsFile(t *testing.T) {
	t.Parallel()
	golfSite := pageSite(t, "full", func() []pageRow { return nRows(3, 130000) })
	path := filepath.Join(t.TempDir(), "events.jsonl")
	out, err := OpenEventLog(path)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, site.Seoul())
	r := &Runner{Sites: []*site.Site{golfSite}, State: StateDir{Dir: t.TempDir()}, Logger: slog.New(slog.DiscardHandler),
		Now: func() time.Time { return now }}
	if err := r.Lock(); err != nil {
		t.Fatal(err)
	}
	r.EventsOut = out // after Lock, which would open a spool of its own for it
	sp, err := r.OpenSpool(spool.Options{Retain: true, MaxBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := sp.Stats()
	sp.Close()
	r.Unlock()
	out.Close()
	if evs := eventstest.ReadEvents(t, path); len(evs) != 3 || st.DroppedFull != 3 || st.Unsent != 0 {
		t.Errorf("events file %d lines, spool %+v; want 3 lines and 3 dropped for Kafka", len(evs), st)
	}
}
