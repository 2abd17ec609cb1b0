package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/events"
)

// TelegramAPI is the Telegram Bot API base (a channel's base_url overrides it).
const TelegramAPI = "https://api.telegram.org"

// Message is one delivery: the matches of one watch from one crawl on one channel.
type Message struct {
	Key     uuid.UUID // Idempotency-Key
	Watch   string
	CrawlID string
	Events  []*events.Event
	Now     time.Time // for "how long ago"
}

// WebhookBody is the generic webhook's JSON body (also documented in the README).
type WebhookBody struct {
	IdempotencyKey string         `json:"idempotency_key"` // also the Idempotency-Key header
	Watch          string         `json:"watch"`
	Channel        string         `json:"channel"`
	CrawlID        string         `json:"crawl_id"`
	Text           string         `json:"text"` // the same text the chat channels get
	Matches        []WebhookMatch `json:"matches"`
}

// WebhookMatch is one event of a WebhookBody.
type WebhookMatch struct {
	EventID          uuid.UUID `json:"event_id"`
	EventType        string    `json:"event_type"`
	Source           string    `json:"source"`
	CourseName       string    `json:"course_name"`
	CoursePart       string    `json:"course_part"`
	PlayDate         string    `json:"play_date"`
	Weekday          string    `json:"weekday"`
	TeeTime          string    `json:"tee_time"`
	PriceKRW         *int64    `json:"price_krw"`
	PreviousPriceKRW *int64    `json:"previous_price_krw,omitempty"`
	Players          *int      `json:"players"`
	OccurredAt       time.Time `json:"occurred_at"`
}

// Request builds the HTTP request for m on ch. Every channel gets the Idempotency-Key header
// (only the generic webhook's receivers are expected to honour it).
func (ch *Channel) Request(ctx context.Context, m Message) (*http.Request, error) {
	text := Text(ch.Language, m.Watch, m.Events, m.Now)
	var body any
	target := ch.URL
	switch ch.Type {
	case Webhook:
		wb := WebhookBody{IdempotencyKey: m.Key.String(), Watch: m.Watch, Channel: ch.Name, CrawlID: m.CrawlID, Text: text}
		for _, e := range m.Events {
			wm := WebhookMatch{EventID: e.EventID, EventType: string(e.EventType), Source: e.Source,
				CourseName: e.CourseName, CoursePart: e.CoursePart, PlayDate: e.PlayDate, TeeTime: e.TeeTime,
				PriceKRW: e.PriceKRW, Players: e.Players, OccurredAt: e.OccurredAt}
			if d, err := time.Parse(events.DateLayout, e.PlayDate); err == nil {
				wm.Weekday = d.Weekday().String()
			}
			if e.Previous != nil {
				wm.PreviousPriceKRW = e.Previous.PriceKRW
			}
			wb.Matches = append(wb.Matches, wm)
		}
		body = wb
	case Slack:
		body = map[string]any{"text": text}
	case Discord:
		if len([]rune(text)) > 2000 {
			text = string([]rune(text)[:1997]) + "..."
		}
		body = map[string]any{"content": text, "allowed_mentions": map[string]any{"parse": []string{}}}
	case Telegram:
		target = TelegramAPI + "/bot" + ch.Token + "/sendMessage"
		if len([]rune(text)) > 4096 {
			text = string([]rune(text)[:4093]) + "..."
		}
		body = map[string]any{"chat_id": ch.ChatID, "text": text, "disable_web_page_preview": true}
	default:
		return nil, fmt.Errorf("channel %s: unknown type %q", ch.Name, ch.Type)
	}
	if ch.BaseURL != "" {
		u, err := url.Parse(target)
		if err != nil {
			return nil, fmt.Errorf("channel %s: the URL does not parse", ch.Name) // no URL: it may hold a secret
		}
		base, err := url.Parse(ch.BaseURL)
		if err != nil {
			return nil, fmt.Errorf("channel %s: base_url does not parse", ch.Name)
		}
		u.Scheme, u.Host = base.Scheme, base.Host
		u.Path = strings.TrimRight(base.Path, "/") + u.Path
		target = u.String()
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("channel %s: encode: %w", ch.Name, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("channel %s: the URL does not parse", ch.Name)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Idempotency-Key", m.Key.String())
	req.Header.Set("User-Agent", "golf-crawler-notifier/1")
	return req, nil
}

// SendError is a failed delivery: Transient ones are worth retrying (after RetryAfter, if the
// channel said so). Its text never holds the channel's URL or token.
type SendError struct {
	Transient  bool
	Status     int
	RetryAfter time.Duration
	Msg        string
}

func (e *SendError) Error() string { return e.Msg }

// Send delivers m on ch with client, classifying the outcome: nil (2xx), or a *SendError.
func (ch *Channel) Send(ctx context.Context, client *http.Client, m Message) error {
	rctx, cancel := context.WithTimeout(ctx, ch.Timeout)
	defer cancel()
	req, err := ch.Request(rctx, m)
	if err != nil {
		return &SendError{Msg: err.Error()}
	}
	resp, err := client.Do(req)
	if err != nil {
		// *url.Error carries the full URL (a Slack or Discord URL, a Telegram token): keep only
		// the cause.
		var ue *url.Error
		cause := err
		if errors.As(err, &ue) {
			cause = ue.Err
		}
		msg := cause.Error()
		if errors.Is(cause, context.DeadlineExceeded) || ue != nil && ue.Timeout() {
			msg = fmt.Sprintf("no answer within %v", ch.Timeout)
		}
		return &SendError{Transient: ctx.Err() == nil, Msg: fmt.Sprintf("channel %s: %s", ch.Name, msg)}
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	se := &SendError{Status: resp.StatusCode,
		Msg: fmt.Sprintf("channel %s: HTTP %d: %s", ch.Name, resp.StatusCode, strings.TrimSpace(string(snippet)))}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		se.Transient = true
		se.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), snippet)
	case resp.StatusCode >= 500, resp.StatusCode == http.StatusRequestTimeout:
		se.Transient = true
		se.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), nil)
	}
	return se
}

// retryAfter reads Retry-After (seconds or an HTTP date), or Telegram's parameters.retry_after,
// or Discord's retry_after (seconds, fractional).
func retryAfter(h string, body []byte) time.Duration {
	if h != "" {
		if s, err := strconv.ParseFloat(h, 64); err == nil && s >= 0 {
			return time.Duration(s * float64(time.Second))
		}
		if t, err := http.ParseTime(h); err == nil {
			return max(0, time.Until(t))
		}
	}
	var b struct {
		RetryAfter float64 `json:"retry_after"`
		Parameters struct {
			RetryAfter float64 `json:"retry_after"`
		} `json:"parameters"`
	}
	if len(body) > 0 && json.Unmarshal(body, &b) == nil {
		if b.Parameters.RetryAfter > 0 {
			return time.Duration(b.Parameters.RetryAfter * float64(time.Second))
		}
		if b.RetryAfter > 0 {
			return time.Duration(b.RetryAfter * float64(time.Second))
		}
	}
	return 0
}
