package notify

// Watches from the chat (crawler path): a Telegram channel with `commands: true` takes /watch,
// /watches, /mute, /unmute, /remove, /test and /help from its chat. The watches it makes are kept
// by a ChatStore (the crawler's alerts.db) beside the file's and fire under the same rules: Live
// is the set in force, the file's watches and the chat's, swapped whole on every change.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"gopkg.in/yaml.v3"
)

// ChatWatch is a watch made in a chat, as stored: its name, the channel whose chat made it (its
// one channel), the /watch arguments it was made with (parsed again by ParseWatchSpec on load).
type ChatWatch struct {
	Name, Channel, Spec string
	Muted               bool
	By                  int64 // the Telegram user id who made it
	CreatedAt           time.Time
}

// ChatStore keeps the chat's watches and each command channel's getUpdates offset.
type ChatStore interface {
	ChatWatches(ctx context.Context) ([]ChatWatch, error)
	// AddChatWatch stores w (its Name ignored) under a new name, chat-<n>, never given before
	// (not even to a watch removed since) and not taken (a file watch's); it returns the name.
	AddChatWatch(ctx context.Context, w ChatWatch, taken func(name string) bool) (string, error)
	// SetChatWatchMuted and RemoveChatWatch report whether a chat watch of that name existed.
	SetChatWatchMuted(ctx context.Context, name string, muted bool) (bool, error)
	RemoveChatWatch(ctx context.Context, name string) (bool, error)
	// ChatOffset is the next update id to ask for (0: none kept).
	ChatOffset(ctx context.Context, channel string) (int64, error)
	SetChatOffset(ctx context.Context, channel string, next int64) error
}

// checkPollers refuses two command channels on one bot token: Telegram lets one getUpdates
// poller per bot, and the second would take the first's commands (or 409 forever).
func checkPollers(c *Config, chNode *yaml.Node, errs *lineErrors) {
	byToken := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(c.Channels)) {
		ch := c.Channels[name]
		if !ch.Commands || ch.Token == "" {
			continue
		}
		if first, ok := byToken[ch.Token]; ok {
			errs.add(chNode, "channels %q and %q have commands: true on the same bot token: Telegram allows one getUpdates poller per bot; keep commands on one of them", first, name)
			continue
		}
		byToken[ch.Token] = name
	}
}

// Live is the watches in force: the file's, then the chat's (Load is safe beside SetChat).
type Live struct {
	file *Config
	p    atomic.Pointer[Config]
}

// NewLive starts with the file's watches alone.
func NewLive(file *Config) *Live {
	l := &Live{file: file}
	l.p.Store(file)
	return l
}

// Load returns the watches in force.
func (l *Live) Load() *Config { return l.p.Load() }

// File is the watches file's config.
func (l *Live) File() *Config { return l.file }

// SetChat puts the chat's watches in force beside the file's. A chat watch whose channel is no
// longer a command channel of the file, whose name a file watch took, or whose spec no longer
// parses is left out, with an error saying why (the caller logs them).
func (l *Live) SetChat(ws []ChatWatch) []error {
	c, errs := l.file.WithChat(ws)
	l.p.Store(c)
	return errs
}

// WithChat returns a config of c's channels and watches and the chat's watches ws after them.
func (c *Config) WithChat(ws []ChatWatch) (*Config, []error) {
	out := &Config{Channels: c.Channels, Watches: slices.Clone(c.Watches)}
	var errs []error
	for _, cw := range ws {
		ch := c.Channels[cw.Channel]
		switch {
		case ch == nil || !ch.Commands:
			errs = append(errs, fmt.Errorf("chat watch %s: channel %q is not a command channel of the watches file: left out", cw.Name, cw.Channel))
			continue
		case c.Watch(cw.Name) != nil:
			errs = append(errs, fmt.Errorf("chat watch %s: the watches file has a watch of that name: left out", cw.Name))
			continue
		}
		w, err := ParseWatchSpec(cw.Spec, "en")
		if err != nil {
			errs = append(errs, fmt.Errorf("chat watch %s: %q: %w: left out", cw.Name, cw.Spec, err))
			continue
		}
		w.Name, w.Channels, w.Muted, w.FromChat = cw.Name, []string{cw.Channel}, cw.Muted, true
		out.Watches = append(out.Watches, w)
	}
	out.index = buildIndex(out.Watches)
	return out, errs
}

// Origin says where a watch came from: "file" or "chat".
func (w *Watch) Origin() string {
	if w.FromChat {
		return "chat"
	}
	return "file"
}

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
	Channel *Channel
	Store   ChatStore
	Live    *Live
	Metrics *Metrics
	Logger  *slog.Logger
	// Test sends /test's message on the channel the way alerts go (nil: the answer alone).
	Test func(ctx context.Context) error
	// Changed is called after a watch was added, muted, unmuted or removed (the crawler's wakes
	// nothing: a new watch is evaluated, with its backlog, at each site's next crawl).
	Changed func()
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

// Handle runs message m and returns the answer to give in its chat; ok false means give none
// (a stranger, a group member not allowed, no command of ours): counted, never answered.
func (c *Commander) Handle(ctx context.Context, m *TelegramMessage) (answer string, ok bool) {
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
		return "", false
	}
	if perr != nil {
		return perr.Error(), true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	answer, err := c.run(ctx, m, cmd)
	if err != nil {
		if c.Logger != nil {
			c.Logger.ErrorContext(ctx, "chat command failed", "channel", c.Channel.Name, "command", string(cmd.Verb), "err", err)
		}
		return say(lang, "지금은 할 수 없습니다. 잠시 뒤 다시 해 주세요.", "could not do it now; try again later."), true
	}
	return answer, true
}

func (c *Commander) run(ctx context.Context, m *TelegramMessage, cmd Command) (string, error) {
	lang, live := c.Channel.Language, c.Live.Load()
	switch cmd.Verb {
	case VerbHelp:
		return CommandHelp, nil
	case VerbTest:
		if c.Test != nil {
			if err := c.Test(ctx); err != nil {
				return "", err
			}
		}
		return say(lang, "시험 메시지를 보냈습니다: 알림은 이 채팅으로 옵니다.", "test message sent: alerts arrive in this chat."), nil
	case VerbWatches:
		return c.list(live), nil
	case VerbWatch:
		cw := ChatWatch{Channel: c.Channel.Name, Spec: cmd.Args, CreatedAt: time.Now()}
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
		answer := fmt.Sprintf(say(lang, ko, en), name, Describe(cmd.Watch, lang), name, name)
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
	return fmt.Sprintf(say(lang, "알림 %s (%s) %s.", "watch %s (%s) %s."), cmd.Name, Describe(w, lang), verb), nil
}

// reload puts the store's chat watches in force.
func (c *Commander) reload(ctx context.Context) error {
	ws, err := c.Store.ChatWatches(ctx)
	if err != nil {
		return err
	}
	for _, err := range c.Live.SetChat(ws) {
		if c.Logger != nil {
			c.Logger.WarnContext(ctx, "chat watch left out", "err", err)
		}
	}
	if c.Changed != nil {
		c.Changed()
	}
	return nil
}

// list is /watches: the watches of this channel, file and chat, one a line.
func (c *Commander) list(live *Config) string {
	lang := c.Channel.Language
	var b strings.Builder
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
		fmt.Fprintf(&b, "%s [%s]%s: %s\n", w.Name, origin, muted, Describe(w, lang))
	}
	if b.Len() == 0 {
		return say(lang, "이 채팅의 알림이 없습니다. /help", "no watches in this chat. /help")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
