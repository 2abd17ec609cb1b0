package notify

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

	"github.com/golfcrawler/golf-crawler/internal/retry"
)

// ErrConflict is the Poller's error when Telegram answers getUpdates with 409 Conflict: another
// process (or a webhook) takes this bot's updates. It is reported, and the poller stops.
var ErrConflict = errors.New("telegram getUpdates: 409 Conflict: another process polls this bot (or a webhook is set); " +
	"Telegram allows one poller per bot: stop the other or turn commands off here")

// conflictsBeforeStop is how many 409s in a row stop the poller: one may be the long poll of
// this process's predecessor, still open for a moment after a restart.
const conflictsBeforeStop = 3

// Poller long-polls one command channel's getUpdates and hands each message to its Commander.
// The next offset is kept in the ChatStore before the update is handled: a restart never runs a
// command twice (a crash in between loses that one command; its answer never came).
type Poller struct {
	Commander *Commander
	Client    *http.Client
	// PollTimeout is getUpdates' long-poll timeout (default 30s).
	PollTimeout time.Duration
	Backoff     retry.Backoff // after a failed poll (defaults 1s..1m)
	Logger      *slog.Logger
	Secrets     []string

	mu     sync.Mutex
	status error // ErrConflict once stopped by it
}

// Status is the poller's state for /healthz: nil while it polls, ErrConflict once it stopped.
func (p *Poller) Status() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.status
}

type telegramAnswer struct {
	OK          bool   `json:"ok"`
	ErrorCode   int    `json:"error_code"`
	Description string `json:"description"`
	Result      []struct {
		UpdateID int64            `json:"update_id"`
		Message  *TelegramMessage `json:"message"`
	} `json:"result"`
}

// endpoint is the Bot API URL of method for ch (base_url honoured).
func endpoint(ch *Channel, method string) string {
	base := TelegramAPI
	if ch.BaseURL != "" {
		base = ch.BaseURL
	}
	return base + "/bot" + ch.Token + "/" + method
}

// Run polls until ctx ends (nil) or Telegram says another poller has the bot (ErrConflict).
func (p *Poller) Run(ctx context.Context) error {
	ch := p.Commander.Channel
	if p.PollTimeout <= 0 {
		p.PollTimeout = 30 * time.Second
	}
	if p.Backoff.Base <= 0 {
		p.Backoff = retry.Backoff{Base: time.Second, Max: time.Minute}
	}
	if p.Client == nil {
		p.Client = http.DefaultClient
	}
	offset, err := p.Commander.Store.ChatOffset(ctx, ch.Name)
	if err != nil {
		return fmt.Errorf("channel %s: commands: %w", ch.Name, err)
	}
	failures, conflicts := 0, 0
	for ctx.Err() == nil {
		ans, code, err := p.poll(ctx, offset)
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
		if err != nil {
			failures++
			if code != http.StatusConflict {
				p.logWarn(ctx, "telegram getUpdates failed", "channel", ch.Name, "err", p.scrub(err.Error()), "attempt", failures)
			}
			if retry.Sleep(ctx, p.Backoff.Delay(failures)) != nil {
				return nil
			}
			continue
		}
		failures = 0
		for _, u := range ans.Result {
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
			answer, ok := p.Commander.Handle(ctx, u.Message)
			if !ok {
				continue
			}
			if err := p.reply(ctx, u.Message, answer); err != nil {
				p.logWarn(ctx, "telegram: answer a command", "channel", ch.Name, "err", p.scrub(err.Error()))
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

// poll is one getUpdates from offset: the answer, the HTTP status (0 if none came) and an error.
func (p *Poller) poll(ctx context.Context, offset int64) (*telegramAnswer, int, error) {
	secs := int(p.PollTimeout / time.Second)
	body := map[string]any{"timeout": secs, "allowed_updates": []string{"message"}}
	if offset > 0 {
		body["offset"] = offset
	}
	rctx, cancel := context.WithTimeout(ctx, p.PollTimeout+p.Commander.Channel.Timeout)
	defer cancel()
	var ans telegramAnswer
	code, err := p.call(rctx, "getUpdates", body, &ans)
	return &ans, code, err
}

// reply answers m in its chat.
func (p *Poller) reply(ctx context.Context, m *TelegramMessage, text string) error {
	rctx, cancel := context.WithTimeout(ctx, p.Commander.Channel.Timeout)
	defer cancel()
	_, err := p.call(rctx, "sendMessage", map[string]any{"chat_id": m.Chat.ID, "text": text,
		"reply_to_message_id": m.MessageID, "disable_web_page_preview": true}, nil)
	return err
}

// call posts body to the Bot API's method; a non-ok answer is an error naming its code.
func (p *Poller) call(ctx context.Context, method string, body any, out *telegramAnswer) (int, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return 0, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint(p.Commander.Channel, method), bytes.NewReader(b))
	if err != nil {
		return 0, errors.New("the Bot API URL does not parse") // no URL: it holds the token
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := p.Client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s: %s", method, p.scrub(err.Error()))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s: read the answer: %w", method, err)
	}
	var ans telegramAnswer
	if out == nil {
		out = &ans
	}
	if err := json.Unmarshal(raw, out); err != nil || resp.StatusCode != http.StatusOK || !out.OK {
		return resp.StatusCode, fmt.Errorf("%s: HTTP %d: %s", method, resp.StatusCode, p.scrub(truncateText(out.Description, 200)))
	}
	return resp.StatusCode, nil
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
