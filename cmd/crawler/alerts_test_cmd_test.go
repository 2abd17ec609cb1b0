package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestAlertsTestPrintsTheChannelsAnswer: `crawler alerts test --channel NAME` sends one message
// and prints the channel's answer: a Telegram chat_id that does not exist answers 400 "chat not
// found" (exit status 1), the right one 200; the bot token never shows in the output; a channel
// not in the file is a usage error naming the ones there.
func TestAlertsTestPrintsTheChannelsAnswer(t *testing.T) {
	t.Parallel()
	const token = "4242:alertsTestSecretToken"
	var texts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			ChatID string `json:"chat_id"`
			Text   string `json:"text"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &body); err != nil || r.URL.Path != "/bot"+token+"/sendMessage" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		texts = append(texts, body.Text) // one request at a time
		if body.ChatID != "-100200" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"ok":false,"error_code":400,"description":"Bad Request: chat not found"}`)
			return
		}
		_, _ = io.WriteString(w, `{"ok":true,"result":{"message_id":7}}`)
	}))
	t.Cleanup(srv.Close)
	watches := testkit.WriteTemp(t, "watches.yaml", "channels:\n"+
		"  wrong: {type: telegram, token_env: TG_TOKEN, chat_id: \"-100999\", base_url: "+srv.URL+"}\n"+
		"  right: {type: telegram, token_env: TG_TOKEN, chat_id: \"-100200\", base_url: "+srv.URL+", language: en}\n"+
		"watches:\n  - name: w\n    channels: [wrong, right]\n")
	test := func(channel string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(t.Context(), []string{"alerts", "test", "--watches", watches, "--channel", channel},
			env(map[string]string{"TG_TOKEN": token, "LOG_FORMAT": "text"}), &out, &errOut)
		if err != nil {
			errOut.WriteString(err.Error())
		}
		all := out.String() + errOut.String()
		if strings.Contains(all, "alertsTestSecretToken") {
			t.Errorf("alerts test --channel %s printed the token:\n%s", channel, all)
		}
		return all, err
	}
	out, err := test("wrong")
	if err == nil || !strings.Contains(out, "HTTP 400") || !strings.Contains(out, "chat not found") {
		t.Errorf("alerts test --channel wrong: %v\n%s\nwant an error and the answer: HTTP 400, chat not found", err, out)
	}
	out, err = test("right")
	if err != nil || !strings.Contains(out, "HTTP 200") || !strings.Contains(out, `"message_id":7`) || !strings.Contains(out, "accepted") {
		t.Errorf("alerts test --channel right: %v\n%s\nwant HTTP 200 and its body", err, out)
	}
	if len(texts) != 2 || !strings.Contains(texts[0], "테스트 메시지") || !strings.Contains(texts[1], "test message") {
		t.Errorf("texts sent %q, want one test message per run, in the channel's language", texts)
	}
	if out, err := test("missing"); !errors.Is(err, cli.ErrUsage) || !strings.Contains(out, "right, wrong") {
		t.Errorf("alerts test --channel missing: %v\n%s\nwant a usage error naming the channels", err, out)
	}
}
