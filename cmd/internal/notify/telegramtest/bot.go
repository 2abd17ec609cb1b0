// Package telegramtest is a fake Telegram Bot API for tests (a channel's base_url points at it):
// getUpdates long-polls a queue of messages the test sends, honouring offset; sendMessage is
// recorded. It never reaches the real API.
package telegramtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Message is one sendMessage the bot received: an alert, or (ReplyTo set) a command's answer.
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
	updates  []map[string]any
	nextID   int64
	wake     chan struct{}
	conflict bool
	offsets  []int64 // every getUpdates offset asked for
	Sent     chan Message
}

// New starts a fake Bot API for token, closed at the test's end.
func New(t testing.TB, token string) *Bot {
	b := &Bot{Token: token, nextID: 1, wake: make(chan struct{}), Sent: make(chan Message, 100)}
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

// Say queues a message from user from in chat chatID (of chatType: private, group, supergroup)
// and returns its update id.
func (b *Bot) Say(chatID int64, chatType string, from int64, text string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.nextID
	b.nextID++
	b.updates = append(b.updates, map[string]any{"update_id": id, "message": map[string]any{
		"message_id": id * 10, "from": map[string]any{"id": from}, "chat": map[string]any{"id": chatID, "type": chatType}, "text": text}})
	close(b.wake)
	b.wake = make(chan struct{})
	return id
}

// Offsets are the offsets getUpdates was asked for, in order.
func (b *Bot) Offsets() []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]int64(nil), b.offsets...)
}

func (b *Bot) serve(w http.ResponseWriter, r *http.Request) {
	method, ok := strings.CutPrefix(r.URL.Path, "/bot"+b.Token+"/")
	if !ok {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"ok":false,"error_code":401,"description":"Unauthorized"}`))
		return
	}
	switch method {
	case "sendMessage":
		var m Message
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		b.Sent <- m
		_, _ = w.Write([]byte(`{"ok":true,"result":{"message_id":1}}`))
	case "getUpdates":
		var q struct {
			Offset int64 `json:"offset"`
		}
		_ = json.NewDecoder(r.Body).Decode(&q)
		for {
			b.mu.Lock()
			if b.conflict {
				b.mu.Unlock()
				w.WriteHeader(http.StatusConflict)
				_, _ = w.Write([]byte(`{"ok":false,"error_code":409,"description":"Conflict: terminated by other getUpdates request"}`))
				return
			}
			var out []map[string]any
			for _, u := range b.updates {
				if u["update_id"].(int64) >= q.Offset {
					out = append(out, u)
				}
			}
			wake := b.wake
			if len(out) > 0 {
				b.offsets = append(b.offsets, q.Offset)
				b.mu.Unlock()
				_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": out})
				return
			}
			b.mu.Unlock()
			select {
			case <-wake:
			case <-r.Context().Done():
				return
			}
		}
	default:
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"ok":false,"error_code":404,"description":"Not Found"}`))
	}
}
