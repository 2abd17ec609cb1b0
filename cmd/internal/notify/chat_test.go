package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/telegramtest"
	"github.com/golfcrawler/golf-crawler/internal/retry"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// memChat is a ChatStore in memory (liteclaims has the durable one, tested there).
type memChat struct {
	mu      sync.Mutex
	watches []ChatWatch
	offsets map[string]int64
	seq     int
}

func (m *memChat) ChatWatches(context.Context) ([]ChatWatch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.watches), nil
}

func (m *memChat) AddChatWatch(_ context.Context, w ChatWatch, taken func(string) bool) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seq++
	w.Name = fmt.Sprintf("chat-%d", m.seq)
	for i := 2; taken(w.Name); i++ {
		w.Name = fmt.Sprintf("chat-%d-%d", m.seq, i)
	}
	m.watches = append(m.watches, w)
	return w.Name, nil
}

func (m *memChat) SetChatWatchMuted(_ context.Context, name string, muted bool) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.watches {
		if m.watches[i].Name == name {
			m.watches[i].Muted = muted
			return true, nil
		}
	}
	return false, nil
}

func (m *memChat) RemoveChatWatch(_ context.Context, name string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := len(m.watches)
	m.watches = slices.DeleteFunc(m.watches, func(o ChatWatch) bool { return o.Name == name })
	return len(m.watches) < n, nil
}

func (m *memChat) ChatOffset(_ context.Context, ch string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.offsets[ch], nil
}

func (m *memChat) SetChatOffset(_ context.Context, ch string, next int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.offsets[ch] = next
	return nil
}

const chatToken = "123456:fake-token"

// chatSetup is a watches file with one command channel on a fake bot, a file watch on it, and a
// Poller running until stop.
type chatSetup struct {
	bot     *telegramtest.Bot
	live    *Live
	store   *memChat
	metrics *Metrics
	reg     *prometheus.Registry
	errc    chan error
	stop    context.CancelFunc
}

func newChat(t *testing.T, chatID string, allowFrom string) *chatSetup {
	bot := telegramtest.New(t, chatToken)
	file := fmt.Sprintf(`channels:
  tg: {type: telegram, token_env: TG, chat_id: "%s", base_url: %s, commands: true%s}
watches:
  - {name: file-lake, courses: [lake], channels: [tg]}
`, chatID, bot.URL(), allowFrom)
	cfg, err := Parse([]byte(file), func(string) string { return chatToken })
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	s := &chatSetup{bot: bot, live: NewLive(cfg), store: &memChat{offsets: map[string]int64{}}, metrics: NewMetrics(reg), reg: reg}
	s.start(t)
	return s
}

func (s *chatSetup) start(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s.errc, s.stop = make(chan error, 1), cancel
	p := &Poller{Commander: &Commander{Channel: s.live.File().Channels["tg"], Store: s.store, Live: s.live, Metrics: s.metrics,
		Logger: testkit.Logger(t, 0)}, PollTimeout: 30 * time.Second, Backoff: retry.Backoff{Base: time.Millisecond, Max: time.Millisecond}}
	go func() { s.errc <- p.Run(ctx) }()
	t.Cleanup(cancel)
}

func (s *chatSetup) restart(t *testing.T) {
	s.stop()
	testkit.NoErr(t, s.errc, 10*time.Second, "the poller stops")
	s.start(t)
}

// answer sends text from user in chat and returns the answer to it.
func (s *chatSetup) answer(t *testing.T, chat int64, typ string, user int64, text string) string {
	t.Helper()
	id := s.bot.Say(chat, typ, user, text)
	m := testkit.Recv(t, s.bot.Sent, 10*time.Second, "the answer to "+text)
	if m.ReplyTo != id*10 {
		t.Fatalf("answer %q is to message %d, want %d (%q): an earlier message was answered", m.Text, m.ReplyTo, id*10, text)
	}
	return m.Text
}

func (s *chatSetup) counted(result string) float64 {
	var m dto.Metric
	_ = s.metrics.commandsC.WithLabelValues("tg", result).Write(&m)
	return m.GetCounter().GetValue()
}

func gauge(g prometheus.Gauge) float64 {
	var m dto.Metric
	_ = g.Write(&m)
	return m.GetGauge().GetValue()
}

func wantIn(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("answer %q lacks %q", got, w)
		}
	}
}

// TestChatWatchLifecycle: a golfer in the channel's private chat adds, lists, mutes, unmutes and
// removes a watch; each answer says what was understood and the name; the file's watch cannot be
// removed from the chat.
func TestChatWatchLifecycle(t *testing.T) {
	s := newChat(t, "100", "")
	a := s.answer(t, 100, "private", 100, "/watch 토,일 05:00-08:00 15만 레이크")
	wantIn(t, a, "chat-1", "토·일 05:00–08:00, 150,000원 이하, 코스에 '레이크'")
	w := s.live.Load().Watch("chat-1")
	if w == nil || !w.FromChat || w.Channels[0] != "tg" || *w.MaxPriceKRW != 150000 || w.Origin() != "chat" {
		t.Fatalf("live watch: %+v", w)
	}
	wantIn(t, s.answer(t, 100, "private", 100, "/watches"), "file-lake [파일]", "chat-1 [채팅]: 토·일")
	wantIn(t, s.answer(t, 100, "private", 100, "/remove file-lake"), "watches 파일의 알림")
	if s.live.Load().Watch("file-lake") == nil {
		t.Fatal("the file's watch was removed from the chat")
	}
	wantIn(t, s.answer(t, 100, "private", 100, "/mute chat-1"), "chat-1", "껐습니다")
	if !s.live.Load().Watch("chat-1").Muted {
		t.Fatal("not muted")
	}
	wantIn(t, s.answer(t, 100, "private", 100, "/unmute chat-1"), "다시 켰습니다")
	wantIn(t, s.answer(t, 100, "private", 100, "/watch 25:00-26:00"), "HH:MM")
	wantIn(t, s.answer(t, 100, "private", 100, "/help"), "/watch 토,일 05:00-08:00 15만 레이크", "/watch sat,sun")
	wantIn(t, s.answer(t, 100, "private", 100, "/remove chat-1"), "지웠습니다")
	if s.live.Load().Watch("chat-1") != nil {
		t.Fatal("still live after /remove")
	}
	if got := s.counted(CommandAccepted); got != 8 {
		t.Errorf("accepted %v, want 8", got)
	}
}

// TestChatStrangerIsIgnored: a command from another chat is neither run nor answered, and is
// counted; the next command of the channel's chat gets the next answer.
func TestChatStrangerIsIgnored(t *testing.T) {
	s := newChat(t, "100", "")
	s.bot.Say(999, "private", 999, "/watch 주말")
	s.bot.Say(100, "private", 100, "hello") // no command: ignored too
	wantIn(t, s.answer(t, 100, "private", 100, "/watches"), "file-lake")
	if len(s.live.Load().Watches) != 1 {
		t.Fatalf("the stranger's watch was made: %d watches", len(s.live.Load().Watches))
	}
	if s.counted(CommandStranger) != 1 || s.counted(CommandNotOurs) != 1 || s.counted(CommandAccepted) != 1 {
		t.Errorf("counted stranger %v, not command %v, accepted %v", s.counted(CommandStranger), s.counted(CommandNotOurs), s.counted(CommandAccepted))
	}
}

// TestChatGroupNeedsAllowFrom: in a group nobody commands without allow_from; with it, only the
// users it names.
func TestChatGroupNeedsAllowFrom(t *testing.T) {
	s := newChat(t, "-100", "")
	s.bot.Say(-100, "supergroup", 5, "/watch 주말")
	s.bot.Say(-100, "supergroup", 6, "/watches")
	// No answer can be awaited here: the offset moving past both proves they were read.
	testkit.WaitFor(t, 10*time.Second, "both read", func() bool { return s.counted(CommandNotAllowed) == 2 })
	if len(s.live.Load().Watches) != 1 {
		t.Fatal("a group member without allow_from made a watch")
	}
	select {
	case m := <-s.bot.Sent:
		t.Fatalf("answered %q", m.Text)
	default:
	}

	s = newChat(t, "-100", ", allow_from: [5]")
	s.bot.Say(-100, "group", 6, "/watch 주말")
	wantIn(t, s.answer(t, -100, "group", 5, "/watch 평일 10만"), "chat-1", "월·화·수·목·금, 100,000원 이하")
	if s.counted(CommandNotAllowed) != 1 || len(s.live.Load().Watches) != 2 {
		t.Errorf("not allowed %v, watches %d", s.counted(CommandNotAllowed), len(s.live.Load().Watches))
	}
}

// TestChatRestartKeepsTheOffset: after a restart the poller asks from the offset kept, so the
// command before it is not run again.
func TestChatRestartKeepsTheOffset(t *testing.T) {
	s := newChat(t, "100", "")
	s.answer(t, 100, "private", 100, "/watch 주말")
	s.restart(t)
	a := s.answer(t, 100, "private", 100, "/watches")
	if strings.Count(a, "[채팅]") != 1 {
		t.Fatalf("after the restart: %q; want one chat watch", a)
	}
	if offs := s.bot.Offsets(); offs[len(offs)-1] != 2 {
		t.Fatalf("offsets asked %v; want the last from 2", offs)
	}
}

// TestChatConflictStopsThePoller: Telegram's 409 (another poller of the bot) is reported and
// stops the poller instead of retrying forever.
func TestChatConflictStopsThePoller(t *testing.T) {
	s := newChat(t, "100", "")
	s.bot.Conflict(true)
	s.bot.Say(100, "private", 100, "/watches") // wakes the long poll: the next one gets 409
	err := testkit.Recv(t, s.errc, 10*time.Second, "the poller's end")
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("Run: %v, want ErrConflict", err)
	}
	if got := gauge(s.metrics.pollerC.WithLabelValues("tg")); got != 1 {
		t.Errorf("conflict gauge %v", got)
	}
}

// TestOnePollerPerBotToken: two command channels on one bot token are refused, naming both.
func TestOnePollerPerBotToken(t *testing.T) {
	file := `channels:
  a: {type: telegram, token_env: TG, chat_id: "1", commands: true}
  b: {type: telegram, token_env: TG, chat_id: "2", commands: true}
  c: {type: telegram, token_env: TG, chat_id: "3"}
watches:
  - {name: w, channels: [a, b, c]}
`
	_, err := Parse([]byte(file), func(string) string { return chatToken })
	if err == nil || !strings.Contains(err.Error(), `channels "a" and "b"`) || strings.Contains(err.Error(), chatToken) {
		t.Fatalf("err %v; want a refusal naming a and b, without the token", err)
	}
	if _, err := Parse([]byte(strings.Replace(file, `"2", commands: true`, `"2"`, 1)), func(string) string { return chatToken }); err != nil {
		t.Fatalf("one command channel refused: %v", err)
	}
}

// TestChatWatchWithoutWeekdaySaysNoDemand (#51 item 1): /watch with no weekday (a chat watch
// names no source nor date) is answered that it is checked on the sites' schedule; one with
// weekdays is not.
func TestChatWatchWithoutWeekdaySaysNoDemand(t *testing.T) {
	s := newChat(t, "100", "")
	wantIn(t, s.answer(t, 100, "private", 100, "/watch 05:00-08:00 레이크"), "chat-1", "평소 수집 주기로 확인합니다")
	if a := s.answer(t, 100, "private", 100, "/watch 토 레이크"); strings.Contains(a, "수집 주기") {
		t.Errorf("a weekday watch's answer: %q", a)
	}
}
