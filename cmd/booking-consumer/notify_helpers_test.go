package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// The notifier tests' fixtures: local receivers, events, the notifier process, waits and checks.

// Secrets the tests put in the environment; none may appear in any output.
const (
	tgToken     = "4242:tgSecretTokenXYZ"
	slackSecret = "slackSecret1234abcd"
	discordSec  = "discordSecret987zyx"
)

// hookReq is one request a receiver got.
type hookReq struct {
	Path, Key string
	Body      []byte
}

// hook is a local receiver; respond decides each answer (nil: 200). It records every request
// before answering.
type hook struct {
	srv     *httptest.Server
	mu      sync.Mutex
	reqs    []hookReq
	respond func(r hookReq, seen int, w http.ResponseWriter, req *http.Request)
}

// webhookBody is what the tests read of a generic webhook's JSON body.
type webhookBody struct {
	Watch   string `json:"watch"`
	Matches []struct {
		CourseName string `json:"course_name"`
	} `json:"matches"`
}

// webhook decodes the body of a request to the generic webhook.
func (r hookReq) webhook(t *testing.T) webhookBody {
	t.Helper()
	var b webhookBody
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatal(err)
	}
	return b
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r := hookReq{Path: req.URL.Path, Key: req.Header.Get("Idempotency-Key"), Body: b}
		h.mu.Lock()
		seen := 0
		for _, o := range h.reqs {
			if o.Key == r.Key {
				seen++
			}
		}
		h.reqs = append(h.reqs, r)
		respond := h.respond
		h.mu.Unlock()
		if respond != nil {
			respond(r, seen, w, req)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) all() []hookReq {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookReq(nil), h.reqs...)
}

// keyCounts counts requests per Idempotency-Key.
func (h *hook) keyCounts() map[string]int {
	m := map[string]int{}
	for _, r := range h.all() {
		m[r.Key]++
	}
	return m
}

// course names are unique per event and never a substring of another: "Lake-c01-e003".
func courseName(crawl, i int) string { return fmt.Sprintf("Lake-c%02d-e%03d", crawl, i) }

var courseRE = regexp.MustCompile(`Lake-c\d\d-e\d\d\d`)

// freshEvents builds n openings per crawl for crawls crawls, at 'at'. Price 100000+10·i.
func freshEvents(crawls, n int, prefix string, at time.Time) []events.Event {
	var out []events.Event
	for c := range crawls {
		for i := range n {
			price, players := int64(100000+10*i), 4
			l := events.Listing{Source: "test", CourseName: courseName(c, i), CoursePart: "East", RoundDate: "2026-12-05",
				PlayDate: "2026-12-05", TeeTime: fmt.Sprintf("%02d:%02d", 6+i/4, (i%4)*15), Values: events.Values{PriceKRW: &price, Players: &players}}
			out = append(out, events.Opened(l, fmt.Sprintf("%s-crawl-%d", prefix, c), at))
		}
	}
	return out
}

// opening is one listing_opened event of course, observed by crawl at at.
func opening(course, crawl string, at time.Time) events.Event {
	price, players := int64(120000), 4
	l := events.Listing{Source: "test", CourseName: course, RoundDate: "2026-12-05", PlayDate: "2026-12-05",
		TeeTime: "07:30", Values: events.Values{PriceKRW: &price, Players: &players}}
	return events.Opened(l, crawl, at)
}

// openings is n listings opened now, course c of them in crawl "<prefix>-crawl-<c>".
func openings(n int, prefix string) []events.Event {
	var evs []events.Event
	for c := range n {
		evs = append(evs, opening(courseName(c, 0), fmt.Sprintf("%s-crawl-%d", prefix, c), time.Now()))
	}
	return evs
}

func publish(t *testing.T, addr, topic string, evs []events.Event) {
	t.Helper()
	kafkatest.Produce(t, addr, topic, kafkatest.Encode(t, evs))
}

func writeWatches(t *testing.T, yaml string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "watches.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// notifier is a running booking-consumer notify with its stdout (its stderr is in Logs).
type notifier struct {
	*testkit.Proc
	stdout *testkit.SyncBuffer
}

func startNotifier(t *testing.T, bin string, env []string, args ...string) *notifier {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stdout := &testkit.SyncBuffer{}
	cmd.Stdout = stdout
	return &notifier{Proc: testkit.StartCmd(t, cmd, env), stdout: stdout}
}

func (n *notifier) stop(t *testing.T) {
	t.Helper()
	n.Stop(t, 30*time.Second)
}

func statusCounts(t *testing.T, db *pgxpool.Pool) map[string]int {
	t.Helper()
	rows, err := db.Query(t.Context(), "select status || coalesce(':' || reason, ''), count(*) from notifications group by 1")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int{}
	var status string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&status, &n}, func() error { m[status] = n; return nil }); err != nil {
		t.Fatal(err)
	}
	return m
}

// waitUntil polls cond until it holds, failing after timeout with the processes' logs.
func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool, ps ...*notifier) {
	t.Helper()
	testkit.WaitForf(t, timeout, func() string {
		var logs strings.Builder
		for _, p := range ps {
			logs.WriteString(p.Logs.String())
		}
		return what + "; logs:\n" + logs.String()
	}, cond)
}

// caughtUp reports whether group has committed offsets up to the end of every partition.
func caughtUp(t *testing.T, addr, group, topic string, partitions int) bool {
	t.Helper()
	offsets, err := kafkatest.CommittedOffsets(t.Context(), addr, group, topic, partitions)
	if err != nil {
		return false
	}
	var committed int64
	for _, p := range offsets {
		committed += max(0, p.CommittedOffset)
	}
	end, err := kafkatest.EndOffsets(t.Context(), addr, topic)
	return err == nil && committed == end
}

// secretEnv is the notifier's environment with the channels' secrets.
var secretEnv = []string{"TG_TOKEN=" + tgToken, "SLACK_URL=https://hooks.slack.com/services/T0/B0/" + slackSecret,
	"DISCORD_URL=https://discord.com/api/webhooks/42/" + discordSec}

func (s *stack) args(group, watches string, extra ...string) []string {
	return append([]string{"notify", "--topic", s.topic, "--group", group, "--watches", watches, "--metrics-addr", "",
		"--lease", "2s", "--retry-backoff", "50ms", "--batch-wait", "20ms", "--create-partitions", "0"}, extra...)
}

func checkNoSecrets(t *testing.T, where, out string) {
	t.Helper()
	for _, s := range []string{tgToken, "tgSecretTokenXYZ", slackSecret, discordSec} {
		if strings.Contains(out, s) {
			t.Errorf("%s contains the secret %q", where, s)
		}
	}
}

func envValue(env []string, key string) string {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, key+"="); ok {
			return v
		}
	}
	return ""
}
