package pgclaims_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestMatchesOfOneCrawlInTwoBatchesGoOutAsOneMessage: the events of one crawl reach the notifier
// from several partitions, so their matches are often claimed in two consumer batches a few
// milliseconds apart. They are still one message per watch and crawl (the sender lets fresh claims
// settle before it leases them), not one message per batch.
func TestMatchesOfOneCrawlInTwoBatchesGoOutAsOneMessage(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	got := make(chan map[string]any, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("body: %v", err)
		}
		got <- body
	}))
	t.Cleanup(srv.Close)
	cfg, err := notify.Parse([]byte("channels:\n  hook: {type: webhook, url: "+srv.URL+"/}\n"+
		"watches:\n  - name: w\n    channels: [hook]\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	wake := make(chan struct{}, 1)
	st := &pgclaims.Store{Pool: db, Owner: "test", Settle: 2 * time.Second}
	c := &claimer{Store: st, Config: cfg, Logger: testkit.Logger(t, 0),
		Wake: func([]string) {
			select {
			case wake <- struct{}{}:
			default:
			}
		}}
	s := &notify.Sender{Store: st, Channel: cfg.Channels["hook"], Wake: wake,
		Settle: 2 * time.Second, Poll: 50 * time.Millisecond, Logger: testkit.Logger(t, 0)}
	done := make(chan struct{})
	go func() { s.Run(t.Context()); close(done) }()
	t.Cleanup(func() { <-done })

	now := time.Now()
	first := events.Opened(listing("first"), "crawl-1", now)
	second := events.Opened(listing("second"), "crawl-1", now)
	for _, batch := range []events.Event{first, second} {
		if _, err := c.Ingest(t.Context(), msgs(batch)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // the next partition's batch, a little later
	}
	testkit.WaitFor(t, 30*time.Second, "both claims sent", func() bool {
		var n int
		_ = db.QueryRow(t.Context(), "select count(*) from notifications where status = 'sent'").Scan(&n)
		return n == 2
	})
	var requests []map[string]any
	for len(got) > 0 {
		requests = append(requests, <-got)
	}
	if len(requests) != 1 {
		t.Fatalf("the receiver got %d requests, want 1 message for the crawl's 2 matches", len(requests))
	}
	if evs, _ := requests[0]["matches"].([]any); len(evs) != 2 {
		t.Errorf("the message holds %d events, want 2: %v", len(evs), requests[0])
	}
}
