// Package chat is the Telegram chat of a command channel (`commands: true`): the grammar of
// /watch and its siblings (ParseCommand, ParseWatchSpec), the stored form of a chat watch
// (CanonicalSpec, ReadSpec, UpgradeSpec), the Commander that runs a command against the watches
// in force and the ChatStore, and the Poller that long-polls getUpdates for it. The alert service
// (cmd/internal/alerts) builds one Poller and Commander per command channel; the engine
// (cmd/internal/notify) keeps the chat's watches in force beside the file's.
package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

// TelegramMessage is the part of a Bot API message the commands read.
type TelegramMessage struct {
	MessageID int64 `json:"message_id"`
	From      *struct {
		ID int64 `json:"id"`
	} `json:"from"`
	Chat struct {
		ID   int64  `json:"id"`
		Type string `json:"type"`
	} `json:"chat"`
	Text string `json:"text"`
}

// Commander runs the commands of one command channel's chat.
type Commander struct {
	Channel *notify.Channel
	Store   notify.ChatStore
	// Watches is the watches in force now, the file's and the chat's.
	Watches func() *notify.Config
	// Changed puts the store's chat watches in force after a watch was added, muted, unmuted or
	// removed (the crawler evaluates a new watch, with its backlog, at each site's next crawl; the
	// notifier answers it at once).
	Changed func(ctx context.Context) error
	Metrics *Metrics
	Logger  *slog.Logger
	// Test sends /test's message on the channel the way alerts go (nil: the answer alone).
	Test func(ctx context.Context) error
	// BacklogNow: Changed answers a new watch with what matches now at once (the notifier, from
	// booking_lifetimes), and /watch's answer says so.
	BacklogNow bool

	mu sync.Mutex // one command at a time
}

// The results of an update, the label of booking_notifier_commands_total.
const (
	CommandAccepted   = "accepted"
	CommandStranger   = "ignored_stranger"    // another chat
	CommandNotAllowed = "ignored_not_allowed" // a group member not in allow_from
	CommandNotOurs    = "ignored_not_command" // no command of ours
	// CommandTooLarge: an update too large to read (over the 4 MiB an answer may be), skipped.
	CommandTooLarge = "ignored_too_large"
)

// Allowed reports who may command: the channel's chat_id, and in a group (a negative chat id, or
// a chat of type group, supergroup or channel) only the users in allow_from (nobody without it).
func (c *Commander) Allowed(m *TelegramMessage) (bool, string) {
	if strconv.FormatInt(m.Chat.ID, 10) != strings.TrimSpace(c.Channel.ChatID) {
		return false, CommandStranger
	}
	group := m.Chat.ID < 0 || m.Chat.Type == "group" || m.Chat.Type == "supergroup" || m.Chat.Type == "channel"
	if group && (m.From == nil || !slices.Contains(c.Channel.AllowFrom, m.From.ID)) {
		return false, CommandNotAllowed
	}
	return true, CommandAccepted
}

// Handle runs message m and returns the answer to give in its chat, in one message or more (a
// /watches longer than the channel's limit comes in numbered parts); ok false means give none (a
// stranger, a group member not allowed, no command of ours): counted, never answered.
func (c *Commander) Handle(ctx context.Context, m *TelegramMessage) (answer []string, ok bool) {
	allowed, result := c.Allowed(m)
	lang := c.Channel.Language
	var cmd Command
	var perr error
	if allowed {
		cmd, perr = ParseCommand(m.Text, lang)
		if errors.Is(perr, ErrNotCommand) {
			allowed, result = false, CommandNotOurs
		}
	}
	c.Metrics.command(c.Channel.Name, result)
	if !allowed {
		return nil, false
	}
	if perr != nil {
		return []string{perr.Error()}, true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cmd.Verb == VerbWatches {
		return c.list(c.Watches()), true
	}
	answer1, err := c.run(ctx, m, cmd)
	if err != nil {
		if c.Logger != nil {
			c.Logger.ErrorContext(ctx, "chat command failed", "channel", c.Channel.Name, "command", string(cmd.Verb), "err", err)
		}
		return []string{say(lang, "지금은 할 수 없습니다. 잠시 뒤 다시 해 주세요.", "could not do it now; try again later.")}, true
	}
	return []string{answer1}, true
}

func (c *Commander) run(ctx context.Context, m *TelegramMessage, cmd Command) (string, error) {
	lang, live := c.Channel.Language, c.Watches()
	switch cmd.Verb {
	case VerbHelp:
		return commandHelp(c.maxWatches()), nil
	case VerbTest:
		if c.Test != nil {
			if err := c.Test(ctx); err != nil {
				return "", err
			}
		}
		return say(lang, "시험 메시지를 보냈습니다: 알림은 이 채팅으로 옵니다.", "test message sent: alerts arrive in this chat."), nil
	case VerbWatch:
		if n, most := c.chatWatches(live), c.maxWatches(); n >= most {
			return fmt.Sprintf(say(lang, "이 채팅의 알림이 이미 %d개입니다 (한 채팅에 최대 %d개): /watches 로 보고 /remove 이름 으로 하나 지운 뒤 다시 해 주세요.",
				"this chat has %d watches already (at most %d a chat): see /watches and /remove one first."), n, most), nil
		}
		cw := notify.ChatWatch{Channel: c.Channel.Name, Spec: CanonicalSpec(cmd.Watch), CreatedAt: time.Now()}
		if m.From != nil {
			cw.By = m.From.ID
		}
		name, err := c.Store.AddChatWatch(ctx, cw, func(n string) bool { return live.Watch(n) != nil })
		if err != nil {
			return "", err
		}
		if err := c.reload(ctx); err != nil {
			return "", err
		}
		ko, en := "알림 %s 만들었습니다: %s. 지금 맞는 티타임도 다음 수집 때 알려 드립니다. (/mute %s, /remove %s)",
			"watch %s made: %s. What matches now comes at the next crawl too. (/mute %s, /remove %s)"
		if c.BacklogNow {
			ko, en = "알림 %s 만들었습니다: %s. 지금 맞는 티타임은 곧 따로 알려 드립니다. (/mute %s, /remove %s)",
				"watch %s made: %s. What matches now follows in a moment. (/mute %s, /remove %s)"
		}
		answer := fmt.Sprintf(say(lang, ko, en), name, notify.Describe(cmd.Watch, lang), name, name)
		if !cmd.Watch.AddsDemand() {
			answer += say(lang, " 요일이 없는 알림은 평소 수집 주기로 확인합니다: 요일을 넣으면 그 날짜들을 더 자주 확인합니다.",
				" With no weekday it is checked on the sites' schedule: name weekdays to have those dates crawled more often.")
		}
		return answer, nil
	}
	// mute, unmute, remove
	w := live.Watch(cmd.Name)
	if w == nil {
		return fmt.Sprintf(say(lang, "%s라는 알림이 없습니다 (/watches)", "no watch named %s (/watches)"), cmd.Name), nil
	}
	if !w.FromChat {
		return fmt.Sprintf(say(lang, "%s는 watches 파일의 알림이라 채팅에서 바꿀 수 없습니다: 파일에서 고쳐 주세요.",
			"%s is a watch of the watches file: it cannot be changed from the chat; edit the file."), cmd.Name), nil
	}
	if w.Channels[0] != c.Channel.Name {
		return fmt.Sprintf(say(lang, "%s는 다른 채팅의 알림입니다", "%s belongs to another chat"), cmd.Name), nil
	}
	var err error
	var verb string
	switch cmd.Verb {
	case VerbMute:
		_, err = c.Store.SetChatWatchMuted(ctx, cmd.Name, true)
		verb = say(lang, "껐습니다", "muted")
	case VerbUnmute:
		_, err = c.Store.SetChatWatchMuted(ctx, cmd.Name, false)
		verb = say(lang, "다시 켰습니다", "unmuted")
	case VerbRemove:
		_, err = c.Store.RemoveChatWatch(ctx, cmd.Name)
		verb = say(lang, "지웠습니다", "removed")
	}
	if err != nil {
		return "", err
	}
	if err := c.reload(ctx); err != nil {
		return "", err
	}
	return fmt.Sprintf(say(lang, "알림 %s (%s) %s.", "watch %s (%s) %s."), cmd.Name, notify.Describe(w, lang), verb), nil
}

// reload puts the store's chat watches in force (Changed).
func (c *Commander) reload(ctx context.Context) error {
	if c.Changed == nil {
		return nil
	}
	return c.Changed(ctx)
}

// maxWatches is how many watches this chat may make.
func (c *Commander) maxWatches() int {
	return c.Channel.MaxChatWatches
}

// chatWatches counts the watches this channel's chat made that are in force.
func (c *Commander) chatWatches(live *notify.Config) int {
	n := 0
	for _, w := range live.Watches {
		if w.FromChat && w.Channels[0] == c.Channel.Name {
			n++
		}
	}
	return n
}

// list is /watches: the watches of this channel, file and chat, one a line, in as many messages
// as the channel's limit needs (numbered "(1/2)"; a line is never cut across two).
func (c *Commander) list(live *notify.Config) []string {
	lang := c.Channel.Language
	var lines []string
	for _, w := range live.Watches {
		if !slices.Contains(w.Channels, c.Channel.Name) {
			continue
		}
		origin := say(lang, "파일", "file")
		if w.FromChat {
			origin = say(lang, "채팅", "chat")
		}
		muted := ""
		if w.Muted {
			muted = say(lang, " (꺼짐)", " (muted)")
		}
		lines = append(lines, fmt.Sprintf("%s [%s]%s: %s", w.Name, origin, muted, notify.Describe(w, lang)))
	}
	if len(lines) == 0 {
		return []string{say(lang, "이 채팅의 알림이 없습니다. /help", "no watches in this chat. /help")}
	}
	return c.Channel.SplitLines(lines, say(lang, "알림 %d개", "%d watches"))
}
