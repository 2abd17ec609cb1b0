package notify

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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
		var se *sendError
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
	var se *sendError
	if !errors.As(err, &se) || !se.Transient || strings.Contains(err.Error(), "SeCrEt") {
		t.Errorf("refused connection: %v", err)
	}
}

// hostileCourse is a course name carrying Slack control sequences (an @channel ping and a
// disguised link) and Discord's masked-link markdown, as a crawled page may carry them.
const hostileCourse = "<!channel> 레이크 CC <https://evil.example/pay|지금 예약 50% 할인> [무료](https://evil.example/) & *co*"

// TestCrawledTextCannotControlChatChannels: on Slack, & < > are escaped (Slack's
// documented escaping), so no <!channel> ping and no <url|label> link; on Discord no mention is
// parsed and markdown is escaped, so no masked link; Telegram gets plain text (no parse_mode).
func TestCrawledTextCannotControlChatChannels(t *testing.T) {
	e := ev(events.ListingOpened, hostileCourse, "2026-12-05", "07:30", 120000, 4)
	e.OccurredAt = time.Now()
	msg := Message{Key: uuid.New(), Watch: "w", CrawlID: "crawl-1", Events: []*events.Event{e}, Now: time.Now()}
	cases := []struct {
		typ   ChannelType
		field string
		want  []string // substrings of the text as sent
		never []string
		check func(t *testing.T, b map[string]any)
	}{
		{Slack, "text", []string{"&lt;!channel&gt; 레이크 CC &lt;https://evil.example/pay|지금 예약 50% 할인&gt;", "&amp; *co*"},
			[]string{"<!channel>", "<https://", "& *co*"}, nil},
		{Discord, "content", []string{`\[무료\](https://evil.example/)`, `\*co\*`}, []string{"[무료]("},
			func(t *testing.T, b map[string]any) {
				am, _ := b["allowed_mentions"].(map[string]any)
				if p, ok := am["parse"].([]any); !ok || len(p) != 0 {
					t.Errorf("discord allowed_mentions = %v, want parse: []", b["allowed_mentions"])
				}
			}},
		{Telegram, "text", []string{hostileCourse}, nil, func(t *testing.T, b map[string]any) {
			if _, ok := b["parse_mode"]; ok {
				t.Errorf("telegram body has parse_mode: %v", b)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(string(tc.typ), func(t *testing.T) {
			srv, got := receiver(t, 200, nil, "ok")
			ch := &Channel{Name: "c", Type: tc.typ, URL: "https://example.invalid/x", Token: "1:t", ChatID: "1", BaseURL: srv.URL,
				Language: "ko", Timeout: 5 * time.Second}
			if err := ch.Send(t.Context(), srv.Client(), msg); err != nil {
				t.Fatal(err)
			}
			b := (<-got).body
			text, _ := b[tc.field].(string)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("%s %s = %q, want it to contain %q", tc.typ, tc.field, text, w)
				}
			}
			for _, w := range tc.never {
				if strings.Contains(text, w) {
					t.Errorf("%s %s = %q holds %q", tc.typ, tc.field, text, w)
				}
			}
			if tc.check != nil {
				tc.check(t, b)
			}
		})
	}
}

// TestChatRequestIsNotReplayedByTheTransport: Go's transport silently re-sends a request that
// carries an Idempotency-Key when a reused connection closes after the request was written. A chat
// channel honours no key, so that replay would post the message twice: the request goes out once,
// and the outcome is unknown.
func TestChatRequestIsNotReplayedByTheTransport(t *testing.T) {
	var mu sync.Mutex
	requests := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		requests++
		n := requests
		mu.Unlock()
		if n == 2 { // read the request, then drop the connection without an answer
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}
	}))
	t.Cleanup(srv.Close)
	ch := &Channel{Name: "c", Type: Slack, URL: "https://example.invalid/x", BaseURL: srv.URL, Timeout: 5 * time.Second}
	client := srv.Client()
	if err := ch.Send(t.Context(), client, Message{Key: uuid.New(), Watch: "w"}); err != nil {
		t.Fatal(err) // the first request: a keep-alive connection to reuse
	}
	err := ch.Send(t.Context(), client, Message{Key: uuid.New(), Watch: "w"})
	mu.Lock()
	defer mu.Unlock()
	var se *sendError
	if requests != 2 || !errors.As(err, &se) || se.Transient {
		t.Errorf("the second message reached the channel in %d requests (err %v), want 1 and an unknown outcome", requests-1, err)
	}
}
