package chat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/retry"
)

// ErrConflict is the Poller's error when Telegram answers getUpdates with 409 Conflict: another
// process (or a webhook) takes this bot's updates. It is reported, and the poller stops.
var ErrConflict = errors.New("telegram getUpdates: 409 Conflict: another process polls this bot (or a webhook is set); " +
	"Telegram allows one poller per bot: stop the other or turn commands off here")

// conflictsBeforeStop is how many 409s in a row stop the poller: one may be the long poll of
// this process's predecessor, still open for a moment after a restart.
const conflictsBeforeStop = 3

// DefaultUpdatesLimit is how many updates one getUpdates asks for: at most ~50 KB each as the Bot
// API writes them (a 4,096-character message with the one it replies to, non-ASCII escaped), so
// that an answer stays far below maxAnswer.
const DefaultUpdatesLimit = 10

// maxAnswer bounds what is read of one Bot API answer.
const maxAnswer = 4 << 20

// Poller long-polls one command channel's getUpdates and hands each message to its Commander.
// The next offset is kept in the ChatStore before the update is handled: a restart never runs a
// command twice (a crash in between loses that one command; its answer never came). It asks for
// Limit updates at a time; an answer still over maxAnswer is asked again with half the limit, down
// to one update, and one update alone too large to read is skipped (its update_id read from the
// start of the cut answer), logged and counted (CommandTooLarge).
type Poller struct {
	Commander *Commander
	Client    *http.Client
	// PollTimeout is getUpdates' long-poll timeout (default 30s).
	PollTimeout time.Duration
	Backoff     retry.Backoff // after a failed poll (defaults 1s..1m)
	Limit       int           // getUpdates' limit (default DefaultUpdatesLimit)
	// FailingAfter: once every poll has failed for longer than this, Status says so (0: never).
	FailingAfter time.Duration
	Logger       *slog.Logger
	Secrets      []string

	mu           sync.Mutex
	status       error     // ErrConflict once stopped by it
	failingSince time.Time // the first failure of the failures in a row (zero: the last poll answered)
	lastFailure  string
}

// FailingError is Status's answer while getUpdates has failed for longer than FailingAfter.
type FailingError struct {
	Since time.Time
	Last  string // the last failure (scrubbed)
}

func (e *FailingError) Error() string {
	return fmt.Sprintf("failing (since %s; last: %s)", events.FormatTime(e.Since), e.Last)
}

// Status is the poller's state for /healthz: nil while it polls, ErrConflict once it stopped,
// a *FailingError while every poll has failed for longer than FailingAfter.
func (p *Poller) Status() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.status != nil {
		return p.status
	}
	if p.FailingAfter > 0 && !p.failingSince.IsZero() && time.Since(p.failingSince) > p.FailingAfter {
		return &FailingError{Since: p.failingSince, Last: p.lastFailure}
	}
	return nil
}

// failed records a failed poll (err "" records an answer).
func (p *Poller) failed(err string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == "" {
		p.failingSince, p.lastFailure = time.Time{}, ""
		return
	}
	if p.failingSince.IsZero() {
		p.failingSince = time.Now()
	}
	p.lastFailure = err
}

// update is one Bot API Update the commands read.
type update struct {
	UpdateID int64            `json:"update_id"`
	Message  *TelegramMessage `json:"message"`
}

func (p *Poller) defaults() {
	if p.PollTimeout <= 0 {
		p.PollTimeout = 30 * time.Second
	}
	if p.Backoff.Base <= 0 {
		p.Backoff = retry.Backoff{Base: time.Second, Max: time.Minute}
	}
	if p.Client == nil {
		p.Client = notify.NewClient(nil)
	}
	if p.Limit <= 0 {
		p.Limit = DefaultUpdatesLimit
	}
}

// Run polls until ctx ends (nil) or Telegram says another poller has the bot (ErrConflict).
func (p *Poller) Run(ctx context.Context) error {
	p.defaults()
	ch := p.Commander.Channel
	offset, err := p.Commander.Store.ChatOffset(ctx, ch.Name)
	if err != nil {
		return fmt.Errorf("channel %s: commands: %w", ch.Name, err)
	}
	failures, conflicts, limit := 0, 0, p.Limit
	for ctx.Err() == nil {
		updates, code, err := p.poll(ctx, offset, limit)
		if ctx.Err() != nil {
			return nil
		}
		if code == http.StatusConflict {
			conflicts++
			p.logWarn(ctx, "telegram getUpdates: 409 Conflict", "channel", ch.Name, "in_a_row", conflicts)
			if conflicts >= conflictsBeforeStop {
				p.mu.Lock()
				p.status = ErrConflict
				p.mu.Unlock()
				p.Commander.Metrics.pollerConflict(ch.Name, 1)
				if p.Logger != nil {
					p.Logger.ErrorContext(ctx, "chat commands stopped", "channel", ch.Name, "err", ErrConflict)
				}
				return fmt.Errorf("channel %s: %w", ch.Name, ErrConflict)
			}
		} else {
			conflicts = 0
		}
		var big *tooLargeError
		if errors.As(err, &big) {
			if limit > 1 {
				limit = max(1, limit/2) // ask for fewer at once
				continue
			}
			if id, ok := firstUpdateID(big.prefix); ok && id >= offset {
				offset = id + 1
				if err := p.Commander.Store.SetChatOffset(ctx, ch.Name, offset); err != nil {
					return fmt.Errorf("channel %s: commands: keep the offset: %w", ch.Name, err)
				}
				p.Commander.Metrics.command(ch.Name, CommandTooLarge)
				p.logWarn(ctx, "telegram: an update too large to read was skipped", "channel", ch.Name, "update_id", id,
					"read_limit_bytes", maxAnswer)
				p.failed("")
				limit = p.Limit
				continue
			}
		}
		if err != nil {
			failures++
			msg := p.scrub(err.Error())
			p.failed(msg)
			if code != http.StatusConflict {
				p.logWarn(ctx, "telegram getUpdates failed", "channel", ch.Name, "err", msg, "attempt", failures)
			}
			if retry.Sleep(ctx, p.Backoff.Delay(failures)) != nil {
				return nil
			}
			continue
		}
		failures, limit = 0, p.Limit
		p.failed("")
		for _, u := range updates {
			if u.UpdateID < offset {
				continue // asked for from offset: an older one is the API's repeat
			}
			offset = u.UpdateID + 1
			if err := p.Commander.Store.SetChatOffset(ctx, ch.Name, offset); err != nil {
				return fmt.Errorf("channel %s: commands: keep the offset: %w", ch.Name, err)
			}
			if u.Message == nil {
				continue
			}
			answers, ok := p.Commander.Handle(ctx, u.Message)
			if !ok {
				continue
			}
			for _, a := range answers {
				if err := p.reply(ctx, u.Message, a); err != nil {
					if ctx.Err() == nil {
						p.logWarn(ctx, "telegram: answer a command", "channel", ch.Name, "err", p.scrub(err.Error()))
					}
					break
				}
			}
		}
	}
	return nil
}

func (p *Poller) logWarn(ctx context.Context, msg string, args ...any) {
	if p.Logger != nil {
		p.Logger.WarnContext(ctx, msg, args...)
	}
}

func (p *Poller) scrub(s string) string {
	for _, sec := range append(p.Secrets, p.Commander.Channel.Token) {
		if sec != "" {
			s = strings.ReplaceAll(s, sec, "xxxxx")
		}
	}
	return s
}

// poll is one getUpdates from offset for at most limit updates: the updates, the HTTP status (0
// if none came) and an error (a *tooLargeError for an answer over maxAnswer).
func (p *Poller) poll(ctx context.Context, offset int64, limit int) ([]update, int, error) {
	secs := int(p.PollTimeout / time.Second)
	body := map[string]any{"timeout": secs, "limit": limit, "allowed_updates": []string{"message"}}
	if offset > 0 {
		body["offset"] = offset
	}
	rctx, cancel := context.WithTimeout(ctx, p.PollTimeout+p.Commander.Channel.Timeout)
	defer cancel()
	var updates []update
	code, err := p.call(rctx, "getUpdates", body, &updates)
	return updates, code, err
}

// reply answers m in its chat.
func (p *Poller) reply(ctx context.Context, m *TelegramMessage, text string) error {
	rctx, cancel := context.WithTimeout(ctx, p.Commander.Channel.Timeout)
	defer cancel()
	_, err := p.call(rctx, "sendMessage", map[string]any{"chat_id": m.Chat.ID, "text": text,
		"reply_to_message_id": m.MessageID, "disable_web_page_preview": true}, nil)
	return err
}

// botAnswer is the Bot API's envelope of every answer: ok and result, or error_code and
// description.
type botAnswer struct {
	OK          bool            `json:"ok"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Result      json.RawMessage `json:"result"`
}

// tooLargeError is call's error for an answer over maxAnswer: prefix is what was read of it.
type tooLargeError struct {
	method string
	prefix []byte
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s: the answer is over %d bytes (not read)", e.method, maxAnswer)
}

// call posts body to the Bot API's method and decodes the result of an ok answer into out (nil:
// not read; its shape is the method's: getUpdates a list, sendMessage a Message). An answer that
// is not ok is an error with Telegram's description.
func (p *Poller) call(ctx context.Context, method string, body, out any) (int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.Commander.Channel.BotAPI(method), bytes.NewReader(b))
	if err != nil {
		return 0, errors.New("the Bot API URL does not parse") // no URL: it holds the token
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := p.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s: %s", method, p.scrub(err.Error()))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s: read the answer: %w", method, err)
	}
	if len(raw) > maxAnswer {
		return resp.StatusCode, &tooLargeError{method: method, prefix: raw[:maxAnswer]}
	}
	var ans botAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return resp.StatusCode, fmt.Errorf("%s: HTTP %d: the answer is not the Bot API's JSON (%d bytes)", method, resp.StatusCode, len(raw))
	}
	if resp.StatusCode != http.StatusOK || !ans.OK {
		return resp.StatusCode, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, p.scrub(truncateText(ans.Description, 200)))
	}
	if out != nil {
		if err := json.Unmarshal(ans.Result, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s: HTTP %d: its result does not decode: %w", method, resp.StatusCode, err)
		}
	}
	return resp.StatusCode, nil
}

// firstUpdateID reads the update_id of the first update in the start of a getUpdates answer
// ({"ok":true,"result":[{"update_id":N,…), cut anywhere after it.
func firstUpdateID(prefix []byte) (int64, bool) {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	dec.UseNumber()
	delim := func(want json.Delim) bool {
		tok, err := dec.Token()
		return err == nil && tok == want
	}
	// object walks the keys of the object just opened until key, skipping the other values.
	object := func(key string) bool {
		for {
			tok, err := dec.Token()
			if err != nil {
				return false
			}
			if k, ok := tok.(string); ok && k == key {
				return true
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return false
			}
		}
	}
	if !delim('{') || !object("result") || !delim('[') || !delim('{') || !object("update_id") {
		return 0, false
	}
	tok, err := dec.Token()
	n, ok := tok.(json.Number)
	if err != nil || !ok {
		return 0, false
	}
	id, err := n.Int64()
	return id, err == nil
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
