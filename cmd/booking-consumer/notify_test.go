package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/practice"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
)

// The notifier (booking-consumer notify) as a process against the real stack, with local
// receivers standing in for the webhook, Slack, Discord and Telegram.

func TestNotifySIGKILLBetweenSendAndMarkSendsTheSameKeyAtMostTwice(t *testing.T) {
	t.Parallel()
	s := newStack(t, secretEnv...)
	h := newHook(t)
	killed := make(chan struct{})
	blocked := make(chan string, 1)
	var once sync.Once
	h.respond = func(r hookReq, seen int, w http.ResponseWriter, req *http.Request) {
		first := false
		once.Do(func() { first = true })
		if first {
			blocked <- r.Key // the receiver has the message; the notifier has no answer yet
			<-killed
			w.WriteHeader(http.StatusOK) // to a dead process
			return
		}
		w.WriteHeader(http.StatusOK)
	}
	watches := writeWatches(t, fmt.Sprintf("channels:\n  hook: {type: webhook, url: %s/hook}\nwatches:\n  - name: any\n    channels: [hook]\n", h.srv.URL))
	evs := openings(5, "kill")
	publish(t, s.addr, s.topic, evs)
	group := kafkatest.Name(t, "g")
	p1 := startNotifier(t, s.bin, s.env, s.args(group, watches)...)
	var key string
	select {
	case key = <-blocked:
	case <-time.After(60 * time.Second):
		t.Fatalf("no request reached the receiver; logs:\n%s", p1.Logs.String())
	}
	if err := p1.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p1.Wait(t, 10*time.Second)
	close(killed)
	if c := statusCounts(t, s.db); c["sent"] == 5 {
		t.Fatalf("all sent before the kill: %v", c)
	}

	p2 := startNotifier(t, s.bin, s.env, s.args(group, watches)...)
	t.Cleanup(func() {
		if t.Failed() {
			rows, _ := s.db.Query(context.Background(), "select key, status, lease_owner, lease_until, now(), attempts, send_key from notifications")
			for rows.Next() {
				v, _ := rows.Values()
				t.Log(v...)
			}
		}
	})
	waitUntil(t, 90*time.Second, "all 5 sent after the restart", func() bool { return statusCounts(t, s.db)["sent"] == 5 }, p1, p2)
	p2.stop(t)
	counts := h.keyCounts()
	if counts[key] != 2 {
		t.Errorf("the key in flight at the kill was seen %d times, want 2 (once before, once after)", counts[key])
	}
	if len(counts) != 5 {
		t.Errorf("%d distinct keys, want 5", len(counts))
	}
	for k, c := range counts {
		if k != key && c != 1 {
			t.Errorf("key %s seen %d times", k, c)
		}
	}
	var rows int
	if err := s.db.QueryRow(t.Context(), "select count(*) from notifications where key = $1 and status = 'sent'", key).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("rows sent for the key: %d (%v), want 1", rows, err)
	}
}

func TestNotifyTransientAndPermanentFailures(t *testing.T) {
	t.Parallel()
	s := newStack(t, secretEnv...)
	h := newHook(t)
	// Event i's behaviour is chosen by its course name.
	behaviour := map[string]string{courseName(0, 0): "timeout", courseName(1, 0): "5xx", courseName(2, 0): "4xx",
		courseName(3, 0): "429", courseName(4, 0): "ok", courseName(5, 0): "ok"}
	h.respond = func(r hookReq, seen int, w http.ResponseWriter, req *http.Request) {
		switch behaviour[courseRE.FindString(string(r.Body))] {
		case "timeout":
			if seen == 0 {
				<-req.Context().Done() // accepted, never answered: the client times out
				return
			}
		case "5xx":
			if seen == 0 {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
		case "4xx":
			http.Error(w, "no such recipient", http.StatusBadRequest)
			return
		case "429":
			if seen == 0 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
		}
		w.WriteHeader(http.StatusOK)
	}
	watches := writeWatches(t, fmt.Sprintf("channels:\n  hook: {type: webhook, url: %s/hook, timeout: 1s}\nwatches:\n  - name: any\n    channels: [hook]\n", h.srv.URL))
	evs := openings(6, "fail")
	publish(t, s.addr, s.topic, evs)
	n := startNotifier(t, s.bin, s.env, s.args(kafkatest.Name(t, "g"), watches)...)
	waitUntil(t, 90*time.Second, "5 sent and 1 failed", func() bool {
		c := statusCounts(t, s.db)
		return c["sent"] == 5 && c["failed"] == 1
	}, n)
	n.stop(t)

	rows, err := s.db.Query(t.Context(), "select event->>'course_name', status, attempts, coalesce(error, '') from notifications")
	if err != nil {
		t.Fatal(err)
	}
	wantAttempts := map[string]int{"timeout": 2, "5xx": 2, "4xx": 1, "429": 2, "ok": 1}
	for rows.Next() {
		var course, status, errText string
		var attempts int
		if err := rows.Scan(&course, &status, &attempts, &errText); err != nil {
			t.Fatal(err)
		}
		b := behaviour[course]
		if attempts != wantAttempts[b] {
			t.Errorf("%s (%s): %d attempts, want %d", course, b, attempts, wantAttempts[b])
		}
		if (b == "4xx") != (status == "failed") {
			t.Errorf("%s (%s): status %s", course, b, status)
		}
		if b == "4xx" && !strings.Contains(errText, "HTTP 400") {
			t.Errorf("failed notification's error = %q, want HTTP 400", errText)
		}
	}
	// The receiver dedups by Idempotency-Key: the timed-out delivery arrived twice with one key.
	for k, c := range h.keyCounts() {
		if c > 2 {
			t.Errorf("key %s seen %d times", k, c)
		}
	}
	if len(h.keyCounts()) != 6 {
		t.Errorf("%d distinct keys, want 6", len(h.keyCounts()))
	}
	out, _, err := runCLI(t, t.Context(), map[string]string{"DATABASE_URL": envValue(s.env, "DATABASE_URL")}, "notifications", "--status", "failed")
	if err != nil || !strings.Contains(out, "HTTP 400") || !strings.Contains(out, "failed") {
		t.Errorf("notifications --status failed: %v\n%s", err, out)
	}
}

func TestNotifyReplaysSendNothingStaleOrAlreadySent(t *testing.T) {
	t.Parallel()
	s := newStack(t, secretEnv...)
	h := newHook(t)
	watches := writeWatches(t, fmt.Sprintf("channels:\n  hook: {type: webhook, url: %s/hook}\nwatches:\n  - name: everything\n    channels: [hook]\n", h.srv.URL))

	// The practice set: a season in April 2026, every opening long past the freshness window.
	var buf bytes.Buffer
	if _, err := practice.Generate(t.Context(), &buf, practice.Options{Days: 2}); err != nil {
		t.Fatal(err)
	}
	var old []events.Event
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		e, err := events.Decode(sc.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		old = append(old, e)
	}
	publish(t, s.addr, s.topic, old)
	group := kafkatest.Name(t, "g")
	n := startNotifier(t, s.bin, s.env, s.args(group, watches)...)
	waitUntil(t, 90*time.Second, "the practice set consumed", func() bool { return caughtUp(t, s.addr, group, s.topic, 3) }, n)
	c := statusCounts(t, s.db)
	if c["skipped:stale"] == 0 || len(c) != 1 {
		t.Errorf("after the practice set: %v, want only skipped:stale", c)
	}
	if got := len(h.all()); got != 0 {
		t.Errorf("the practice set sent %d messages", got)
	}
	stale := c["skipped:stale"]

	// Fresh openings go out once; a replay of them (crawler replay) sends nothing again.
	fresh := freshEvents(2, 3, "fresh", time.Now())
	publish(t, s.addr, s.topic, fresh)
	waitUntil(t, 60*time.Second, "6 sent", func() bool { return statusCounts(t, s.db)["sent"] == 6 }, n)
	publish(t, s.addr, s.topic, fresh)
	waitUntil(t, 60*time.Second, "the replay consumed", func() bool { return caughtUp(t, s.addr, group, s.topic, 3) }, n)
	n.stop(t)

	// A new notifier group from the earliest offset: everything again, nothing sent.
	group2 := kafkatest.Name(t, "g2")
	n2 := startNotifier(t, s.bin, s.env, s.args(group2, watches, "--from", "earliest")...)
	waitUntil(t, 90*time.Second, "the new group caught up", func() bool { return caughtUp(t, s.addr, group2, s.topic, 3) }, n2)
	n2.stop(t)
	if c := statusCounts(t, s.db); c["sent"] != 6 || c["skipped:stale"] != stale || len(c) != 2 {
		t.Errorf("after the replays: %v", c)
	}
	if got := len(h.keyCounts()); got != 2 || len(h.all()) != 2 {
		t.Errorf("receiver got %d requests with %d keys, want 2 messages (one per crawl)", len(h.all()), got)
	}
}

func TestNotifyCloseAlreadyStoredSkipsTheOpening(t *testing.T) {
	t.Parallel()
	s := newStack(t, secretEnv...)
	h := newHook(t)
	watches := writeWatches(t, fmt.Sprintf("channels:\n  hook: {type: webhook, url: %s/hook}\nwatches:\n  - name: everything\n    channels: [hook]\n", h.srv.URL))
	now := time.Now()
	evs := freshEvents(1, 2, "closed", now.Add(-time.Minute))
	l := events.Listing{Source: evs[0].Source, CourseName: evs[0].CourseName, CoursePart: evs[0].CoursePart,
		RoundDate: evs[0].RoundDate, PlayDate: evs[0].PlayDate, TeeTime: evs[0].TeeTime, Values: events.Values{PriceKRW: evs[0].PriceKRW, Players: evs[0].Players}}
	// The close comes first (another partition order, a replay): the opening before it is stale news.
	publish(t, s.addr, s.topic, []events.Event{events.Closed(l, "closed-crawl-1", now, events.Booked)})
	group := kafkatest.Name(t, "g")
	n := startNotifier(t, s.bin, s.env, s.args(group, watches)...)
	waitUntil(t, 60*time.Second, "the close consumed", func() bool { return caughtUp(t, s.addr, group, s.topic, 3) }, n)
	publish(t, s.addr, s.topic, evs)
	waitUntil(t, 60*time.Second, "one sent, one skipped", func() bool {
		c := statusCounts(t, s.db)
		return c["sent"] == 1 && c["skipped:closed"] == 1
	}, n)
	n.stop(t)
}

func TestNotifyTwoProcessesInOneGroupSendOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t, secretEnv...)
	h := newHook(t)
	watches := writeWatches(t, fmt.Sprintf("channels:\n  hook: {type: webhook, url: %s/hook}\nwatches:\n  - name: everything\n    channels: [hook]\n", h.srv.URL))
	group := kafkatest.Name(t, "g")
	p1 := startNotifier(t, s.bin, s.env, s.args(group, watches)...)
	p2 := startNotifier(t, s.bin, s.env, s.args(group, watches)...)
	evs := freshEvents(20, 3, "two", time.Now())
	publish(t, s.addr, s.topic, evs)
	publish(t, s.addr, s.topic, evs) // and a redelivery for good measure
	waitUntil(t, 90*time.Second, "60 sent", func() bool { return statusCounts(t, s.db)["sent"] == 60 }, p1, p2)
	waitUntil(t, 60*time.Second, "the group caught up", func() bool { return caughtUp(t, s.addr, group, s.topic, 3) }, p1, p2)
	p1.stop(t)
	p2.stop(t)
	seen := map[string]int{}
	for _, r := range h.all() {
		for _, m := range r.webhook(t).Matches {
			seen[m.CourseName]++
		}
	}
	if len(seen) != 60 {
		t.Errorf("%d events delivered, want 60", len(seen))
	}
	for c, k := range seen {
		if k != 1 {
			t.Errorf("%s delivered %d times", c, k)
		}
	}
	if c := statusCounts(t, s.db); len(c) != 1 {
		t.Errorf("statuses %v", c)
	}
}

func TestNotifyDryRunPrintsAndWritesNothing(t *testing.T) {
	t.Parallel()
	s := newStack(t, secretEnv...)
	h := newHook(t)
	watches := writeWatches(t, fmt.Sprintf("channels:\n  tg: {type: telegram, token_env: TG_TOKEN, chat_id: '1', base_url: %s}\nwatches:\n  - name: everything\n    channels: [tg]\n", h.srv.URL))
	publish(t, s.addr, s.topic, freshEvents(1, 3, "dry", time.Now()))
	publish(t, s.addr, s.topic, freshEvents(1, 2, "dryold", time.Now().Add(-2*time.Hour)))
	group := kafkatest.Name(t, "g")
	n := startNotifier(t, s.bin, s.env, s.args(group, watches, "--dry-run")...)
	waitUntil(t, 60*time.Second, "the dry run consumed", func() bool { return caughtUp(t, s.addr, group+"-dry-run", s.topic, 3) }, n)
	n.stop(t)
	out := n.stdout.String()
	if strings.Count(out, "would send to tg") != 3 || strings.Count(out, ": stale") != 2 {
		t.Errorf("dry run printed:\n%s", out)
	}
	if c := statusCounts(t, s.db); len(c) != 0 || len(h.all()) != 0 {
		t.Errorf("dry run wrote %v and sent %d", c, len(h.all()))
	}
	checkNoSecrets(t, "dry run stdout", out)
	checkNoSecrets(t, "dry run stderr", n.Logs.String())
}
