package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/events"
)

// telegramAPI is the Telegram Bot API base (a channel's base_url overrides it).
const telegramAPI = "https://api.telegram.org"

// Message is one delivery: the matches of one watch from one crawl on one channel.
type Message struct {
	Key     uuid.UUID // Idempotency-Key
	Watch   string
	CrawlID string
	Events  []*events.Event
	// Backlog[i] (when not nil) says Events[i] is a backlog match (GroupClaim.Backlog): worded
	// as already open ("open for 3 days"), never as just opened.
	Backlog []bool
	Now     time.Time // for "how long ago"
	// Part of Parts: a group split in several messages (Split) says "(Part/Parts)" in its header;
	// 0 or 1 Parts: not split.
	Part, Parts int
	// Text, when set, is the whole message instead of the matches' (a test message, TestMessage).
	Text string
}

// WebhookBody is the generic webhook's JSON body (also documented in docs/alerts.md).
type WebhookBody struct {
	IdempotencyKey string         `json:"idempotency_key"` // also the Idempotency-Key header
	Watch          string         `json:"watch"`
	Channel        string         `json:"channel"`
	CrawlID        string         `json:"crawl_id"`
	Text           string         `json:"text"` // the same text the chat channels get
	Matches        []webhookMatch `json:"matches"`
}

// webhookMatch is one event of a WebhookBody.
type webhookMatch struct {
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
	// AlreadyOpen: a backlog match (open before the watch asked; occurred_at is its first-seen
	// time), not an opening.
	AlreadyOpen bool `json:"already_open,omitempty"`
}

// BotAPI is the Bot API URL of method for a telegram channel (its base_url honoured); it holds
// the token: never print it.
func (ch *Channel) BotAPI(method string) string {
	base := telegramAPI
	if ch.BaseURL != "" {
		base = ch.BaseURL
	}
	return base + "/bot" + ch.Token + "/" + method
}

// Request builds the HTTP request for m on ch. Every channel gets the Idempotency-Key header
// (only the generic webhook's receivers are expected to honour it).
func (ch *Channel) Request(ctx context.Context, m Message) (*http.Request, error) {
	text := ch.layout().text(m.Watch, m.Events, m.Backlog, m.Now, m.Part, m.Parts)
	if m.Text != "" {
		text = ch.layout().escape(m.Text)
	}
	var body any
	target := ch.URL
	switch ch.Type {
	case Webhook:
		wb := WebhookBody{IdempotencyKey: m.Key.String(), Watch: m.Watch, Channel: ch.Name, CrawlID: m.CrawlID, Text: text,
			Matches: []webhookMatch{}}
		for i, e := range m.Events {
			wm := webhookMatch{AlreadyOpen: i < len(m.Backlog) && m.Backlog[i], EventID: e.EventID, EventType: string(e.EventType), Source: e.Source,
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
		body = map[string]any{"content": text, "allowed_mentions": map[string]any{"parse": []string{}}}
	case Telegram:
		target = telegramAPI + "/bot" + ch.Token + "/sendMessage" // base_url applied below
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
	if !ch.Idempotent() {
		// Without GetBody Go's transport cannot replay the request (it replays one carrying an
		// Idempotency-Key when a reused connection closes after the request was written): a
		// chat channel would post it twice.
		req.GetBody = nil
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Idempotency-Key", m.Key.String())
	req.Header.Set("User-Agent", "golf-crawler-notifier/1")
	return req, nil
}

// The limits on one message's text, after escaping (the generic webhook has none: its matches
// carry every match of the message).
const (
	discordLimit  = 2000 // content
	telegramLimit = 4096 // text
	slackLimit    = 4000 // text: Slack truncates longer ones
)

// layout is how ch writes a message: its language, escaping and limit.
func (ch *Channel) layout() layout {
	l := layout{w: wordingOf(ch.Language), escape: plain}
	switch ch.Type {
	case Slack:
		l.escape, l.limit = slackEscape.Replace, slackLimit
	case Discord:
		l.escape, l.limit = discordEscape.Replace, discordLimit
	case Telegram:
		l.limit = telegramLimit
	}
	return l
}

// Split cuts the matches of one new group of watch (in claim order) into the messages ch sends
// them in: the sizes of consecutive parts, each at most MaxEventsPerMessage matches and within
// the channel's limit whenever it is sent (a line is never cut; a single line over the limit is
// shortened, keeping tee time, date and price). The store persists the split with its keys.
func (ch *Channel) Split(watch string, evs []*events.Event) []int {
	return ch.layout().split(watch, evs)
}

// Text that came from a crawled page (course names, parts) must not act as markup:
//   - Slack reads <!channel>, <!here> and <URL|label> as control sequences; its documented
//     escaping is & < > as HTML entities (https://api.slack.com/reference/surfaces/formatting).
//   - Discord reads markdown ([label](url) is a masked link); a backslash makes a character
//     literal. Mentions are off anyway (allowed_mentions.parse: []).
//   - Telegram gets plain text (no parse_mode): nothing to escape.
var (
	slackEscape   = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	discordEscape = strings.NewReplacer(`\`, `\\`, "*", `\*`, "_", `\_`, "~", `\~`, "`", "\\`", "|", `\|`,
		"[", `\[`, "]", `\]`, "<", `\<`, ">", `\>`)
)

// Idempotent reports whether the channel honours the Idempotency-Key, so that a request re-sent
// with the same key is delivered once: only the generic webhook's receivers are expected to.
func (ch *Channel) Idempotent() bool { return ch.Type == Webhook }

// sendError is a failed delivery. Transient ones are worth retrying (after RetryAfter, if the
// channel said so). Unknown ones may have been delivered: the request was sent, no answer came,
// and the channel honours no idempotency key, so a retry could post it twice. Its text never holds
// the channel's URL or token.
type sendError struct {
	Transient  bool
	Unknown    bool
	Status     int
	RetryAfter time.Duration
	Msg        string
}

func (e *sendError) Error() string { return e.Msg }

// noRedirects is the redirect policy of every alert request (a delivery, a test message, the
// chat's getUpdates and answers): a 3xx is the answer (a followed 301/302/303 turns the POST into
// a bodiless GET whose 2xx would count as delivered).
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// NewClient is the HTTP client of alert requests over transport (nil: a clone of Go's default
// transport): it follows no redirect (noRedirects).
func NewClient(transport http.RoundTripper) *http.Client {
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	return &http.Client{Transport: transport, CheckRedirect: noRedirects}
}

// Send delivers m on ch with client (its redirect policy replaced by noRedirects), classifying
// the outcome: nil (2xx), or a *sendError.
func (ch *Channel) Send(ctx context.Context, client *http.Client, m Message) error {
	_, err := ch.Exchange(ctx, client, m)
	return err
}

// Answer is what a channel answered one request: its HTTP status and the start of its body.
type Answer struct {
	Status int
	Body   string // at most 512 bytes
}

// Exchange is Send, also returning the channel's answer (zero when none came).
func (ch *Channel) Exchange(ctx context.Context, client *http.Client, m Message) (Answer, error) {
	rctx, cancel := context.WithTimeout(ctx, ch.Timeout)
	defer cancel()
	var sent atomic.Bool // the whole request was written
	rctx = httptrace.WithClientTrace(rctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) { sent.Store(i.Err == nil) }})
	req, err := ch.Request(rctx, m)
	if err != nil {
		return Answer{}, &sendError{Msg: err.Error()}
	}
	c := *client
	c.CheckRedirect = noRedirects
	resp, err := c.Do(req)
	if err != nil {
		return Answer{}, ch.noAnswer(ctx, err, sent.Load())
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	answer := Answer{Status: resp.StatusCode, Body: string(snippet)}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return answer, nil
	}
	se := &sendError{Status: resp.StatusCode,
		Msg: fmt.Sprintf("channel %s: HTTP %d: %s", ch.Name, resp.StatusCode, strings.TrimSpace(string(snippet)))}
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		// The Location is not named: it may hold a secret, like the URL.
		se.Msg = fmt.Sprintf("channel %s: HTTP %d %s: the channel redirected; deliveries never follow redirects (fix the channel's URL)",
			ch.Name, resp.StatusCode, http.StatusText(resp.StatusCode))
	case resp.StatusCode == http.StatusTooManyRequests:
		se.Transient = true
		se.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), snippet)
	case resp.StatusCode >= 500, resp.StatusCode == http.StatusRequestTimeout:
		se.Transient = true
		se.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), nil)
	}
	return answer, se
}

// noAnswer classifies a request that got no answer (err from the client), the one place that
// decides between retrying and not: a request that never left (dial error, connection refused,
// TLS handshake) is transient on every channel; one that was sent (sent) and then timed out or
// lost its connection is transient under the webhook's Idempotency-Key and Unknown on a chat
// channel. A URL the client refuses outright (unsendable) is permanent. During shutdown (ctx
// ended) nothing unsent is transient: the claim stays for later.
func (ch *Channel) noAnswer(ctx context.Context, err error, sent bool) *sendError {
	// *url.Error carries the full URL (a Slack or Discord URL, a Telegram token): keep only the
	// cause.
	var ue *url.Error
	cause := err
	if errors.As(err, &ue) {
		cause = ue.Err
	}
	msg := cause.Error()
	if errors.Is(cause, context.DeadlineExceeded) || ue != nil && ue.Timeout() {
		msg = fmt.Sprintf("no answer within %v", ch.Timeout)
	}
	se := &sendError{Msg: fmt.Sprintf("channel %s: %s", ch.Name, msg)}
	switch {
	case unsendable(cause):
		// Nothing left, and no retry can change that: permanent (failed at once).
	case sent && !ch.Idempotent():
		se.Unknown = true
		se.Msg += " (the request was sent: it may have been delivered, and the channel honours no idempotency key, so it is not re-sent)"
	case ctx.Err() == nil:
		se.Transient = true
	}
	return se
}

// unsendable reports whether err is Go's client refusing the request's URL before any
// connection: a scheme it cannot speak (its error type is not exported: the text is the API), or
// no host.
func unsendable(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "unsupported protocol scheme") || strings.HasPrefix(msg, "http: no Host in request URL")
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
