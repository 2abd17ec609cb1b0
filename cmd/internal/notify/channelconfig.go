package notify

// The channels section of a watches file: each channel's type, destination and limits.

import (
	"net/url"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ChannelType is the wire format a channel speaks.
type ChannelType string

// The four channel types.
const (
	Webhook  ChannelType = "webhook"
	Slack    ChannelType = "slack"
	Discord  ChannelType = "discord"
	Telegram ChannelType = "telegram"
)

// Channel is one destination: a webhook URL or a Telegram chat. URLs and tokens that carry a secret
// are read from the environment variable named in the file (url_env, token_env), never from the
// file itself (except the generic webhook's url, which may be a plain local address).
type Channel struct {
	Name        string
	Type        ChannelType
	URL         string        // webhook, slack, discord: resolved from url or url_env
	Token       string        // telegram: resolved from token_env
	ChatID      string        // telegram
	BaseURL     string        // override of scheme://host[:port] (tests); telegram: the API base
	Language    string        // "ko" (default) or "en"
	MinInterval time.Duration // at most one message per MinInterval (telegram default 1s)
	Timeout     time.Duration // one request's timeout (default 10s)
	// Commands (telegram, `commands: true`) makes the process delivering the channel take the
	// chat's commands (/watch, /watches, ...; see chat.go): from ChatID, and in a group only from
	// the user ids in AllowFrom.
	Commands  bool
	AllowFrom []int64
	// MaxChatWatches is how many watches the chat may make (`max_chat_watches`, default 50):
	// /watch past it is refused, saying so.
	MaxChatWatches int
}

// defaultMaxChatWatches is a command channel's max_chat_watches when the file gives none.
const defaultMaxChatWatches = 50

// fileChannel is a channel's shape in the file, decoded with KnownFields from yaml.v3 nodes (so
// every error has a line).
type fileChannel struct {
	Type        string  `yaml:"type"`
	URL         string  `yaml:"url"`
	URLEnv      string  `yaml:"url_env"`
	TokenEnv    string  `yaml:"token_env"`
	ChatID      string  `yaml:"chat_id"`
	BaseURL     string  `yaml:"base_url"`
	Language    string  `yaml:"language"`
	MinInterval string  `yaml:"min_interval"`
	Timeout     string  `yaml:"timeout"`
	Commands    bool    `yaml:"commands"`
	AllowFrom   []int64 `yaml:"allow_from"`
	MaxChat     *int    `yaml:"max_chat_watches"`
}

// parseChannel validates channel name's mapping n; its secrets come from getenv.
func parseChannel(name string, n *yaml.Node, getenv func(string) string, errs *lineErrors) *Channel {
	ch := &Channel{Name: name, Language: "ko", Timeout: 10 * time.Second}
	if n.Kind != yaml.MappingNode {
		errs.add(n, "channel %q must be a mapping", name)
		return ch
	}
	var f fileChannel
	if !decodeStrict(n, &f, errs) {
		return ch
	}
	ch.Type = ChannelType(f.Type)
	ch.ChatID = f.ChatID
	ch.Commands, ch.AllowFrom = f.Commands, f.AllowFrom
	if (f.Commands || len(f.AllowFrom) > 0) && ch.Type != Telegram {
		errs.add(orNode(field(n, "commands"), field(n, "allow_from")), "channel %q: commands and allow_from are for telegram only", name)
	}
	if len(f.AllowFrom) > 0 && !f.Commands {
		errs.add(field(n, "allow_from"), "channel %q: allow_from without commands: true does nothing", name)
	}
	ch.MaxChatWatches = defaultMaxChatWatches
	if f.MaxChat != nil {
		ch.MaxChatWatches = *f.MaxChat
		switch {
		case !f.Commands:
			errs.add(field(n, "max_chat_watches"), "channel %q: max_chat_watches without commands: true does nothing", name)
		case *f.MaxChat < 1 || *f.MaxChat > 1000:
			errs.add(field(n, "max_chat_watches"), "channel %q: max_chat_watches %d is out of range 1..1000", name, *f.MaxChat)
		}
	}
	ch.BaseURL = strings.TrimRight(f.BaseURL, "/")
	if f.Language != "" {
		ch.Language = f.Language
	}
	if ch.Language != "ko" && ch.Language != "en" {
		errs.add(field(n, "language"), "channel %q: language %q (want ko or en)", name, f.Language)
	}
	p := channelParse{name: name, n: n, getenv: getenv, errs: errs}
	def := time.Duration(0)
	if ch.Type == Telegram {
		def = time.Second
	}
	ch.MinInterval = p.duration("min_interval", f.MinInterval, def)
	ch.Timeout = p.duration("timeout", f.Timeout, 10*time.Second)
	p.destination(ch, &f)
	if ch.BaseURL != "" && !strings.HasPrefix(ch.BaseURL, "http://") && !strings.HasPrefix(ch.BaseURL, "https://") {
		errs.add(field(n, "base_url"), "channel %q: base_url must start with http:// or https://", name)
	}
	return ch
}

// channelParse is the parsing of one channel's mapping n: its errors name the channel and the
// line of the key at fault.
type channelParse struct {
	name   string
	n      *yaml.Node
	getenv func(string) string
	errs   *lineErrors
}

// duration parses the duration v of key (def when empty).
func (p channelParse) duration(key, v string, def time.Duration) time.Duration {
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		p.errs.add(field(p.n, key), "channel %q: %s %q is not a duration like 1s", p.name, key, v)
	}
	return d
}

// fromEnv reads the secret in the environment variable env, named by key.
func (p channelParse) fromEnv(key, env string) string {
	if !envRE.MatchString(env) {
		p.errs.add(field(p.n, key), "channel %q: %s %q is not an environment variable name", p.name, key, env)
		return ""
	}
	if p.getenv == nil { // listing: no secret is read
		return ""
	}
	v := strings.TrimSpace(p.getenv(env))
	if v == "" {
		p.errs.add(field(p.n, key), "channel %q: environment variable %s is not set", p.name, env)
	}
	return v
}

// destination sets where ch sends by its type: a URL (webhook, Slack, Discord; a secret one only
// from url_env) or a Telegram token and chat.
func (p channelParse) destination(ch *Channel, f *fileChannel) {
	name, n, errs := p.name, p.n, p.errs
	switch ch.Type {
	case Webhook, Slack, Discord:
		switch {
		case f.URL != "" && f.URLEnv != "":
			errs.add(n, "channel %q: give url or url_env, not both", name)
		case f.URLEnv != "":
			ch.URL = p.fromEnv("url_env", f.URLEnv)
		case f.URL != "" && ch.Type == Webhook:
			ch.URL = f.URL
		case f.URL != "":
			errs.add(field(n, "url"), "channel %q: a %s URL is a secret: put it in an environment variable and name it with url_env", name, ch.Type)
		default:
			errs.add(n, "channel %q: url_env is required", name)
		}
		if ch.URL != "" {
			key := "url"
			if f.URLEnv != "" {
				key = "url_env"
			}
			p.checkURL(key, ch.URL)
		}
		if f.TokenEnv != "" || f.ChatID != "" {
			errs.add(n, "channel %q: token_env and chat_id are for telegram only", name)
		}
	case Telegram:
		if f.TokenEnv == "" {
			errs.add(n, "channel %q: token_env is required", name)
		} else {
			ch.Token = p.fromEnv("token_env", f.TokenEnv)
		}
		if f.ChatID == "" {
			errs.add(n, "channel %q: chat_id is required", name)
		}
		if f.URL != "" || f.URLEnv != "" {
			errs.add(n, "channel %q: telegram takes token_env and chat_id, not url", name)
		}
	default:
		errs.add(orNode(field(n, "type"), n), "channel %q: type %q (want webhook, slack, discord or telegram)", name, f.Type)
	}
}

// checkURL refuses a destination URL (read from key, after the environment) that no request can
// reach: one that does not parse, a scheme other than http and https, no host. The error names the
// line and never the URL (it may hold a secret).
func (p channelParse) checkURL(key, raw string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		p.errs.add(field(p.n, key), "channel %q: the URL does not parse", p.name)
	case u.Scheme != "http" && u.Scheme != "https":
		p.errs.add(field(p.n, key), "channel %q: the URL's scheme is %q (want http or https)", p.name, u.Scheme)
	case u.Host == "":
		p.errs.add(field(p.n, key), "channel %q: the URL has no host", p.name)
	}
}
