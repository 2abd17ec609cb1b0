package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/telegramtest"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// chatWatches is a watches file whose telegram channel tg (on bot) takes commands.
func chatWatches(t *testing.T, bot *telegramtest.Bot, chatID, extra string) string {
	return writeWatches(t, fmt.Sprintf(`channels:
  tg: {type: telegram, token_env: TG_TOKEN, chat_id: "%s", base_url: %s, commands: true, min_interval: 0s%s}
watches:
  - {name: far, courses: [nowhere], channels: [tg]}
`, chatID, bot.URL(), extra))
}

// inbox reads what a fake bot was sent: the answers to commands and the alerts, which may come
// in either order (a new watch's backlog is claimed before its answer leaves).
type inbox struct {
	bot    *telegramtest.Bot
	alerts []string
}

// ask sends text in chat 100 as user 100 and returns the answer to it.
func (in *inbox) ask(t *testing.T, text string, ps ...*notifier) string {
	t.Helper()
	return in.askAs(t, 100, "private", 100, text, ps...)
}

func (in *inbox) askAs(t *testing.T, chat int64, chatType string, from int64, text string, ps ...*notifier) string {
	t.Helper()
	id := in.bot.Say(chat, chatType, from, text)
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m := <-in.bot.Sent:
			if m.ReplyTo == 0 {
				in.alerts = append(in.alerts, m.Text)
				continue
			}
			if m.ReplyTo != id*10 {
				t.Fatalf("%q: got %q (to message %d)", text, m.Text, m.ReplyTo)
			}
			return m.Text
		case <-deadline:
			var logs strings.Builder
			for _, p := range ps {
				logs.WriteString(p.Logs.String())
			}
			t.Fatalf("no answer to %q in 30s; logs:\n%s", text, logs.String())
			return ""
		}
	}
}

// take returns the alerts sent since the last take, waiting up to d for want of them (and d
// for none more when want is 0); an answer to a command is an error.
func (in *inbox) take(t *testing.T, want int, d time.Duration) []string {
	t.Helper()
	deadline := time.After(d)
wait:
	for want == 0 || len(in.alerts) < want {
		select {
		case m := <-in.bot.Sent:
			if m.ReplyTo != 0 {
				t.Fatalf("an unexpected answer: %q", m.Text)
			}
			in.alerts = append(in.alerts, m.Text)
		case <-deadline:
			break wait
		}
	}
	out := in.alerts
	in.alerts = nil
	return out
}

// TestNotifyChatWatchFiresOnce: on the central path a golfer makes a watch with /watch in the
// chat of a command channel (fake Bot API); it is answered at once with what is open now in
// booking_lifetimes (the backlog, once), then an opening that arrives through Kafka is sent once;
// `booking-consumer watches` lists it beside the file's; after a restart no command is handled
// twice (the offset is kept in PostgreSQL) and nothing is sent again. On main the command got no
// answer: commands: true was accepted and nothing polled.
func TestNotifyChatWatchFiresOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t, secretEnv...)
	bot := telegramtest.New(t, tgToken)
	seoul, _ := time.LoadLocation("Asia/Seoul")
	day := time.Now().In(seoul).AddDate(0, 0, 10).Format(time.DateOnly)
	listing := func(course, tee string, price int64) events.Listing {
		players := 4
		return events.Listing{Source: "test", CourseName: course, RoundDate: day, PlayDate: day, TeeTime: tee,
			Values: events.Values{PriceKRW: &price, Players: &players}}
	}
	open := []events.Event{events.Opened(listing("레이크", "07:00", 140000), "c1", time.Now().Add(-48*time.Hour)),
		events.Opened(listing("마운틴", "07:10", 140000), "c1", time.Now().Add(-48*time.Hour))}
	msgs := []store.Message{{Event: &open[0]}, {Event: &open[1]}}
	if _, err := store.New(s.db).Ingest(t.Context(), msgs); err != nil {
		t.Fatal(err)
	}
	watches := chatWatches(t, bot, "100", "")
	group := kafkatest.Name(t, "g")
	n := startNotifier(t, s.bin, s.env, s.args(group, watches)...)
	waitUntil(t, 60*time.Second, "the consumer to start", func() bool { return strings.Contains(n.Logs.String(), "consumer started") }, n)

	in := &inbox{bot: bot}
	if a := in.ask(t, "/watch 15만 레이크", n); !strings.Contains(a, "chat-1") || !strings.Contains(a, "150,000원 이하, 코스에 '레이크'") {
		t.Fatalf("/watch answered %q", a)
	}
	got := in.take(t, 1, 20*time.Second)
	if len(got) != 1 || !strings.Contains(got[0], "07:00") || !strings.Contains(got[0], "열려 있음") {
		t.Fatalf("the chat watch's backlog: %q; want the 07:00 tee time once, as already open", got)
	}
	if a := in.ask(t, "/remove far", n); !strings.Contains(a, "watches 파일의 알림") {
		t.Fatalf("/remove of a file watch answered %q", a)
	}
	fresh := []events.Event{events.Opened(listing("레이크", "07:30", 150000), "c2", time.Now()),
		events.Opened(listing("레이크", "07:40", 150001), "c2", time.Now())}
	publish(t, s.addr, s.topic, fresh)
	got = in.take(t, 1, 20*time.Second)
	if len(got) != 1 || !strings.Contains(got[0], "07:30") || strings.Contains(got[0], "07:40") {
		t.Fatalf("after 07:30 opened: %q; want the 07:30 opening once", got)
	}
	n.stop(t)

	out, _, err := runCLI(t, t.Context(), map[string]string{"DATABASE_URL": envValue(s.env, "DATABASE_URL"), "TG_TOKEN": tgToken},
		"watches", "--watches", watches)
	if err != nil || !strings.Contains(out, "far     file  tg        -      course has 'nowhere'") ||
		!strings.Contains(out, "chat-1  chat  tg        -      up to 150,000 KRW, course has '레이크'") {
		t.Fatalf("booking-consumer watches: %v\n%s", err, out)
	}

	// A restart: the commands already handled are not handled again, nothing is sent again.
	n = startNotifier(t, s.bin, s.env, s.args(group, watches)...)
	waitUntil(t, 60*time.Second, "the consumer to start again", func() bool { return strings.Contains(n.Logs.String(), "consumer started") }, n)
	if a := in.ask(t, "/watches", n); !strings.Contains(a, "chat-1 [채팅]") || !strings.Contains(a, "far [파일]") {
		t.Fatalf("/watches after the restart answered %q", a)
	}
	if got := in.take(t, 0, 2*time.Second); len(got) != 0 {
		t.Fatalf("after the restart: %q", got)
	}
	offs := bot.Offsets()
	if len(offs) < 2 || offs[len(offs)-1] != 3 {
		t.Fatalf("getUpdates offsets %v; want the restart to ask from 3 (2 commands handled before)", offs)
	}
	n.stop(t)
	checkNoSecrets(t, "the notifier's logs", n.Logs.String())
	if lines := n.Logs.Lines("answer a command"); len(lines) > 0 {
		t.Errorf("answered commands logged as failures: %q", lines)
	}
}

// TestNotifyChatStrangersAndGroups: on the central path, a command from another chat, from a
// group member not in allow_from, or in a group channel without allow_from is ignored (handled:
// its offset is kept; never answered); a member in allow_from is answered.
func TestNotifyChatStrangersAndGroups(t *testing.T) {
	t.Parallel()
	const otherToken = "4343:tgOtherBotToken"
	s := newStack(t, append(secretEnv, "TG2_TOKEN="+otherToken)...)
	bot, bot2 := telegramtest.New(t, tgToken), telegramtest.New(t, otherToken)
	watches := writeWatches(t, fmt.Sprintf(`channels:
  tg: {type: telegram, token_env: TG_TOKEN, chat_id: "-100", base_url: %s, commands: true, allow_from: [7]}
  tg2: {type: telegram, token_env: TG2_TOKEN, chat_id: "-200", base_url: %s, commands: true}
watches:
  - {name: far, courses: [nowhere], channels: [tg, tg2]}
`, bot.URL(), bot2.URL()))
	n := startNotifier(t, s.bin, s.env, s.args(kafkatest.Name(t, "g"), watches)...)
	waitUntil(t, 60*time.Second, "the consumer to start", func() bool { return strings.Contains(n.Logs.String(), "consumer started") }, n)

	in := &inbox{bot: bot}
	bot.Say(555, "private", 555, "/watch 레이크")    // a stranger's chat
	bot.Say(-100, "supergroup", 8, "/watch 레이크")  // a member not in allow_from
	bot2.Say(-200, "supergroup", 7, "/watch 레이크") // a group channel without allow_from
	if a := in.askAs(t, -100, "supergroup", 7, "/watches", n); !strings.Contains(a, "far [파일]") || strings.Contains(a, "chat-") {
		t.Fatalf("the allowed member's /watches: %q", a)
	}
	offset := func(ch string) int64 {
		var next int64
		token := map[string]string{"tg": tgToken, "tg2": otherToken}[ch]
		bot, _ := pgclaims.BotKey(token)
		_ = s.db.QueryRow(t.Context(), "select next_offset from chat_offsets where bot = $1", bot).Scan(&next)
		return next
	}
	waitUntil(t, 30*time.Second, "tg2's command to be read", func() bool { return offset("tg2") == 2 }, n)
	if off := offset("tg"); off != 4 {
		t.Errorf("tg's offset %d; want 4 (3 updates read)", off)
	}
	select {
	case m := <-bot2.Sent:
		t.Fatalf("a group without allow_from was answered: %q", m.Text)
	case <-time.After(time.Second):
	}
	var made int
	if err := s.db.QueryRow(t.Context(), "select count(*) from chat_watches").Scan(&made); err != nil || made != 0 {
		t.Fatalf("chat watches made: %d, %v; want none", made, err)
	}
	n.stop(t)
}

// TestNotifyOnePollerPerBot: a second notifier on the same bot token (commands: true) is refused
// at start-up, naming the first (host and pid) and itself, never the token; once the first was
// killed (its session lock died with its connection), a notifier starts and takes the commands.
// A bot that another kind of process polls (a crawler cannot see the lock) answers 409: the
// poller stops, the log, /healthz and booking_notifier_command_poller_conflict say so.
func TestNotifyOnePollerPerBot(t *testing.T) {
	t.Parallel()
	s := newStack(t, secretEnv...)
	bot := telegramtest.New(t, tgToken)
	watches := chatWatches(t, bot, "100", "")
	group := kafkatest.Name(t, "g")
	first := startNotifier(t, s.bin, s.env, s.args(group, watches)...)
	waitUntil(t, 60*time.Second, "the first to start", func() bool { return strings.Contains(first.Logs.String(), "consumer started") }, first)
	second := startNotifier(t, s.bin, s.env, s.args(group, watches)...)
	if err := second.Wait(t, 60*time.Second); err == nil {
		t.Fatalf("the second notifier on the bot exited 0:\n%s", second.Logs.String())
	}
	logs := second.Logs.String()
	if !strings.Contains(logs, fmt.Sprintf("pid %d (its channel tg", first.Cmd.Process.Pid)) ||
		!strings.Contains(logs, fmt.Sprintf("pid %d)", second.Cmd.Process.Pid)) || !strings.Contains(logs, "one poller per bot") {
		t.Fatalf("the second's refusal does not name both:\n%s", testkit.Tail(logs, 3000))
	}
	checkNoSecrets(t, "the refusal", logs)

	// The first crashes: the next one takes the bot.
	_ = first.Cmd.Process.Kill()
	_ = first.Wait(t, 30*time.Second)
	addr := testkit.FreeAddr(t)
	third := startNotifier(t, s.bin, s.env, s.args(group, watches, "--metrics-addr", addr)...)
	waitUntil(t, 60*time.Second, "the third to start", func() bool { return strings.Contains(third.Logs.String(), "consumer started") }, third)
	in := &inbox{bot: bot}
	if a := in.ask(t, "/watches", third); !strings.Contains(a, "far [파일]") {
		t.Fatalf("/watches answered %q", a)
	}

	bot.Conflict(true)
	bot.Say(100, "private", 100, "/watches") // wakes the long poll: the next one meets the 409s
	var body string
	waitUntil(t, 60*time.Second, "/healthz to report the conflict", func() bool {
		code, b := testkit.Get(t, "http://"+addr+"/healthz")
		body = b
		return code == 503 && strings.Contains(body, "commands: channel tg")
	}, third)
	if _, metrics := testkit.Get(t, "http://"+addr+"/metrics"); !strings.Contains(metrics, `booking_notifier_command_poller_conflict{channel="tg"} 1`) {
		t.Errorf("no conflict metric:\n%s", metrics)
	}
	if !strings.Contains(third.Logs.String(), "409 Conflict") {
		t.Errorf("no log of the conflict:\n%s", testkit.Tail(third.Logs.String(), 3000))
	}
	checkNoSecrets(t, "/healthz", body)
	third.stop(t)
	checkNoSecrets(t, "the notifier's logs", third.Logs.String())
}

// TestNotificationsResendSendsAChatWatchsFailed: `booking-consumer notifications resend` sends a
// chat watch's failed alert again; it skipped it as watch_removed when it knew only the file's
// watches.
func TestNotificationsResendSendsAChatWatchsFailed(t *testing.T) {
	t.Parallel()
	db, dbURL := storetest.NewDBURL(t)
	bot := telegramtest.New(t, tgToken)
	watches := chatWatches(t, bot, "100", "")
	st := &pgclaims.Store{Pool: db, Owner: "notifier-1", Settle: time.Millisecond}
	name, err := st.AddChatWatch(t.Context(), notify.ChatWatch{Channel: "tg", Spec: "레이크", CreatedAt: time.Now()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := opening("레이크", "c1", time.Now())
	key := notify.ClaimKey(name, "tg", ev.EventID)
	if _, err := st.Claim(t.Context(), notify.ClaimBatch{Now: time.Now(), Claims: []notify.Claim{{Key: key, Watch: name, Channel: "tg", Event: &ev}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(t.Context(), "update notifications set status = 'failed', error = 'HTTP 403' where key = $1", key); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, t.Context(), map[string]string{"DATABASE_URL": dbURL, "TG_TOKEN": tgToken},
		"notifications", "resend", "--status", "failed", "--watches", watches)
	if err != nil {
		t.Fatalf("resend: %v\n%s", err, out)
	}
	if got := statusCounts(t, db); got["sent"] != 1 {
		t.Fatalf("after the resend: %v; want the chat watch's alert sent\n%s", got, out)
	}
	if m := testkit.Recv(t, bot.Sent, 10*time.Second, "the resent alert"); !strings.Contains(m.Text, "레이크") {
		t.Fatalf("resent %q", m.Text)
	}
}

// TestNotifyChatFloodOfLargeUpdates (review 4 F3, central path): two commands, then 100 updates
// of ~50 KB each (replies to a long message from a stranger: ~4.9 MB as the Bot API writes them,
// over the 4 MiB read), then a third command, all queued before the notifier starts: the three
// commands are answered, in order; getUpdates failing for longer than --failing-after puts
// /healthz at 503 ("alerts_commands: failing (since …)").
func TestNotifyChatFloodOfLargeUpdates(t *testing.T) {
	t.Parallel()
	s := newStack(t, secretEnv...)
	bot := telegramtest.New(t, tgToken)
	watches := chatWatches(t, bot, "100", "")
	ids := []int64{bot.Say(100, "private", 100, "/watch 레이크"), bot.Say(100, "private", 100, "/watches")}
	long := strings.Repeat("가", 4096)
	for range 100 {
		bot.SayReply(999, "private", 999, long, long)
	}
	ids = append(ids, bot.Say(100, "private", 100, "/watch 파인"))
	addr := testkit.FreeAddr(t)
	n := startNotifier(t, s.bin, s.env, s.args(kafkatest.Name(t, "g"), watches, "--metrics-addr", addr, "--failing-after", "1s")...)
	for i, want := range []string{"chat-1", "chat-1 [채팅]", "chat-2"} {
		var m telegramtest.Message
		waitUntil(t, 60*time.Second, fmt.Sprintf("the answer to command %d", i+1), func() bool {
			select {
			case m = <-bot.Sent:
				return true
			default:
				return false
			}
		}, n)
		if m.ReplyTo != ids[i]*10 || !strings.Contains(m.Text, want) {
			t.Fatalf("answer %d: %q to message %d; want %q to %d", i+1, m.Text, m.ReplyTo, want, ids[i]*10)
		}
	}
	bot.FailUpdates(502)
	bot.Say(100, "private", 100, "/help") // ends the long poll: the next ones fail
	waitUntil(t, 60*time.Second, "/healthz to report the failing poller", func() bool {
		code, body := testkit.Get(t, "http://"+addr+"/healthz")
		return code == 503 && strings.Contains(body, "alerts_commands: channel tg: failing (since ")
	}, n)
	n.stop(t)
	checkNoSecrets(t, "the notifier's logs", n.Logs.String())
	if lines := n.Logs.Lines("answer a command"); len(lines) > 0 {
		t.Errorf("answered commands logged as failures: %q", lines)
	}
}

// TestNotifyWatchesListsWithoutTheSecrets (issue #50 item 6): `booking-consumer watches` lists
// the watches without the channels' secrets in the environment (it sends nothing).
func TestNotifyWatchesListsWithoutTheSecrets(t *testing.T) {
	t.Parallel()
	_, dbURL := storetest.NewDBURL(t)
	watches := writeWatches(t, `channels:
  tg: {type: telegram, token_env: TG_TOKEN, chat_id: "100", commands: true}
watches:
  - {name: far, courses: [nowhere], channels: [tg]}
`)
	out, _, err := runCLI(t, t.Context(), map[string]string{"DATABASE_URL": dbURL}, "watches", "--watches", watches)
	if err != nil || !strings.Contains(strings.Join(strings.Fields(out), " "), "far file tg - course has 'nowhere'") {
		t.Fatalf("booking-consumer watches without TG_TOKEN: %v\n%s", err, out)
	}
}
