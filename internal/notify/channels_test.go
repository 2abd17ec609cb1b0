package notify

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/events"
)

type captured struct {
	path, idem, ctype string
	body              map[string]any
}

func receiver(t *testing.T, status int, header map[string]string, body string) (*httptest.Server, chan captured) {
	got := make(chan captured, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Errorf("body is not JSON: %s", b)
		}
		got <- captured{path: r.URL.Path, idem: r.Header.Get("Idempotency-Key"), ctype: r.Header.Get("Content-Type"), body: m}
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

func TestChannelRequestFormats(t *testing.T) {
	e := ev(events.ListingOpened, "Lakeside", "2026-12-05", "07:30", 120000, 4)
	e.EventID = uuid.New()
	e.OccurredAt = time.Now().Add(-time.Minute)
	key := ClaimKey("w", "c", e.EventID)
	msg := Message{Key: key, Watch: "w", CrawlID: "crawl-1", Events: []*events.Event{e}, Now: time.Now()}
	const secretPath = "/services/T000/B000/sEcReTsEcReT"
	cases := []struct {
		typ      ChannelType
		url      string
		wantPath string
		check    func(t *testing.T, b map[string]any)
	}{
		{Webhook, "http://example.invalid/alerts", "/alerts", func(t *testing.T, b map[string]any) {
			if b["idempotency_key"] != key.String() || b["watch"] != "w" || b["crawl_id"] != "crawl-1" || b["channel"] != "c" {
				t.Errorf("webhook body = %v", b)
			}
			ms := b["matches"].([]any)
			m := ms[0].(map[string]any)
			if len(ms) != 1 || m["course_name"] != "Lakeside" || m["play_date"] != "2026-12-05" || m["weekday"] != "Saturday" ||
				m["tee_time"] != "07:30" || m["price_krw"] != 120000.0 || m["players"] != 4.0 || m["event_id"] != e.EventID.String() {
				t.Errorf("webhook match = %v", m)
			}
		}},
		{Slack, "https://hooks.slack.com" + secretPath, secretPath, func(t *testing.T, b map[string]any) {
			if s, _ := b["text"].(string); !strings.Contains(s, "Lakeside") || len(b) != 1 {
				t.Errorf("slack body = %v", b)
			}
		}},
		{Discord, "https://discord.com/api/webhooks/1/tOkEn", "/api/webhooks/1/tOkEn", func(t *testing.T, b map[string]any) {
			if s, _ := b["content"].(string); !strings.Contains(s, "07:30") {
				t.Errorf("discord body = %v", b)
			}
		}},
		{Telegram, "", "/bot123:tgToken/sendMessage", func(t *testing.T, b map[string]any) {
			if s, _ := b["text"].(string); b["chat_id"] != "-1001" || !strings.Contains(s, "120,000원") {
				t.Errorf("telegram body = %v", b)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(string(tc.typ), func(t *testing.T) {
			srv, got := receiver(t, 200, nil, "ok")
			ch := &Channel{Name: "c", Type: tc.typ, URL: tc.url, Token: "123:tgToken", ChatID: "-1001", BaseURL: srv.URL,
				Language: "ko", Timeout: 5 * time.Second}
			if err := ch.Send(t.Context(), srv.Client(), msg); err != nil {
				t.Fatal(err)
			}
			c := <-got
			if c.path != tc.wantPath || c.idem != key.String() || !strings.HasPrefix(c.ctype, "application/json") {
				t.Errorf("request: path %q idempotency-key %q content-type %q", c.path, c.idem, c.ctype)
			}
			tc.check(t, c.body)
		})
	}
}

func TestSendClassifiesAnswersWithoutLeakingTheURL(t *testing.T) {
	cases := []struct {
		status     int
		header     map[string]string
		body       string
		transient  bool
		retryAfter time.Duration
	}{
		{429, map[string]string{"Retry-After": "3"}, "", true, 3 * time.Second},
		{429, nil, `{"ok":false,"error_code":429,"parameters":{"retry_after":7}}`, true, 7 * time.Second},
		{503, nil, "busy", true, 0},
		{400, nil, "bad chat", false, 0},
		{404, nil, "no such hook", false, 0},
	}
	for _, tc := range cases {
		srv, _ := receiver(t, tc.status, tc.header, tc.body)
		ch := &Channel{Name: "c", Type: Telegram, Token: "999:SeCrEt", ChatID: "1", BaseURL: srv.URL, Timeout: 5 * time.Second}
		err := ch.Send(t.Context(), srv.Client(), Message{Key: uuid.New(), Watch: "w"})
		var se *SendError
		if !errors.As(err, &se) {
			t.Fatalf("%d: err = %v", tc.status, err)
		}
		if se.Transient != tc.transient || se.RetryAfter != tc.retryAfter || se.Status != tc.status {
			t.Errorf("%d: %+v", tc.status, se)
		}
		if strings.Contains(se.Error(), "SeCrEt") {
			t.Errorf("error leaks the token: %v", se)
		}
	}
	// A refused connection: the url.Error would print the URL with the token.
	ch := &Channel{Name: "c", Type: Telegram, Token: "999:SeCrEt", ChatID: "1", BaseURL: "http://127.0.0.1:1", Timeout: time.Second}
	err := ch.Send(t.Context(), http.DefaultClient, Message{Key: uuid.New(), Watch: "w"})
	var se *SendError
	if !errors.As(err, &se) || !se.Transient || strings.Contains(err.Error(), "SeCrEt") {
		t.Errorf("refused connection: %v", err)
	}
}
