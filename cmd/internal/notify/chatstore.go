package notify

// The chat's watches as the engine keeps them: a Telegram channel with `commands: true` takes
// /watch and its siblings from its chat (package notify/chat); the watches it makes are kept by a
// ChatStore beside the claims and are in force beside the file's, under the same rules.

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"gopkg.in/yaml.v3"
)

// ChatWatch is a watch made in a chat, as stored: its name, the channel whose chat made it (its
// one channel) and its conditions in their canonical form (CanonicalSpec, read again on every
// load; /watch's arguments as typed are read too).
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

// WithChat returns a config of c's channels and watches and the chat's watches ws after them,
// each read by parse (the chat's grammar of a stored spec). A chat watch whose channel is not a
// command channel of c, whose name a watch of c has, or whose spec does not parse is left out,
// with an error saying why (the caller logs them).
func (c *Config) WithChat(ws []ChatWatch, parse func(spec string) (*Watch, error)) (*Config, []error) {
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
		w, err := parse(cw.Spec)
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
