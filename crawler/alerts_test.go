package crawler

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
)

// alertsRecorder is a Runner.Alerts that checks, at each Claim, what the runner has done so far
// for the site: the crawl's events are not in the events file yet (it only gets what a saved
// snapshot records), the snapshot is still the previous one and nothing of the crawl is published
// yet.
type alertsRecorder struct {
	t      *testing.T
	r      *Runner
	events string // the events file

	mu     sync.Mutex
	fail   error
	claims map[string]int // event id -> Claim calls that carried it
	calls  []string       // site/crawl id of each call
}

func (a *alertsRecorder) Claim(_ context.Context, c AlertCrawl) error {
	site, crawlID, evs := c.Site, c.CrawlID, c.Events
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls = append(a.calls, site+" "+crawlID)
	b, err := os.ReadFile(a.events)
	if err != nil {
		a.t.Errorf("events file at claim time: %v", err)
	}
	snap, err := a.r.State.Load(site)
	if err != nil {
		a.t.Errorf("snapshot at claim time: %v", err)
	}
	for _, e := range evs {
		id := e.EventID.String()
		if e.CrawlID != crawlID || e.Source != site {
			a.t.Errorf("event %s of crawl %s/%s handed to Claim(%s, %s)", id, e.Source, e.CrawlID, site, crawlID)
		}
		if strings.Contains(string(b), id) {
			a.t.Errorf("event %s in the events file (published) before the snapshot that records it was saved", id)
		}
		if e.EventType == events.ListingChanged {
			if cur, ok := snap.Listings[e.ListingKey]; ok && cur.Listing.PriceKRW != nil && e.PriceKRW != nil && *cur.Listing.PriceKRW == *e.PriceKRW {
				a.t.Errorf("event %s claimed after the snapshot that holds it was saved", id)
			}
		}
	}
	if a.fail != nil {
		return a.fail
	}
	for _, e := range evs {
		a.claims[e.EventID.String()]++
	}
	return nil
}

// TestAlertsHookOrder: per site crawl the runner spools the events, then claims the alerts,
// then saves the snapshot, then commits them to the events file and publishes. A failing claim fails the site's crawl, keeps the old
// snapshot and publishes nothing; the next crawl hands the same transitions, with the same ids,
// to Claim again, and they are published once.
func TestAlertsHookOrder(t *testing.T) {
	t.Parallel()
	price := int64(150000)
	var mu sync.Mutex
	st := pageSite(t, "alerts", func() []pageRow { mu.Lock(); defer mu.Unlock(); return nRows(3, price) })
	dir := t.TempDir()
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, site.Seoul())
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: filepath.Join(dir, "state")},
		EventsOut: openEventLog(t, dir), Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }}
	a := &alertsRecorder{t: t, r: r, events: filepath.Join(dir, "events.jsonl"), claims: map[string]int{}}
	r.Alerts = a
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(a.claims) != 3 {
		t.Fatalf("first crawl claimed %d events, want 3 opens", len(a.claims))
	}
	mu.Lock()
	price = 130000
	mu.Unlock()
	a.fail = errors.New("database is locked")
	for range 2 {
		now = now.Add(10 * time.Minute)
		sum, _ := r.Run(context.Background())
		if err := sum.Sites[0].Err; err == nil || !strings.Contains(err.Error(), "database is locked") {
			t.Fatalf("a failed claim did not fail the crawl: %v", err)
		}
	}
	snap, err := r.State.Load(st.Name)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range snap.Listings {
		if *e.Listing.PriceKRW != 150000 {
			t.Errorf("snapshot saved after a failed claim: %s at %d", e.Listing.Key(), *e.Listing.PriceKRW)
		}
	}
	if n := len(eventstest.ReadEvents(t, a.events)); n != 3 {
		t.Errorf("%d events published after the failed claims, want the 3 opens only", n)
	}
	a.fail = nil
	now = now.Add(10 * time.Minute)
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	changed := changedIDs(eventstest.ReadEvents(t, a.events))
	if len(changed) != 3 {
		t.Errorf("3 price changes published as %d distinct events: %v", len(changed), changed)
	}
	for id := range changed {
		if a.claims[id] != 1 || changed[id] != 1 {
			t.Errorf("listing_changed %s claimed %d times, published %d times; want 1 and 1", id, a.claims[id], changed[id])
		}
	}
	if len(a.calls) != 4 {
		t.Errorf("Claim called %d times in 4 site crawls: %v", len(a.calls), a.calls)
	}
}
