package main

import (
	"bytes"
	"database/sql"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/events"
)

// TestResendSendsTheFailedAgain: `crawler notifications resend --status failed` sends a message
// that failed (the channel answered 403 then) again under the Idempotency-Key it failed with,
// though its 3-day-old event is far past the age check; it still skips a claim whose listing
// closed since; an unknown claim (maybe delivered) is resent only with --include-unknown; a
// second resend has nothing to do; a running crawler's lock refuses it.
func TestResendSendsTheFailedAgain(t *testing.T) {
	t.Parallel()
	var fixed atomic.Bool
	var mu sync.Mutex
	var seen []string
	keys := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		seen = append(seen, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		if !fixed.Load() {
			http.Error(w, `{"ok":false,"description":"Bad Request: chat not found"}`, http.StatusForbidden)
			return true
		}
		return false
	})
	state := t.TempDir()
	watches := watchesFile(t, map[string]string{"hook": rc.srv.URL}, "  - name: all\n    channels: [hook]\n  - name: cheap\n    channels: [hook]\n")
	cfg, err := notify.LoadFile(watches, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	st, err := openAlertStore(t.Context(), state)
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-72 * time.Hour)
	open, closes, maybe := notifyEvent("k1", old), notifyEvent("k2", old), notifyEvent("k3", old)
	mk := func(watch string, e *events.Event) notify.Claim {
		return notify.Claim{Key: notify.ClaimKey(watch, "hook", e.EventID), Watch: watch, Channel: "hook", Event: e}
	}
	if _, err := st.Claim(t.Context(), notify.ClaimBatch{Now: time.Now(), MaxAge: 100 * time.Hour,
		Claims: []notify.Claim{mk("all", open), mk("all", closes), mk("cheap", maybe)}}); err != nil {
		t.Fatal(err)
	}
	s := &notify.Sender{Store: st, Channel: cfg.Channels["hook"], Watches: cfg, MaxAge: 100 * time.Hour}
	if _, err := s.Once(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(mustList(t, st, notify.StatusFailed)); n != 3 || len(keys()) != 2 {
		t.Fatalf("%d failed claims after %d requests, want 3 after 2 (403 is permanent)", n, len(keys()))
	}
	failedWith := keys()[0]
	if _, err := st.Claim(t.Context(), notify.ClaimBatch{Now: time.Now(), Closes: []notify.Close{{ListingKey: "k2", At: time.Now()}}}); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", alertsPath(state))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("update claims set status = 'unknown' where watch = 'cheap'"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	st.Close()

	resend := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(t.Context(), append([]string{"notifications", "resend", "--watches", watches, "--state-dir", state}, args...),
			env(map[string]string{"LOG_FORMAT": "text"}), &out, &errOut)
		return out.String() + errOut.String(), err
	}
	if out, err := resend("--status", "unknown"); !errors.Is(err, cli.ErrUsage) {
		t.Errorf("resend --status unknown: %v, want a usage error\n%s", err, out)
	}
	lock, err := crawler.StateDir{Dir: state}.Lock()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := resend("--status", "failed"); !errors.Is(err, crawler.ErrStateLocked) {
		t.Errorf("resend while a crawler holds the state dir: %v, want ErrStateLocked\n%s", err, out)
	}
	lock.Unlock()

	fixed.Store(true)
	out, err := resend("--status", "failed", "--since", "1h")
	if err != nil {
		t.Fatalf("resend: %v\n%s", err, out)
	}
	if k := keys(); len(k) != 3 || k[2] != failedWith {
		t.Errorf("requests' keys %q: want a third under the key the message failed with (%s)", k, failedWith)
	}
	if got := rc.delivered(); len(got) != 1 || got["all "+open.EventID.String()] != 1 {
		t.Errorf("delivered %v, want watch all's open listing alone (the closed one skipped, cheap's unknown one not resent)", got)
	}
	if !strings.Contains(out, "sent") || !strings.Contains(out, "closed") || !strings.Contains(out, "2 alerts put back to sending; 2 messages, 0 failed again") {
		t.Errorf("resend's output:\n%s", out)
	}
	if out, err := resend("--status", "failed"); err != nil || !strings.Contains(out, "nothing to resend") {
		t.Errorf("a second resend: %v\n%s", err, out)
	}
	if out, err := resend("--status", "failed", "--include-unknown", "--watch", "cheap"); err != nil || rc.delivered()["cheap "+maybe.EventID.String()] != 1 {
		t.Errorf("resend --include-unknown --watch cheap: %v, delivered %v\n%s", err, rc.delivered(), out)
	}
}

func mustList(t *testing.T, st notify.ClaimStore, s notify.Status) []notify.Notification {
	t.Helper()
	rows, err := st.List(t.Context(), notify.Filter{Status: s})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
