package main

import (
	"bytes"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/telegramtest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestResendSendsAChatWatchsFailed: `crawler notifications resend` sends a chat watch's failed
// alert again; it skipped it as watch_removed when it knew only the file's watches.
func TestResendSendsAChatWatchsFailed(t *testing.T) {
	t.Parallel()
	const token = "4545:resend-chat-token"
	bot := telegramtest.New(t, token)
	watches := testkit.WriteTemp(t, "watches.yaml", fmt.Sprintf(`channels:
  tg: {type: telegram, token_env: TG_TOKEN, chat_id: "100", base_url: %s, commands: true}
watches:
  - {name: far, courses: [nowhere], channels: [tg]}
`, bot.URL()))
	state := t.TempDir()
	st, err := openAlertStore(t.Context(), state)
	if err != nil {
		t.Fatal(err)
	}
	name, err := st.AddChatWatch(t.Context(), notify.ChatWatch{Channel: "tg", Spec: "레이크", CreatedAt: time.Now()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := notifyEvent("k1", time.Now())
	if _, err := st.Claim(t.Context(), notify.ClaimBatch{Now: time.Now(),
		Claims: []notify.Claim{{Key: notify.ClaimKey(name, "tg", ev.EventID), Watch: name, Channel: "tg", Event: ev}}}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	db, err := sql.Open("sqlite", alertsPath(state))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("update claims set status = 'failed', error = 'HTTP 403'"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var out bytes.Buffer
	if err := run(t.Context(), []string{"notifications", "resend", "--status", "failed", "--watches", watches, "--state-dir", state},
		env(map[string]string{"LOG_FORMAT": "text", "TG_TOKEN": token}), &out, &out); err != nil {
		t.Fatalf("resend: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "sent") || strings.Contains(out.String(), "watch_removed") {
		t.Fatalf("resend of the chat watch's alert:\n%s", out.String())
	}
	testkit.Recv(t, bot.Sent, 10*time.Second, "the resent alert")
}
