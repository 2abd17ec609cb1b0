package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/telegramtest"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestBothPathsDeliverTheSame (issue #50 item 5): one scenario through both binaries, fed by the
// same crawls (the crawler alerts itself from alerts.db and publishes to Kafka, where
// booking-consumer run stores the events and booking-consumer notify alerts from them), each path
// on channels of its own: a watch that matches nothing, then a watch added (its backlog), an
// opening, a chat's /watch (its backlog), a failed send and its resend. Per watch and channel,
// both paths delivered the same (listing, kind, price, players) and the same rendered line
// (its "how long ago" aside); how they were cut into messages may differ.
func TestBothPathsDeliverTheSame(t *testing.T) {
	t.Parallel()
	const crawlerToken, notifierToken = "5151:crawler-path-bot", "5252:central-path-bot"
	s := newStack(t, "TG_TOKEN="+notifierToken)
	crawlerBin := filepath.Join(t.TempDir(), "crawler")
	if out, err := exec.CommandContext(t.Context(), "go", "build", "-o", crawlerBin, "../crawler").CombinedOutput(); err != nil {
		t.Fatalf("go build crawler: %v\n%s", err, out)
	}
	var mu sync.Mutex
	page := [][3]string{{"12/20", "07:00", "140000"}, {"12/20", "09:00", "160000"}}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var b strings.Builder
		b.WriteString(`<html><body><table class="tee-list">`)
		for _, r := range page {
			fmt.Fprintf(&b, `<tr class="tee-row"><td class="course">레이크 CC</td><td class="part">OUT</td><td class="date">%s</td>`+
				`<td class="time">%s</td><td class="price">%s</td><td class="players">4</td></tr>`, r[0], r[1], r[2])
		}
		b.WriteString(`</table></body></html>`)
		_, _ = io.WriteString(w, b.String())
	}))
	t.Cleanup(site.Close)
	sites := testkit.WriteTemp(t, "sites.yaml", "sites:\n"+sitesim.TeeListSite("tee", site.URL+"/tee"))
	open := func(r [3]string) { mu.Lock(); page = append(page, r); mu.Unlock() }

	paths := map[string]*path{"crawler": newPath(t, crawlerToken), "central": newPath(t, notifierToken)}
	watches := func(p *path, ws string) string {
		return testkit.WriteTemp(t, "watches.yaml", fmt.Sprintf(`channels:
  hook: {type: webhook, url: %s/alerts}
  tg: {type: telegram, token_env: TG_TOKEN, chat_id: "100", base_url: %s, commands: true, min_interval: 0s}
watches:
  - {name: far, courses: [nowhere], channels: [hook]}
%s`, p.hook.URL, p.bot.URL(), ws))
	}
	cp, np := paths["crawler"], paths["central"]
	state := t.TempDir()
	crawlerEnv := append(slices.Clone(s.env), "KAFKA_TOPIC="+s.topic, "TG_TOKEN="+crawlerToken)
	crawler := func(w string, args ...string) {
		t.Helper()
		if args[0] == "once" {
			args = append(args, "--sites", sites)
		}
		cmd := exec.CommandContext(t.Context(), crawlerBin, append(args, "--watches", w, "--state-dir", state)...)
		cmd.Env = crawlerEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("crawler %s: %v\n%s", args[0], err, testkit.Tail(string(out), 3000))
		}
	}
	runGroup := kafkatest.Name(t, "run")
	consumerRun := testkit.Start(t, s.bin, s.env, "run", "--topic", s.topic, "--group", runGroup, "--metrics-addr", "", "--create-partitions", "0")
	t.Cleanup(func() { consumerRun.Stop(t, 30*time.Second) })
	notifyGroup := kafkatest.Name(t, "notify")
	startNotify := func(w string) *notifier {
		n := startNotifier(t, s.bin, s.env, s.args(notifyGroup, w)...)
		waitUntil(t, 60*time.Second, "the notifier to start", func() bool { return strings.Contains(n.Logs.String(), "consumer started") }, n)
		return n
	}
	stored := func(n int64, ps ...*notifier) {
		waitUntil(t, 60*time.Second, fmt.Sprintf("%d events stored", n), func() bool { return rows(t, s.db) >= n }, ps...)
	}

	// A watch that matches nothing: the first crawl (its openings are "far"'s backlog) sends nothing.
	n := startNotify(watches(np, ""))
	crawler(watches(cp, ""), "once")
	stored(2, n)
	n.stop(t)

	// A watch added: its backlog (07:00, 140,000원) on each path.
	cheap := "  - {name: cheap, max_price_krw: 150000, channels: [hook]}\n"
	wc, wn := watches(cp, cheap), watches(np, cheap)
	n = startNotify(wn)
	crawler(wc, "once")
	both(t, paths, 1, 0, n)

	// An opening (07:30, 130,000원).
	open([3]string{"12/20", "07:30", "130000"})
	crawler(wc, "once")
	both(t, paths, 2, 0, n)

	// A chat's /watch (09:00-10:00): its backlog, 09:00 at 160,000원. The crawler takes commands in
	// `crawler run` and answers the new watch at the next crawl; the notifier at once.
	run := testkit.Start(t, crawlerBin, crawlerEnv, "run", "--sites", sites, "--watches", wc, "--state-dir", state,
		"--no-initial-crawl", "--metrics-addr", "", "--schedule", "@every 24h")
	cp.ask(t, "/watch 09:00-10:00")
	run.Stop(t, 30*time.Second)
	crawler(wc, "once")
	np.ask(t, "/watch 09:00-10:00")
	both(t, paths, 2, 1, n)

	// A failed send (the webhook refuses 07:45, 120,000원), then `notifications resend` on each path.
	for _, p := range paths {
		p.refuse(true)
	}
	open([3]string{"12/20", "07:45", "120000"})
	crawler(wc, "once")
	waitUntil(t, 60*time.Second, "the central path's failed send", func() bool { return statusCounts(t, s.db)["failed"] == 1 }, n)
	for _, p := range paths {
		p.refuse(false)
	}
	crawler(wc, "notifications", "resend", "--status", "failed")
	if out, _, err := runCLI(t, t.Context(), map[string]string{"DATABASE_URL": envValue(s.env, "DATABASE_URL"), "TG_TOKEN": notifierToken},
		"notifications", "resend", "--status", "failed", "--watches", wn); err != nil {
		t.Fatalf("booking-consumer notifications resend: %v\n%s", err, out)
	}
	both(t, paths, 3, 1, n)
	n.stop(t)

	got, want := np.delivered(), cp.delivered()
	if len(want) != 2 || !slices.Equal(got["cheap hook"], want["cheap hook"]) || !slices.Equal(got["chat-1 tg"], want["chat-1 tg"]) || len(got) != len(want) {
		t.Fatalf("the central path delivered\n%s\nthe crawler path\n%s", show(got), show(want))
	}
	t.Logf("both paths delivered\n%s", show(want))
}

// path is one alert path's channels: a webhook that records what it accepted, and a chat bot.
type path struct {
	hook *httptest.Server
	bot  *telegramtest.Bot

	mu       sync.Mutex
	refusing bool
	hooked   []webhookDelivery
	tg       []string // the alerts the bot delivered (no answers)
}

// webhookDelivery is what the tests read of a generic webhook's body.
type webhookDelivery struct {
	Watch   string `json:"watch"`
	Channel string `json:"channel"`
	Text    string `json:"text"`
	Matches []struct {
		CourseName  string `json:"course_name"`
		PlayDate    string `json:"play_date"`
		TeeTime     string `json:"tee_time"`
		EventType   string `json:"event_type"`
		PriceKRW    *int64 `json:"price_krw"`
		Players     *int   `json:"players"`
		AlreadyOpen bool   `json:"already_open"`
	} `json:"matches"`
}

func newPath(t *testing.T, token string) *path {
	p := &path{bot: telegramtest.New(t, token)}
	p.hook = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var d webhookDelivery
		if err := json.NewDecoder(r.Body).Decode(&d); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.refusing {
			http.Error(w, "refused on purpose", http.StatusBadRequest)
			return
		}
		p.hooked = append(p.hooked, d)
	}))
	t.Cleanup(p.hook.Close)
	return p
}

func (p *path) refuse(on bool) {
	p.mu.Lock()
	p.refusing = on
	p.mu.Unlock()
}

// ask sends text in chat 100 and waits for its answer; alerts arriving meanwhile are kept.
func (p *path) ask(t *testing.T, text string) {
	t.Helper()
	id := p.bot.Say(100, "private", 100, text)
	for {
		m := testkit.Recv(t, p.bot.Sent, 30*time.Second, "the answer to "+text)
		if m.ReplyTo == id*10 {
			return
		}
		p.mu.Lock()
		p.tg = append(p.tg, m.Text)
		p.mu.Unlock()
	}
}

// counts drains the bot and returns how many matches the webhook accepted and the bot delivered.
func (p *path) counts() (hook, tg int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for drained := false; !drained; {
		select {
		case m := <-p.bot.Sent:
			p.tg = append(p.tg, m.Text)
		default:
			drained = true
		}
	}
	for _, d := range p.hooked {
		hook += len(d.Matches)
	}
	for _, m := range p.tg {
		tg += strings.Count(m, "\n• ")
	}
	return hook, tg
}

// both waits until each path's webhook accepted hook matches and its bot delivered tg.
func both(t *testing.T, paths map[string]*path, hook, tg int, n *notifier) {
	t.Helper()
	for name, p := range paths {
		waitUntil(t, 60*time.Second, fmt.Sprintf("the %s path's %d webhook and %d chat matches", name, hook, tg), func() bool {
			h, c := p.counts()
			return h >= hook && c >= tg
		}, n)
	}
}

// ago is the "how long ago" of a rendered line: it differs between the paths by when they sent.
var ago = regexp.MustCompile(`[0-9]+(초|분|시간 [0-9]+분|일째|시간째|분째)`)

// delivered is, per "watch channel", every match delivered: its listing, kind, price, players and
// rendered line ("how long ago" as N), sorted.
func (p *path) delivered() map[string][]string {
	p.counts()
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string][]string{}
	for _, d := range p.hooked {
		lines := strings.Split(d.Text, "\n")[1:]
		for i, m := range d.Matches {
			kind := m.EventType
			if m.AlreadyOpen {
				kind = "already_open"
			}
			out[d.Watch+" "+d.Channel] = append(out[d.Watch+" "+d.Channel], fmt.Sprintf("%s %s %s %s %d %d | %s",
				m.CourseName, m.PlayDate, m.TeeTime, kind, *m.PriceKRW, *m.Players, ago.ReplaceAllString(lines[i], "N")))
		}
	}
	for _, m := range p.tg {
		head, body, _ := strings.Cut(m, "\n")
		watch := strings.Fields(strings.TrimPrefix(head, "⛳ 티타임 알림: "))[0]
		for line := range strings.SplitSeq(body, "\n") {
			out[watch+" tg"] = append(out[watch+" tg"], ago.ReplaceAllString(line, "N"))
		}
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

func show(m map[string][]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "  %s:\n    %s\n", k, strings.Join(m[k], "\n    "))
	}
	return b.String()
}
