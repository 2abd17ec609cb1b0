// Package telegramtest is a fake Telegram Bot API for tests (a channel's base_url points at it).
// It answers as the Bot API does (https://core.telegram.org/bots/api): every answer is
// {"ok":true,"result":…} or {"ok":false,"error_code":…,"description":…}, JSON with non-ASCII
// written as \uXXXX escapes; getUpdates long-polls a queue of updates the test adds, honouring
// offset and limit (1..100, default 100) and returning the oldest first; sendMessage answers the
// Message it made (an object, not a list), refuses a text over 4,096 characters ("Bad Request:
// message is too long") and an empty one, and records what it delivered. It never reaches the
// real API.
package telegramtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
)

// MaxText is Telegram's limit on a message's text, in UTF-16 code units.
const MaxText = 4096

// Message is one sendMessage the bot delivered: an alert, or (ReplyTo set) a command's answer.
type Message struct {
	ChatID  json.Number `json:"chat_id"`
	Text    string      `json:"text"`
	ReplyTo int64       `json:"reply_to_message_id"`
}

// Bot is the fake API of one token.
type Bot struct {
	Token string
	srv   *httptest.Server

	mu       sync.Mutex
	updates  []update
	nextID   int64
	nextMsg  int64
	wake     chan struct{}
	conflict bool
	fail     int // getUpdates answers this HTTP status while not 0
	sendFail struct {
		status      int // sendMessage answers this while not 0
		description string
	}
	offsets []int64 // every getUpdates offset asked for
	limits  []int   // and its limit
	refused []Message
	chats   []int64 // the chats sendMessage reaches (none: any)
	// Sent gets every message delivered (a refused one is in Refused instead).
	Sent chan Message
}

// New starts a fake Bot API for token, closed at the test's end.
func New(t testing.TB, token string) *Bot {
	b := &Bot{Token: token, nextID: 1, nextMsg: 1_000_000, wake: make(chan struct{}), Sent: make(chan Message, 1000)}
	b.srv = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.srv.Close)
	return b
}

// URL is the base_url of a channel using this bot.
func (b *Bot) URL() string { return b.srv.URL }

// Conflict makes every getUpdates answer 409 Conflict (another poller) while on.
func (b *Bot) Conflict(on bool) {
	b.mu.Lock()
	b.conflict = on
	b.mu.Unlock()
}

// FailUpdates makes every getUpdates answer HTTP status (with Telegram's error body) until it is
// called with 0.
func (b *Bot) FailUpdates(status int) {
	b.mu.Lock()
	b.fail = status
	b.mu.Unlock()
}

// Chats makes sendMessage reach only the chats ids (a message to another is refused with
// "Bad Request: chat not found", as Telegram refuses a wrong chat_id).
func (b *Bot) Chats(ids ...int64) {
	b.mu.Lock()
	b.chats = ids
	b.mu.Unlock()
}

// FailSends makes every sendMessage answer HTTP status with description (Telegram's words,
// e.g. 403 "Forbidden: bot was blocked by the user") until it is called with 0.
func (b *Bot) FailSends(status int, description string) {
	b.mu.Lock()
	b.sendFail.status, b.sendFail.description = status, description
	b.mu.Unlock()
}

// Say queues a message from user from in chat chatID (of chatType: private, group, supergroup)
// and returns its update id. Its message id is ten times the update id.
func (b *Bot) Say(chatID int64, chatType string, from int64, text string) int64 {
	return b.SayReply(chatID, chatType, from, text, "")
}

// SayReply is Say for a message replying to one with text replied (none when empty), which the
// Bot API embeds whole in the update (reply_to_message): a reply to a long alert is a long update.
func (b *Bot) SayReply(chatID int64, chatType string, from int64, text, replied string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.nextID
	b.nextID++
	chat := map[string]any{"id": chatID, "type": chatType}
	m := map[string]any{"message_id": id * 10, "from": user(from), "chat": chat, "date": time.Now().Unix(), "text": text}
	if replied != "" {
		m["reply_to_message"] = map[string]any{"message_id": id*10 - 1, "from": map[string]any{"id": 1, "is_bot": true,
			"first_name": "golf", "username": "golf_bot"}, "chat": chat, "date": time.Now().Unix(), "text": replied}
	}
	b.updates = append(b.updates, update{UpdateID: id, Message: m})
	close(b.wake)
	b.wake = make(chan struct{})
	return id
}

// update is one Update as the Bot API writes it: update_id first.
type update struct {
	UpdateID int64          `json:"update_id"`
	Message  map[string]any `json:"message"`
}

func user(id int64) map[string]any {
	return map[string]any{"id": id, "is_bot": false, "first_name": fmt.Sprintf("user%d", id)}
}

// Offsets are the offsets getUpdates was asked for and answered, in order.
func (b *Bot) Offsets() []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int64(nil), b.offsets...)
}

// Limits are the limits of the getUpdates Offsets lists (0: none given).
func (b *Bot) Limits() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int(nil), b.limits...)
}

// Refused are the sendMessage calls refused (a text too long or empty), in order.
func (b *Bot) Refused() []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Message(nil), b.refused...)
}

// answer writes v as the Bot API does: status, JSON with non-ASCII escaped.
func answer(w http.ResponseWriter, status int, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(asciiJSON(raw))
}

func failure(w http.ResponseWriter, status int, description string) {
	answer(w, status, map[string]any{"ok": false, "error_code": status, "description": description})
}

// asciiJSON escapes every non-ASCII character of JSON text raw as \uXXXX (a surrogate pair
// above U+FFFF), as the Bot API writes its answers: a Hangul syllable is 6 bytes.
func asciiJSON(raw []byte) []byte {
	var sb strings.Builder
	for _, r := range string(raw) {
		if r < 0x80 {
			sb.WriteRune(r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			fmt.Fprintf(&sb, `\u%04x`, u)
		}
	}
	return []byte(sb.String())
}

func (b *Bot) serve(w http.ResponseWriter, r *http.Request) {
	method, ok := strings.CutPrefix(r.URL.Path, "/bot"+b.Token+"/")
	if !ok {
		failure(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	switch method {
	case "sendMessage":
		b.sendMessage(w, r)
	case "getUpdates":
		b.getUpdates(w, r)
	default:
		failure(w, http.StatusNotFound, "Not Found")
	}
}

func (b *Bot) sendMessage(w http.ResponseWriter, r *http.Request) {
	var m Message
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		failure(w, http.StatusBadRequest, "Bad Request: can't parse request JSON object")
		return
	}
	chat, _ := m.ChatID.Int64()
	b.mu.Lock()
	fail, known := b.sendFail, len(b.chats) == 0 || slices.Contains(b.chats, chat)
	if !known {
		b.refused = append(b.refused, m)
	}
	b.mu.Unlock()
	switch {
	case fail.status != 0:
		failure(w, fail.status, fail.description)
		return
	case !known:
		failure(w, http.StatusBadRequest, "Bad Request: chat not found")
		return
	}
	n := len(utf16.Encode([]rune(strings.TrimSpace(m.Text))))
	if n == 0 || n > MaxText {
		b.mu.Lock()
		b.refused = append(b.refused, m)
		b.mu.Unlock()
		if n == 0 {
			failure(w, http.StatusBadRequest, "Bad Request: message text is empty")
		} else {
			failure(w, http.StatusBadRequest, "Bad Request: message is too long")
		}
		return
	}
	b.mu.Lock()
	b.nextMsg++
	id := b.nextMsg
	b.mu.Unlock()
	msg := map[string]any{"message_id": id, "from": map[string]any{"id": 1, "is_bot": true, "first_name": "golf", "username": "golf_bot"},
		"chat": map[string]any{"id": chat, "type": "private"}, "date": time.Now().Unix(), "text": m.Text}
	if m.ReplyTo != 0 {
		msg["reply_to_message"] = map[string]any{"message_id": m.ReplyTo, "chat": map[string]any{"id": chat, "type": "private"}, "date": time.Now().Unix()}
	}
	b.Sent <- m
	answer(w, http.StatusOK, map[string]any{"ok": true, "result": msg})
}

func (b *Bot) getUpdates(w http.ResponseWriter, r *http.Request) {
	var q struct {
		Offset  int64 `json:"offset"`
		Limit   int   `json:"limit"`
		Timeout int   `json:"timeout"`
	}
	_ = json.NewDecoder(r.Body).Decode(&q)
	limit := q.Limit
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	timeout := time.After(time.Duration(q.Timeout) * time.Second) // then an empty result
	for {
		b.mu.Lock()
		if b.conflict {
			b.mu.Unlock()
			failure(w, http.StatusConflict, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
			return
		}
		if b.fail != 0 {
			status := b.fail
			b.mu.Unlock()
			failure(w, status, http.StatusText(status))
			return
		}
		out := []update{}
		for _, u := range b.updates {
			if u.UpdateID >= q.Offset && len(out) < limit {
				out = append(out, u)
			}
		}
		wake := b.wake
		if len(out) > 0 {
			b.offsets = append(b.offsets, q.Offset)
			b.limits = append(b.limits, q.Limit)
			b.mu.Unlock()
			answer(w, http.StatusOK, map[string]any{"ok": true, "result": out})
			return
		}
		b.mu.Unlock()
		select {
		case <-wake:
		case <-timeout:
			answer(w, http.StatusOK, map[string]any{"ok": true, "result": []update{}})
			return
		case <-r.Context().Done():
			return
		}
	}
}
