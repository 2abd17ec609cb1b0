package main

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestNotificationsResendSendsTheFailedAgain: `booking-consumer notifications resend --status
// failed` sends a message the channel refused (403) again, once it accepts, under the
// Idempotency-Key it failed with, though its 3-day-old event is far past the age check; it still
// skips the claim whose listing closed since; the unknown one (maybe delivered) goes only with
// --include-unknown; a second resend has nothing to do.
func TestNotificationsResendSendsTheFailedAgain(t *testing.T) {
	t.Parallel()
	db, dbURL := storetest.NewDBURL(t)
	h := newHook(t)
	var fixed atomic.Bool
	h.respond = func(_ hookReq, _ int, w http.ResponseWriter, _ *http.Request) {
		if !fixed.Load() {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		w.WriteHeader(http.StatusOK)
	}
	watches := writeWatches(t, fmt.Sprintf("channels:\n  hook: {type: webhook, url: %s/hook}\nwatches:\n  - name: all\n    channels: [hook]\n"+
		"  - name: cheap\n    channels: [hook]\n", h.srv.URL))
	cfg, err := notify.LoadFile(watches, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	st := &pgclaims.Store{Pool: db, Owner: "notifier-1", Settle: time.Millisecond}
	old := time.Now().Add(-72 * time.Hour)
	open, closes, maybe := opening("A", "c1", old), opening("B", "c1", old), opening("C", "c1", old)
	claims := []notify.Claim{
		{Key: notify.ClaimKey("all", "hook", open.EventID), Watch: "all", Channel: "hook", Event: &open},
		{Key: notify.ClaimKey("all", "hook", closes.EventID), Watch: "all", Channel: "hook", Event: &closes},
		{Key: notify.ClaimKey("cheap", "hook", maybe.EventID), Watch: "cheap", Channel: "hook", Event: &maybe},
	}
	if _, err := st.Claim(t.Context(), notify.ClaimBatch{Now: time.Now(), MaxAge: 100 * time.Hour, Claims: claims}); err != nil {
		t.Fatal(err)
	}
	s := &notify.Sender{Store: st, Channel: cfg.Channels["hook"], Watches: cfg, MaxAge: 100 * time.Hour}
	waitUntil(t, 30*time.Second, "both messages failed", func() bool {
		if _, err := s.Once(t.Context()); err != nil {
			t.Fatal(err)
		}
		return statusCounts(t, db)["failed"] == 3
	})
	var failedWith string
	for _, r := range h.all() {
		if r.webhook(t).Watch == "all" {
			failedWith = r.Key
		}
	}
	if _, err := st.Claim(t.Context(), notify.ClaimBatch{Now: time.Now(), Closes: []notify.Close{{ListingKey: closes.ListingKey, At: time.Now()}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(t.Context(), "update notifications set status = 'unknown' where watch = 'cheap'"); err != nil {
		t.Fatal(err)
	}

	resend := func(args ...string) (string, error) {
		out, errOut, err := runCLI(t, t.Context(), map[string]string{"DATABASE_URL": dbURL}, append([]string{"notifications", "resend", "--watches", watches}, args...)...)
		return out + errOut, err
	}
	if out, err := resend("--status", "unknown"); !errors.Is(err, cli.ErrUsage) {
		t.Errorf("resend --status unknown: %v, want a usage error\n%s", err, out)
	}
	fixed.Store(true)
	out, err := resend("--status", "failed", "--since", "1h")
	if err != nil {
		t.Fatalf("resend: %v\n%s", err, out)
	}
	reqs := h.all()
	if len(reqs) != 3 || reqs[2].Key != failedWith || len(reqs[2].webhook(t).Matches) != 1 || reqs[2].webhook(t).Matches[0].CourseName != "A" {
		t.Errorf("%d requests, the last %+v: want a third, under the key watch all's message failed with (%s), of course A alone", len(reqs), reqs[len(reqs)-1], failedWith)
	}
	if !strings.Contains(out, "closed") || !strings.Contains(out, "2 alerts put back to sending; 2 messages, 0 failed again") {
		t.Errorf("resend's output:\n%s", out)
	}
	if c := statusCounts(t, db); c["sent"] != 1 || c["skipped:closed"] != 1 || c["unknown"] != 1 {
		t.Errorf("statuses after the resend: %v, want 1 sent, 1 skipped closed, cheap's 1 unknown untouched", c)
	}
	if out, err := resend("--status", "failed"); err != nil || !strings.Contains(out, "nothing to resend") {
		t.Errorf("a second resend: %v\n%s", err, out)
	}
	if out, err := resend("--status", "failed", "--include-unknown", "--watch", "cheap"); err != nil || statusCounts(t, db)["sent"] != 2 {
		t.Errorf("resend --include-unknown --watch cheap: %v, statuses %v\n%s", err, statusCounts(t, db), out)
	}
}

// TestAlertsTestOnTheNotifiersChannels: `booking-consumer alerts test --channel NAME` sends one
// test message on a channel of the notifier's watches file and prints its answer.
func TestAlertsTestOnTheNotifiersChannels(t *testing.T) {
	t.Parallel()
	h := newHook(t)
	h.respond = func(_ hookReq, _ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"queued":true}`))
	}
	watches := writeWatches(t, fmt.Sprintf("channels:\n  hook: {type: webhook, url: %s/hook}\nwatches:\n  - name: all\n    channels: [hook]\n", h.srv.URL))
	out, _, err := runCLI(t, t.Context(), nil, "alerts", "test", "--watches", watches, "--channel", "hook")
	if reqs := h.all(); err != nil || !strings.Contains(out, "HTTP 202") || !strings.Contains(out, `{"queued":true}`) || len(reqs) != 1 ||
		reqs[0].webhook(t).Watch != "test" {
		t.Errorf("alerts test --channel hook: %v\n%s\nrequests %+v; want one test message and the answer HTTP 202 with its body", err, out, reqs)
	}
}
