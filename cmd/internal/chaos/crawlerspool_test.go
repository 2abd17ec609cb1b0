//go:build chaos

package chaos_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestCrawlerOutageSpool: the crawler binary (`crawler run`, 1 s schedule, Kafka and
// --events-out) crawls a page whose six prices change at every request, so every crawl derives
// six listing_changed events. The broker is SIGKILLed for CHAOS_CRAWLER_OUTAGE (40 s; the
// in-memory publisher the spool replaced gave events up after its retry window), and
// the crawler is SIGKILLed CHAOS_CRAWLER_KILLS times (6) at seeded random moments (seed logged;
// half of them 0-15 ms after a crawl's collection, in or before its spool append, save and
// commit), half during the outage and half after the broker is back. Then the page stops changing and the
// spool drains. Every event the events file holds is stored exactly once, with the file's
// content; the file holds no id with two contents (a kill between a spool append and its
// snapshot save re-derives the change under the same id at a new price); nothing else is stored.
func TestCrawlerOutageSpool(t *testing.T) {
	r := newOutageRig(t, "spool", "CHAOS_CRAWLER_OUTAGE", "CHAOS_CRAWLER_KILLS", 40*time.Second, 6)
	s, db, page := r.s, r.db, r.page
	out := filepath.Join(r.dir, "events.jsonl")
	k := &crawlerKills{rng: r.rng, start: r.crawlerBinary(t, "--events-out", out)}

	p := k.start()
	testkit.WaitFor(t, time.Minute, "events stored before the outage", func() bool { return count(t, db, "booking_events") > 0 })
	s.stopKafka(t, syscall.SIGKILL)
	down := time.Now()
	for range r.kills / 2 {
		p = k.kill(t, p, nil)
	}
	time.Sleep(time.Until(down.Add(r.outage))) // the outage lasts its length, whatever the kills took
	t.Logf("when the broker returned after %s: %d events in the file, %d stored", time.Since(down).Round(time.Second),
		len(fileEvents(t, out)), count(t, db, "booking_events"))
	s.up(t)
	for range r.kills - r.kills/2 {
		p = k.kill(t, p, nil)
	}
	page.frozen.Store(true)
	var want map[string]events.Event
	testkit.WaitForf(t, 3*time.Minute, func() string {
		return fmt.Sprintf("the %d events of the file stored (%d stored)", len(want), count(t, db, "booking_events"))
	}, func() bool {
		want = fileEvents(t, out)
		return count(t, db, "booking_events") >= len(want) && len(want) > 0
	})
	all := k.stop(t, p)
	r.cons.stop(t)
	want = fileEvents(t, out)
	checkStoredAsFile(t, db, want)
	t.Logf("%d requests, %d events in the file; %d crawls failed, %d interrupted batches resolved at start-up (%d kept), %d torn records cut",
		page.requests.Load(), len(want), strings.Count(all, `msg="site crawl failed"`), strings.Count(all, "batch of an interrupted crawl"),
		strings.Count(all, "kept: its snapshot was saved"), strings.Count(all, "torn last record cut"))
}

// fileEvents reads the events file by id, failing on an id with two contents.
func fileEvents(t *testing.T, path string) map[string]events.Event {
	t.Helper()
	byID := map[string]events.Event{}
	for _, e := range eventstest.ReadEvents(t, path) {
		id := e.EventID.String()
		if prev, ok := byID[id]; ok && (prev.PriceKRW == nil) != (e.PriceKRW == nil) || ok && prev.PriceKRW != nil && *prev.PriceKRW != *e.PriceKRW {
			t.Fatalf("events file: %s has two contents: price %d, then %d", id, *prev.PriceKRW, *e.PriceKRW)
		}
		byID[id] = e
	}
	return byID
}

// checkStoredAsFile: PostgreSQL holds exactly the file's ids, each with the file's price.
func checkStoredAsFile(t *testing.T, db *pgxpool.Pool, want map[string]events.Event) {
	t.Helper()
	rows, _ := db.Query(t.Context(), "select event_id::text, price_krw from booking_events") // an error is in rows
	got := map[string]*int64{}
	var id string
	var price *int64
	if _, err := pgx.ForEachRow(rows, []any{&id, &price}, func() error { got[id] = price; return nil }); err != nil {
		t.Fatal(err)
	}
	lost, extra, differ := 0, 0, 0
	for id, e := range want {
		p, ok := got[id]
		switch {
		case !ok:
			lost++
		case (p == nil) != (e.PriceKRW == nil) || p != nil && *p != *e.PriceKRW:
			differ++
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			extra++
		}
	}
	t.Logf("stored %d, in the file %d: lost %d, not in the file %d, other content %d", len(got), len(want), lost, extra, differ)
	if lost+extra+differ > 0 {
		t.Errorf("stored events differ from the events file: %d lost, %d not in the file, %d with another content", lost, extra, differ)
	}
}
