package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/telegramtest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestChatWatchFiresOnce: a golfer makes a watch with /watch in the chat of a command channel
// (fake Bot API) while `crawler run` runs; `crawler watches` lists it beside the file's; the next
// crawl sends what matches now once (the backlog), a tee time opening inside it later is sent
// once, and crawls that change nothing send nothing; a file watch cannot be removed from the chat.
func TestChatWatchFiresOnce(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	rows := []teeRow{{"12/20", "07:00", 140000}, {"12/20", "09:00", 120000}}
	site := teePage(t, func() []teeRow { mu.Lock(); defer mu.Unlock(); return append([]teeRow(nil), rows...) })
	const token = "4242:chat-test-token"
	bot := telegramtest.New(t, token)
	watches := testkit.WriteTemp(t, "watches.yaml", fmt.Sprintf(`channels:
  tg: {type: telegram, token_env: TG_TOKEN, chat_id: "100", base_url: %s, commands: true, min_interval: 0s}
watches:
  - {name: far, courses: [nowhere], channels: [tg]}
`, bot.URL()))
	state := filepath.Join(t.TempDir(), "state")
	e := env(map[string]string{"KAFKA_BOOTSTRAP": "", "LOG_FORMAT": "text", "TG_TOKEN": token})
	sites := teeSitesFile(t, site.URL)
	once := func(step string) {
		t.Helper()
		var out bytes.Buffer
		if err := run(t.Context(), []string{"once", "--sites", sites, "--watches", watches, "--state-dir", state}, e, &out, &out); err != nil ||
			strings.Contains(out.String(), "left claimed") {
			t.Fatalf("%s: once: %v\n%s", step, err, tail(out.String()))
		}
	}
	alerts := func() []string { // the alerts sent since the last call (no command answers)
		var out []string
		for {
			select {
			case m := <-bot.Sent:
				if m.ReplyTo != 0 {
					t.Fatalf("an unexpected answer: %q", m.Text)
				}
				out = append(out, m.Text)
			default:
				return out
			}
		}
	}

	once("first crawl") // nothing matches "far"
	if got := alerts(); len(got) != 0 {
		t.Fatalf("first crawl sent %q", got)
	}

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		var out testkit.SyncBuffer
		done <- run(ctx, []string{"run", "--sites", sites, "--watches", watches, "--state-dir", state, "--no-initial-crawl",
			"--metrics-addr", "off", "--schedule", "@every 192h"}, e, &out, &out)
	}()
	ask := func(text string) string {
		id := bot.Say(100, "private", 100, text)
		m := testkit.Recv(t, bot.Sent, 20*time.Second, "the answer to "+text)
		if m.ReplyTo != id*10 {
			t.Fatalf("%q: got %q (to message %d)", text, m.Text, m.ReplyTo)
		}
		return m.Text
	}
	if a := ask("/watch 05:00-08:00 15만 레이크"); !strings.Contains(a, "chat-1") || !strings.Contains(a, "05:00–08:00, 150,000원 이하, 코스에 '레이크'") {
		t.Fatalf("/watch answered %q", a)
	}
	if a := ask("/remove far"); !strings.Contains(a, "watches 파일의 알림") {
		t.Fatalf("/remove of a file watch answered %q", a)
	}
	cancel()
	testkit.NoErr(t, done, 30*time.Second, "crawler run stops")

	var list bytes.Buffer
	if err := run(t.Context(), []string{"watches", "--watches", watches, "--state-dir", state}, e, &list, &list); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(list.String(), "far     file  tg        -      course has 'nowhere'") ||
		!strings.Contains(list.String(), "chat-1  chat  tg        -      05:00–08:00, up to 150,000 KRW, course has '레이크'") {
		t.Fatalf("crawler watches:\n%s", list.String())
	}

	once("the chat's watch asks")
	got := alerts()
	if len(got) != 1 || !strings.Contains(got[0], "07:00") || strings.Contains(got[0], "09:00") || !strings.Contains(got[0], "열려 있음") {
		t.Fatalf("the chat watch's backlog: %q; want the 07:00 tee time once, as already open", got)
	}
	mu.Lock()
	rows = append(rows, teeRow{"12/20", "07:30", 150000}, teeRow{"12/20", "07:40", 150001})
	mu.Unlock()
	once("07:30 opens")
	once("nothing changes")
	got = alerts()
	if len(got) != 1 || !strings.Contains(got[0], "07:30") || strings.Contains(got[0], "07:40") || strings.Contains(got[0], "07:00") {
		t.Fatalf("after 07:30 opened and a crawl that changed nothing: %q; want the 07:30 opening once", got)
	}
}

// TestChatConflictInHealthz: a bot another process polls (the fake answers 409) stops the
// command poller of `crawler run`, and /healthz answers 503 naming the channel, without the token.
func TestChatConflictInHealthz(t *testing.T) {
	t.Parallel()
	const token = "4343:conflict-token"
	bot := telegramtest.New(t, token)
	bot.Conflict(true)
	addr, out, stop := commandRun(t, bot, token)
	var body string
	testkit.WaitFor(t, 60*time.Second, "/healthz to report the conflict", func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(body, "alerts_commands: channel tg")
	})
	if strings.Contains(body, token) || strings.Contains(out.String(), token) {
		t.Fatalf("the token leaked: %s\n%s", body, out.String())
	}
	if !strings.Contains(out.String(), "409 Conflict") {
		t.Errorf("no log of the conflict:\n%s", tail(out.String()))
	}
	stop()
}

// TestChatPollFailuresInHealthz (review 4 F3): getUpdates failing for longer than
// --alert-failing-after puts `crawler run`'s /healthz at 503 with alerts_commands "failing
// (since …)"; once a poll succeeds again it is back to "polling".
func TestChatPollFailuresInHealthz(t *testing.T) {
	t.Parallel()
	const token = "4344:failing-token"
	bot := telegramtest.New(t, token)
	bot.FailUpdates(http.StatusBadGateway)
	addr, out, stop := commandRun(t, bot, token, "--alert-failing-after", "1s")
	healthz := func() (int, string) {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var body string
	testkit.WaitForf(t, 60*time.Second, func() string { return "/healthz to report the failing poller; last:\n" + body }, func() bool {
		var code int
		code, body = healthz()
		return code == http.StatusServiceUnavailable && strings.Contains(body, `"tg":"failing (since `) &&
			strings.Contains(body, "alerts_commands: channel tg: failing (since ")
	})
	if strings.Contains(body, token) || strings.Contains(out.String(), token) {
		t.Fatalf("the token leaked: %s\n%s", body, out.String())
	}
	bot.FailUpdates(0)
	id := bot.Say(100, "private", 100, "/help")
	if m := testkit.Recv(t, bot.Sent, 90*time.Second, "the answer to /help"); m.ReplyTo != id*10 {
		t.Fatalf("answer %q to %d", m.Text, m.ReplyTo)
	}
	testkit.WaitForf(t, 30*time.Second, func() string { return "/healthz to be ok again; last:\n" + body }, func() bool {
		var code int
		code, body = healthz()
		return code == http.StatusOK && strings.Contains(body, `"tg":"polling"`)
	})
	stop()
	if lines := out.Lines("answer a command"); len(lines) > 0 {
		t.Errorf("an answered command logged as a failure: %q", lines)
	}
}

// commandRun is `crawler run` (no crawl due) with a watches file whose command channel tg is on
// bot, /metrics and /healthz on addr; stop stops it and waits for it.
func commandRun(t *testing.T, bot *telegramtest.Bot, token string, extra ...string) (addr string, out *testkit.SyncBuffer, stop func()) {
	t.Helper()
	site := teePage(t, func() []teeRow { return nil })
	watches := testkit.WriteTemp(t, "watches.yaml", fmt.Sprintf(`channels:
  tg: {type: telegram, token_env: TG_TOKEN, chat_id: "100", base_url: %s, commands: true}
watches:
  - {name: far, courses: [nowhere], channels: [tg]}
`, bot.URL()))
	addr = testkit.FreeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	out = &testkit.SyncBuffer{}
	go func() {
		done <- run(ctx, append([]string{"run", "--sites", teeSitesFile(t, site.URL), "--watches", watches, "--state-dir", t.TempDir(),
			"--no-initial-crawl", "--metrics-addr", addr, "--schedule", "@every 192h"}, extra...),
			env(map[string]string{"KAFKA_BOOTSTRAP": "", "LOG_FORMAT": "text", "TG_TOKEN": token}), out, out)
	}()
	return addr, out, func() {
		cancel()
		testkit.NoErr(t, done, 30*time.Second, "crawler run stops")
	}
}
