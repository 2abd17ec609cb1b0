package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/telegramtest"
	"github.com/golfcrawler/golf-crawler/internal/retry"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// memChat is a ChatStore in memory (liteclaims has the durable one, tested there).
type memChat struct {
	mu      sync.Mutex
	watches []notify.ChatWatch
	offsets map[string]int64
	seq     int
}

func (m *memChat) ChatWatches(context.Context) ([]notify.ChatWatch, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.watches), nil
}

func (m *memChat) AddChatWatch(_ context.Context, w notify.ChatWatch, taken func(string) bool) (string, error) {
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
	m.watches = slices.DeleteFunc(m.watches, func(o notify.ChatWatch) bool { return o.Name == name })
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

// inForce is the watches in force as the alert service keeps them: the file's, then the chat's
// (reload).
type inForce struct {
	file *notify.Config
	p    atomic.Pointer[notify.Config]
}

func (l *inForce) Load() *notify.Config { return l.p.Load() }
func (l *inForce) File() *notify.Config { return l.file }

func (l *inForce) reload(ctx context.Context, st notify.ChatStore) error {
	ws, err := st.ChatWatches(ctx)
	if err != nil {
		return err
	}
	c, _ := l.file.WithChat(ws, ReadSpec)
	l.p.Store(c)
	return nil
}

// chatSetup is a watches file with one command channel on a fake bot, a file watch on it, and a
// Poller running until stop.
type chatSetup struct {
	bot     *telegramtest.Bot
	live    *inForce
	store   *memChat
	metrics *Metrics
	reg     *prometheus.Registry
	logs    *testkit.SyncBuffer // the poller's and the commander's log, also in the test's output
	errc    chan error
	stop    context.CancelFunc
}

func newChat(t *testing.T, chatID string, allowFrom string) *chatSetup {
	s := setupChat(t, chatID, allowFrom)
	s.start(t)
	return s
}

// setupChat is newChat without starting the poller (updates queued first).
func setupChat(t *testing.T, chatID string, allowFrom string) *chatSetup {
	bot := telegramtest.New(t, chatToken)
	file := fmt.Sprintf(`channels:
  tg: {type: telegram, token_env: TG, chat_id: "%s", base_url: %s, commands: true%s}
watches:
  - {name: file-lake, courses: [lake], channels: [tg]}
`, chatID, bot.URL(), allowFrom)
	cfg, err := notify.Parse([]byte(file), func(string) string { return chatToken })
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	live := &inForce{file: cfg}
	live.p.Store(cfg)
	s := &chatSetup{bot: bot, live: live, store: &memChat{offsets: map[string]int64{}}, metrics: NewMetrics(reg), reg: reg,
		logs: &testkit.SyncBuffer{}}
	return s
}

func (s *chatSetup) start(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s.errc, s.stop = make(chan error, 1), cancel
	logger := slog.New(slog.NewTextHandler(io.MultiWriter(t.Output(), s.logs), nil))
	p := &Poller{Commander: &Commander{Channel: s.live.File().Channels["tg"], Store: s.store, Watches: s.live.Load,
		Changed: func(ctx context.Context) error { return s.live.reload(ctx, s.store) }, Metrics: s.metrics,
		Logger: logger}, Logger: logger, PollTimeout: 30 * time.Second, Backoff: retry.Backoff{Base: time.Millisecond, Max: time.Millisecond}}
	done := make(chan struct{})
	go func() { defer close(done); s.errc <- p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done }) // nothing logs into the test's output after it
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

// TestChatAnswersAreNotLoggedAsFailures (review 4 F4): an answer Telegram accepted (200, ok: true,
// its result the Message it made) is no failure: the poller logs no warning for it. An answer
// Telegram refuses is logged with Telegram's description.
func TestChatAnswersAreNotLoggedAsFailures(t *testing.T) {
	s := newChat(t, "100", "")
	for _, text := range []string{"/help", "/watch 주말", "/watches", "/mute chat-1"} {
		s.answer(t, 100, "private", 100, text)
	}
	s.bot.FailSends(403, "Forbidden: bot was blocked by the user")
	s.bot.Say(100, "private", 100, "/watches")
	testkit.WaitFor(t, 10*time.Second, "the refused answer logged", func() bool { return len(s.logs.Lines("level=WARN")) > 0 })
	s.stop()
	testkit.NoErr(t, s.errc, 10*time.Second, "the poller stops")
	warns := s.logs.Lines("level=WARN")
	if len(warns) != 1 || !strings.Contains(warns[0], "Forbidden: bot was blocked by the user") {
		t.Fatalf("warnings %q; want one, for the refused answer, with Telegram's description", warns)
	}
}

// recvAnswer waits for the answer to update id (its message is id*10).
func (s *chatSetup) recvAnswer(t *testing.T, id int64, what string) string {
	t.Helper()
	m := testkit.Recv(t, s.bot.Sent, 20*time.Second, "the answer to "+what)
	if m.ReplyTo != id*10 {
		t.Fatalf("answer %q is to message %d, want %d (%s)", m.Text, m.ReplyTo, id*10, what)
	}
	return m.Text
}

// TestChatFloodOfLargeUpdates (review 4 F3): 100 updates of ~50 KB each (replies to a long
// message from a stranger, as the Bot API writes them: ~4.9 MB in all, over the 4 MiB read) queue
// between commands: the commands before the flood and the one after it are all answered.
func TestChatFloodOfLargeUpdates(t *testing.T) {
	s := setupChat(t, "100", "")
	first := s.bot.Say(100, "private", 100, "/watch 레이크")
	second := s.bot.Say(100, "private", 100, "/watches")
	long := strings.Repeat("가", 4096)
	for range 100 {
		s.bot.SayReply(999, "private", 999, long, long)
	}
	last := s.bot.Say(100, "private", 100, "/watch 파인")
	s.start(t)
	wantIn(t, s.recvAnswer(t, first, "/watch 레이크 (before the flood)"), "chat-1")
	wantIn(t, s.recvAnswer(t, second, "/watches (before the flood)"), "chat-1")
	wantIn(t, s.recvAnswer(t, last, "/watch 파인 (after the flood)"), "chat-2")
	if got := s.counted(CommandStranger); got != 100 {
		t.Errorf("strangers counted %v, want 100", got)
	}
}

// TestChatSkipsAnUpdateTooLargeToRead (review 4 F3): an update that alone is over the 4 MiB
// read is skipped (its update_id read from the cut answer's start), logged and counted; the
// command after it is answered.
func TestChatSkipsAnUpdateTooLargeToRead(t *testing.T) {
	s := setupChat(t, "100", "")
	huge := strings.Repeat("가", 400_000) // 2.4 MB as the Bot API writes it, twice in the update
	big := s.bot.SayReply(999, "private", 999, huge, huge)
	help := s.bot.Say(100, "private", 100, "/help")
	s.start(t)
	wantIn(t, s.recvAnswer(t, help, "/help after the huge update"), "/watch")
	if got := s.counted(CommandTooLarge); got != 1 {
		t.Errorf("too large counted %v, want 1", got)
	}
	if lines := s.logs.Lines("too large"); len(lines) != 1 || !strings.Contains(lines[0], fmt.Sprintf("update_id=%d", big)) {
		t.Errorf("log lines %q; want one naming update %d", lines, big)
	}
}

// TestChatWatchesPerChatCapped (review 4 F5): a chat makes at most 50 watches (the default); the
// 51st is refused with an answer saying the cap, and /help says it too.
func TestChatWatchesPerChatCapped(t *testing.T) {
	s := newChat(t, "100", "")
	for i := range 50 {
		wantIn(t, s.answer(t, 100, "private", 100, fmt.Sprintf("/watch 주말 코스%c", 'a'+rune(i%26))), fmt.Sprintf("chat-%d", i+1))
	}
	a := s.answer(t, 100, "private", 100, "/watch 평일")
	if strings.Contains(a, "chat-51") || !strings.Contains(a, "50") {
		t.Fatalf("the 51st /watch answered %q; want a refusal naming the cap of 50", a)
	}
	if n := len(s.live.Load().Watches); n != 51 {
		t.Fatalf("%d watches in force, want the file's and 50", n)
	}
	wantIn(t, s.answer(t, 100, "private", 100, "/help"), "50")
	// Removing one makes room again.
	s.answer(t, 100, "private", 100, "/remove chat-7")
	wantIn(t, s.answer(t, 100, "private", 100, "/watch 평일"), "chat-51")
}

// TestChatWatchesListSplit (review 4 F5): /watches longer than Telegram's 4,096 characters comes
// in numbered messages, each within the limit, every watch in exactly one of them, none cut.
func TestChatWatchesListSplit(t *testing.T) {
	s := newChat(t, "100", "")
	for i := range 50 {
		wantIn(t, s.answer(t, 100, "private", 100, "/watch 토,일 05:00-08:00 15만 lakeside-country-club-east-course-championship-tees-"+letters(i)),
			fmt.Sprintf("chat-%d", i+1))
	}
	id := s.bot.Say(100, "private", 100, "/watches")
	var parts []string
	for len(parts) == 0 || !strings.Contains(parts[len(parts)-1], fmt.Sprintf("(%d/%d)", len(parts), len(parts))) {
		var m telegramtest.Message
		select {
		case m = <-s.bot.Sent:
		case <-time.After(10 * time.Second):
			refused := s.bot.Refused()
			for i := range refused {
				refused[i].Text = fmt.Sprintf("%d characters", len([]rune(refused[i].Text)))
			}
			t.Fatalf("no part %d of /watches in 10s; refused by the Bot API: %+v", len(parts)+1, refused)
		}
		if m.ReplyTo != id*10 {
			t.Fatalf("answer %q is to %d, want %d", m.Text, m.ReplyTo, id*10)
		}
		parts = append(parts, m.Text)
		if len(parts) > 10 {
			t.Fatalf("no last part among %d", len(parts))
		}
	}
	if len(parts) < 2 {
		t.Fatalf("/watches in %d message(s)", len(parts))
	}
	all := strings.Join(parts, "\n")
	for i, p := range parts {
		if n := len([]rune(p)); n > 4096 || !strings.Contains(p, fmt.Sprintf("(%d/%d)", i+1, len(parts))) {
			t.Errorf("part %d: %d characters, numbered %v", i+1, n, strings.Contains(p, fmt.Sprintf("(%d/%d)", i+1, len(parts))))
		}
	}
	for i := range 50 {
		if n := strings.Count(all, fmt.Sprintf("chat-%d [채팅]: 토·일 05:00–08:00, 150,000원 이하, 코스에 'lakeside-country-club-east-course-championship-tees-%s'", i+1, letters(i))); n != 1 {
			t.Errorf("chat-%d in %d parts, want 1", i+1, n)
		}
	}
	if strings.Count(all, "file-lake [파일]") != 1 {
		t.Errorf("the file's watch is not listed once")
	}
}

// letters is i written in two letters: aa, ab, ...
func letters(i int) string { return string([]rune{'a' + rune(i/26), 'a' + rune(i%26)}) }

// TestChatWatchCapPerChannel: max_chat_watches sets a channel's cap (the refusal and /help say
// it); it is for command channels only, 1..1000.
func TestChatWatchCapPerChannel(t *testing.T) {
	s := newChat(t, "100", ", max_chat_watches: 2")
	s.answer(t, 100, "private", 100, "/watch 주말")
	s.answer(t, 100, "private", 100, "/watch 평일")
	wantIn(t, s.answer(t, 100, "private", 100, "/watch 토"), "최대 2개")
	wantIn(t, s.answer(t, 100, "private", 100, "/help"), "최대 2개", "at most 2 in this chat")
	for extra, want := range map[string]string{
		"commands: true, max_chat_watches: 0":    "max_chat_watches 0 is out of range 1..1000",
		"commands: true, max_chat_watches: 1001": "max_chat_watches 1001 is out of range",
		"max_chat_watches: 5":                    "max_chat_watches without commands: true does nothing",
	} {
		file := "channels:\n  tg: {type: telegram, token_env: TG, chat_id: \"1\", " + extra + "}\nwatches:\n  - {name: w, channels: [tg]}\n"
		if _, err := notify.Parse([]byte(file), func(string) string { return chatToken }); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", extra, err, want)
		}
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
