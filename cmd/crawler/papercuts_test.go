package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/telegramtest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// The papercuts of issue #50 item 6, tried as a new user would.

// TestOnceSaysNothingAbandonedAfterEverySent: `crawler once --watches` whose alerts were all
// sent ends without "sends still in flight … abandoned" (every run said it, right after "every
// claim sent").
func TestOnceSaysNothingAbandonedAfterEverySent(t *testing.T) {
	t.Parallel()
	site := teePage(t, func() []teeRow { return []teeRow{{"12/20", "07:00", 120000}} })
	rc := newReceiver(t, nil)
	o := newOnceRun(t, site.URL, rc.srv.URL, cheapAndAll)
	out, err := o.once(t)
	if err != nil {
		t.Fatalf("once: %v\n%s", err, tail(out))
	}
	if !strings.Contains(out, "every claim sent") || strings.Contains(out, "abandoned") || strings.Contains(out, "sends in flight") {
		t.Fatalf("once after every alert was sent:\n%s", tail(out))
	}
}

// TestWatchesListsWithoutTheSecrets: `crawler watches` lists the watches without the channels'
// secrets in the environment (it sends nothing); it refused while the bot token was unset.
func TestWatchesListsWithoutTheSecrets(t *testing.T) {
	t.Parallel()
	watches := testkit.WriteTemp(t, "watches.yaml", `channels:
  tg: {type: telegram, token_env: TG_TOKEN, chat_id: "100", commands: true}
  slack: {type: slack, url_env: SLACK_URL}
watches:
  - {name: far, courses: [nowhere], channels: [tg, slack]}
`)
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"watches", "--watches", watches, "--state-dir", t.TempDir()}, env(nil), &out, &errOut); err != nil {
		t.Fatalf("crawler watches without TG_TOKEN and SLACK_URL: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), "far file tg,slack - course has 'nowhere'") {
		t.Fatalf("crawler watches:\n%s", out.String())
	}
}

// TestCorrectedChatIDGetsTheBacklog: a telegram channel whose chat_id was wrong failed a watch's
// backlog (Telegram: "chat not found"); once the chat_id is corrected, the next run sends it what
// is open now (it took `notifications resend`).
func TestCorrectedChatIDGetsTheBacklog(t *testing.T) {
	t.Parallel()
	site := teePage(t, func() []teeRow { return []teeRow{{"12/20", "07:00", 120000}} })
	const token = "4545:chat-id-token"
	bot := telegramtest.New(t, token)
	bot.Chats(100)
	state := t.TempDir()
	sites := teeSitesFile(t, site.URL)
	once := func(chatID string) string {
		t.Helper()
		watches := testkit.WriteTemp(t, "watches-"+chatID+".yaml", fmt.Sprintf(`channels:
  tg: {type: telegram, token_env: TG_TOKEN, chat_id: "%s", base_url: %s, min_interval: 0s}
watches:
  - {name: all, channels: [tg]}
`, chatID, bot.URL()))
		var out bytes.Buffer
		if err := run(t.Context(), []string{"once", "--sites", sites, "--watches", watches, "--state-dir", state},
			env(map[string]string{"KAFKA_BOOTSTRAP": "", "LOG_FORMAT": "text", "TG_TOKEN": token}), &out, &out); err != nil {
			t.Fatalf("once with chat_id %s: %v\n%s", chatID, err, tail(out.String()))
		}
		return out.String()
	}
	once("999")
	if r := bot.Refused(); len(r) != 1 {
		t.Fatalf("the wrong chat_id's sends: %d refused, want 1", len(r))
	}
	out := once("100")
	m := testkit.Recv(t, bot.Sent, 10*time.Second, "the backlog on the corrected chat_id; the run said:\n"+tail(out))
	if !strings.Contains(m.Text, "07:00") || !strings.Contains(m.Text, "열려 있음") {
		t.Fatalf("sent %q; want the 07:00 tee time, as already open", m.Text)
	}
}
