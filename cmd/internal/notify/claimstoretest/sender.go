package claimstoretest

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

// senderSkipsAtSendTime: the engine's Sender, before it sends a picked group, skips the claims of
// a watch removed from the watches file (watch_removed) or muted (watch_muted), those whose event
// is older than MaxAge (stale) and those whose listing closed since (closed), and sends the rest
// of a group under its key. A muted watch claims nothing.
func senderSkipsAtSendTime(t *testing.T, f Factory) {
	st := f.New(t)
	var mu sync.Mutex
	var got []string // Idempotency-Keys received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	cfg, err := notify.Parse([]byte("channels:\n  a: {type: webhook, url: "+srv.URL+"/}\nwatches:\n"+
		"  - name: kept\n    channels: [a]\n  - name: muted\n    enabled: false\n    channels: [a]\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if b := cfg.Batch(eventsOf(opening("m", "c0", now)), now, 0); len(b.Claims) != 1 || b.Claims[0].Watch != "kept" {
		t.Errorf("a muted watch claimed: %+v", b.Claims)
	}
	fresh, closing, aging := opening("fresh", "c1", now), opening("closing", "c1", now.Add(-time.Minute)), opening("aging", "c2", now.Add(-20*time.Minute))
	mustClaim(t, st, notify.ClaimBatch{Now: now, Claims: []notify.Claim{claim("kept", "a", fresh), claim("kept", "a", closing),
		claim("kept", "a", aging), claim("removed", "a", opening("r", "c3", now)), claim("muted", "a", opening("mm", "c4", now))}})
	mustClaim(t, st, notify.ClaimBatch{Closes: []notify.Close{{ListingKey: closing.ListingKey, At: now}}})
	key := keysOf(mustPick(t, st, "a"))["kept/c1"]
	s := &notify.Sender{Store: st, Channel: cfg.Channels["a"], Watches: cfg, MaxAge: 10 * time.Minute,
		Logger: slog.New(slog.DiscardHandler)}
	if _, err := s.Once(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"fresh": "sent:", "closing": "skipped:closed", "aging": "skipped:stale",
		"r": "skipped:watch_removed", "mm": "skipped:watch_muted"}
	for _, n := range list(t, st, notify.Filter{}) {
		if s := n.Status + ":" + n.Reason; s != want[n.Course] {
			t.Errorf("%s: %s, want %s", n.Course, s, want[n.Course])
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != key.String() {
		t.Errorf("the receiver got keys %v, want only the c1 message's %s", got, key)
	}
}

// senderChatTimeoutIsUnknownOnce (on every store): a Slack channel that got the
// request and did not answer in time gets it once; the claim is unknown, never picked again.
func senderChatTimeoutIsUnknownOnce(t *testing.T, f Factory) {
	st := f.New(t)
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server sees the client go
		mu.Lock()
		requests++
		mu.Unlock()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	cfg, err := notify.Parse([]byte("channels:\n  a: {type: slack, url_env: U, base_url: "+srv.URL+", timeout: 100ms}\n"+
		"watches:\n  - name: w\n    channels: [a]\n"), func(string) string { return "https://hooks.example/services/x" })
	if err != nil {
		t.Fatal(err)
	}
	mustClaim(t, st, notify.ClaimBatch{Claims: []notify.Claim{claim("w", "a", opening("x", "c1", time.Now()))}})
	s := &notify.Sender{Store: st, Channel: cfg.Channels["a"], Watches: cfg, MaxAttempts: 3, BackoffBase: time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)}
	for range 2 {
		if _, err := s.Once(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	ns := list(t, st, notify.Filter{})
	mu.Lock()
	defer mu.Unlock()
	if requests != 1 || len(ns) != 1 || ns[0].Status != "unknown" || ns[0].Attempts != 1 {
		t.Errorf("%d requests, claim %+v; want 1 request and unknown after 1 attempt", requests, ns)
	}
}

// senderChecksBeforeEachAttempt: a claim that became older than MaxAge while its message waited
// for a retry (a 503) is skipped stale before the next attempt, not sent late.
func senderChecksBeforeEachAttempt(t *testing.T, f Factory) {
	st := f.New(t)
	var mu sync.Mutex
	requests := 0
	var clock time.Time // the sender's now: an hour later after the first answer
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		requests++
		clock = clock.Add(time.Hour)
		mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	cfg, err := notify.Parse([]byte("channels:\n  a: {type: webhook, url: "+srv.URL+"/}\nwatches:\n  - name: w\n    channels: [a]\n"),
		func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	clock = time.Now()
	mustClaim(t, st, notify.ClaimBatch{Claims: []notify.Claim{claim("w", "a", opening("x", "c1", clock))}})
	s := &notify.Sender{Store: st, Channel: cfg.Channels["a"], Watches: cfg, MaxAge: 30 * time.Minute, BackoffBase: time.Millisecond,
		Logger: slog.New(slog.DiscardHandler), Now: func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			return clock
		}}
	if _, err := s.Once(t.Context()); err != nil {
		t.Fatal(err)
	}
	ns := list(t, st, notify.Filter{})
	mu.Lock()
	defer mu.Unlock()
	if requests != 1 || ns[0].Status != "skipped" || ns[0].Reason != notify.ReasonStale {
		t.Errorf("%d requests, claim %s:%s; want 1 request, then skipped:stale", requests, ns[0].Status, ns[0].Reason)
	}
}
