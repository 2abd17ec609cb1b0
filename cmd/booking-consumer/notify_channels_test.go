package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestNotifyOncePerMatchOnEveryChannelDespiteTriplicates: booking-consumer notify on every channel
// type at once (the webhook, Slack, Discord and Telegram), every event published three times and
// shuffled: each match is sent once per watch and channel, and no secret leaks.
func TestNotifyOncePerMatchOnEveryChannelDespiteTriplicates(t *testing.T) {
	t.Parallel()
	s := newStack(t, secretEnv...)
	h := newHook(t)
	watches := writeWatches(t, fmt.Sprintf(`
channels:
  hook: {type: webhook, url: %[1]s/hook}
  slack: {type: slack, url_env: SLACK_URL, base_url: %[1]s}
  discord: {type: discord, url_env: DISCORD_URL, base_url: %[1]s, language: en}
  tg: {type: telegram, token_env: TG_TOKEN, chat_id: "-100200", base_url: %[1]s, min_interval: 100ms}
watches:
  - name: all-lakes
    courses: [lake]
    channels: [hook, slack, discord, tg]
  - name: cheap
    max_price_krw: 100040
    channels: [hook]
`, h.srv.URL))
	evs := freshEvents(3, 10, "tri", time.Now())
	var all []events.Event
	for range 3 {
		all = append(all, evs...)
	}
	rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	publish(t, s.addr, s.topic, all)

	group := kafkatest.Name(t, "g")
	metricsAddr := testkit.FreeAddr(t)
	args := s.args(group, watches)
	args = append(args, "--metrics-addr", metricsAddr) // the last one wins
	n := startNotifier(t, s.bin, s.env, args...)
	const want = 30*4 + 15
	waitUntil(t, 90*time.Second, "every match sent", func() bool { return statusCounts(t, s.db)["sent"] == want }, n)
	waitUntil(t, 30*time.Second, "the group to commit every offset", func() bool { return caughtUp(t, s.addr, group, s.topic, 3) }, n)
	checkNotifierMetrics(t, metricsAddr)
	n.stop(t)
	if c := statusCounts(t, s.db); len(c) != 1 {
		t.Errorf("statuses = %v, want only %d sent", c, want)
	}

	checkOncePerWatchAndChannel(t, h, want)
	checkSentListing(t, s, n)
}

// checkNotifierMetrics: /healthz is 200, /metrics counts the sent and claimed matches and the lag,
// and holds no secret.
func checkNotifierMetrics(t *testing.T, metricsAddr string) {
	t.Helper()
	if code, body := healthz(metricsAddr); code != http.StatusOK {
		t.Errorf("/healthz = %d %s", code, body)
	}
	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range []string{`booking_notifier_sent_total{channel="hook"} 45`, `booking_notifier_sent_total{channel="tg"} 30`,
		`booking_notifier_claimed_total 135`, "booking_consumer_lag{"} {
		if !strings.Contains(string(metrics), line) {
			t.Errorf("/metrics lacks %q", line)
		}
	}
	checkNoSecrets(t, "/metrics", string(metrics))
}

// checkOncePerWatchAndChannel: per (watch, channel) every event arrived exactly once, on every
// channel's path, under distinct Idempotency-Keys, grouped into fewer messages than matches.
func checkOncePerWatchAndChannel(t *testing.T, h *hook, want int) {
	t.Helper()
	// Per (watch, channel): every event exactly once, across however many messages.
	seen := map[string]int{} // "path|watch|course"
	for _, r := range h.all() {
		switch r.Path {
		case "/hook":
			b := r.webhook(t)
			for _, m := range b.Matches {
				seen["hook|"+b.Watch+"|"+m.CourseName]++
			}
		default:
			var b struct{ Text, Content string }
			if err := json.Unmarshal(r.Body, &b); err != nil {
				t.Fatal(err)
			}
			for _, c := range courseRE.FindAllString(b.Text+b.Content, -1) {
				seen[r.Path+"|"+c]++
			}
		}
	}
	paths := map[string]bool{}
	for _, r := range h.all() {
		paths[r.Path] = true
	}
	for _, p := range []string{"/hook", "/services/T0/B0/" + slackSecret, "/api/webhooks/42/" + discordSec, "/bot" + tgToken + "/sendMessage"} {
		if !paths[p] {
			t.Errorf("no request on %s (got %v)", p, paths)
		}
	}
	if len(seen) != want {
		t.Errorf("%d distinct (channel, watch, event) deliveries, want %d", len(seen), want)
	}
	for k, c := range seen {
		if c != 1 {
			t.Errorf("%s delivered %d times", k, c)
		}
	}
	for k, c := range h.keyCounts() {
		if c != 1 {
			t.Errorf("Idempotency-Key %s seen %d times", k, c)
		}
	}
	if msgs := len(h.all()); msgs >= want {
		t.Errorf("%d messages for %d matches: matches of one watch and crawl were not grouped", msgs, want)
	}
	t.Logf("%d matches in %d messages", want, len(h.all()))
}

// checkSentListing: `notifications --status sent --watch cheap` lists the 15 cheap matches, and
// neither it nor the notifier's output holds a secret.
func checkSentListing(t *testing.T, s *stack, n *notifier) {
	t.Helper()
	stdout, stderr, err := runCLI(t, t.Context(), map[string]string{"DATABASE_URL": envValue(s.env, "DATABASE_URL")}, "notifications", "--status", "sent", "--watch", "cheap", "--json")
	if err != nil {
		t.Fatal(err, stderr)
	}
	if lines := strings.Count(stdout, "\n"); lines != 15 {
		t.Errorf("notifications --status sent --watch cheap: %d lines, want 15", lines)
	}
	checkNoSecrets(t, "the notifier's stderr", n.Logs.String())
	checkNoSecrets(t, "the notifier's stdout", n.stdout.String())
	checkNoSecrets(t, "the notifications listing", stdout+stderr)
}
