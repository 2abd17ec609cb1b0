package notify

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

const goodWatches = `
channels:
  hook:
    type: webhook
    url: http://127.0.0.1:1/alerts
  tg:
    type: telegram
    token_env: TG_TOKEN
    chat_id: "-1001"
    language: en
watches:
  - name: weekend-morning
    sources: [sim]
    courses: [lake]
    courses_exact: ["Pine Valley"]
    play_dates: {from: 2026-12-01, to: 2026-12-31}
    weekdays: [sat, 일]
    tee_time: {from: "06:00", to: "09:00"}
    max_price_krw: 150000
    min_players: 4
    channels: [hook, tg]
  - name: anything-soon
    next_days: 7
    channels: [hook]
`

func TestParseGoodFile(t *testing.T) {
	c, err := Parse([]byte(goodWatches), env(map[string]string{"TG_TOKEN": "123:secret"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Watches) != 2 || len(c.Channels) != 2 {
		t.Fatalf("got %d watches, %d channels", len(c.Watches), len(c.Channels))
	}
	w := c.Watches[0]
	if len(w.Weekdays) != 2 || w.Weekdays[0] != time.Saturday || w.Weekdays[1] != time.Sunday {
		t.Errorf("weekdays = %v", w.Weekdays)
	}
	if tg := c.Channels["tg"]; tg.Token != "123:secret" || tg.MinInterval != time.Second || tg.Language != "en" {
		t.Errorf("telegram channel = %+v", tg)
	}
	if s := c.Secrets(); len(s) != 1 || s[0] != "123:secret" {
		t.Errorf("secrets = %v", s)
	}
}

func TestParseErrorsHaveLines(t *testing.T) {
	cases := []struct {
		name, file string
		want       []string
	}{
		{"unknown field", "channels:\n  h:\n    type: webhook\n    url: http://x\nwatches:\n  - name: a\n    channels: [h]\n    max_prise_krw: 3\n",
			[]string{`line 8: unknown field "max_prise_krw"`}},
		{"wrong type", "channels:\n  h:\n    type: webhook\n    url: http://x\nwatches:\n  - name: a\n    channels: [h]\n    max_price_krw: cheap\n",
			[]string{"line 8: cannot unmarshal"}},
		{"unknown channel", "channels:\n  h:\n    type: webhook\n    url: http://x\nwatches:\n  - name: a\n    channels: [nope]\n",
			[]string{`line 7: watch "a": unknown channel "nope"`}},
		{"bad date, time, weekday", "channels:\n  h:\n    type: webhook\n    url: http://x\nwatches:\n  - name: a\n    channels: [h]\n    play_dates: {from: 2026-13-01}\n    tee_time: {from: '6:00'}\n    weekdays: [funday]\n",
			[]string{"line 8: ", "play_dates.from", "line 9: ", "tee_time.from", "line 10: ", `weekday "funday"`}},
		{"missing env", "channels:\n  s:\n    type: slack\n    url_env: SLACK_URL\nwatches:\n  - name: a\n    channels: [s]\n",
			[]string{"line 4: ", "SLACK_URL is not set"}},
		{"secret URL in file", "channels:\n  s:\n    type: discord\n    url: https://discord.com/api/webhooks/1/abc\nwatches:\n  - name: a\n    channels: [s]\n",
			[]string{"line 4: ", "url_env"}},
		{"bad type", "channels:\n  s:\n    type: pager\nwatches:\n  - name: a\n    channels: [s]\n",
			[]string{`line 3: channel "s": type "pager"`}},
		{"duplicate watch and both date forms", "channels:\n  h:\n    type: webhook\n    url: http://x\nwatches:\n  - name: a\n    channels: [h]\n  - name: a\n    channels: [h]\n    next_days: 3\n    play_dates: {to: 2026-01-01}\n",
			[]string{`line 8: watch "a" is defined twice`, "line 10: ", "not both"}},
		{"no watches", "channels:\n  h:\n    type: webhook\n    url: http://x\n", []string{"watches: must be a non-empty list"}},
		{"top-level typo", "channel: {}\nwatches: []\n", []string{`line 1: unknown key "channel"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.file), env(nil))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func ev(typ events.Type, course, date, tee string, price int64, players int) *events.Event {
	p, n := price, players
	return &events.Event{EventType: typ, Source: "sim", CourseName: course, CoursePart: "East", PlayDate: date,
		TeeTime: tee, Values: events.Values{PriceKRW: &p, Players: &n}, ListingKey: course + date + tee}
}

func changed(e *events.Event, prevPrice int64, prevPlayers int) *events.Event {
	c := *e
	c.EventType = events.ListingChanged
	c.Previous = &events.Previous{PriceKRW: &prevPrice, Players: &prevPlayers}
	return &c
}

func TestEntersWatch(t *testing.T) {
	c, err := Parse([]byte(goodWatches), env(map[string]string{"TG_TOKEN": "x"}))
	if err != nil {
		t.Fatal(err)
	}
	w, soon := c.Watches[0], c.Watches[1]
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	// 2026-12-05 is a Saturday, 2026-12-06 a Sunday, 2026-12-07 a Monday.
	base := ev(events.ListingOpened, "Lakeside CC", "2026-12-05", "07:30", 120000, 4)
	with := func(f func(e *events.Event)) *events.Event { c := *base; f(&c); return &c }
	cases := []struct {
		name  string
		watch *Watch
		e     *events.Event
		want  bool
	}{
		{"opened inside", w, base, true},
		{"course substring, any case", w, with(func(e *events.Event) { e.CourseName = "GREEN LAKE" }), true},
		{"course exact", w, with(func(e *events.Event) { e.CourseName = "Pine Valley" }), true},
		{"course exact is not a substring", w, with(func(e *events.Event) { e.CourseName = "Pine Valley North" }), false},
		{"other source", w, with(func(e *events.Event) { e.Source = "other" }), false},
		{"sunday ok", w, with(func(e *events.Event) { e.PlayDate = "2026-12-06" }), true},
		{"monday no", w, with(func(e *events.Event) { e.PlayDate = "2026-12-07" }), false},
		{"before date range", w, with(func(e *events.Event) { e.PlayDate = "2026-11-28" }), false},
		{"tee time at window start", w, with(func(e *events.Event) { e.TeeTime = "06:00" }), true},
		{"tee time at window end", w, with(func(e *events.Event) { e.TeeTime = "09:00" }), true},
		{"tee time after window", w, with(func(e *events.Event) { e.TeeTime = "09:01" }), false},
		{"price at max", w, with(func(e *events.Event) { p := int64(150000); e.PriceKRW = &p }), true},
		{"price over max", w, with(func(e *events.Event) { p := int64(150001); e.PriceKRW = &p }), false},
		{"price unknown", w, with(func(e *events.Event) { e.PriceKRW = nil }), false},
		{"too few players", w, with(func(e *events.Event) { n := 3; e.Players = &n }), false},
		{"closed never fires", w, with(func(e *events.Event) { e.EventType = events.ListingClosed }), false},
		{"price drops under max: enters", w, changed(base, 180000, 4), true},
		{"price drops but stays inside: no", w, changed(base, 140000, 4), false},
		{"players rise to min: enters", w, changed(base, 120000, 2), true},
		{"price rises out: no", w, changed(with(func(e *events.Event) { p := int64(200000); e.PriceKRW = &p }), 120000, 4), false},
		{"changed without previous, inside", w, with(func(e *events.Event) { e.EventType = events.ListingChanged }), true},
		{"next 7 days: today", soon, with(func(e *events.Event) { e.PlayDate = "2026-11-30" }), true},
		{"next 7 days: day 7", soon, with(func(e *events.Event) { e.PlayDate = "2026-12-06" }), true},
		{"next 7 days: day 8", soon, with(func(e *events.Event) { e.PlayDate = "2026-12-07" }), false},
		{"next 7 days: yesterday", soon, with(func(e *events.Event) { e.PlayDate = "2026-11-29" }), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.watch.Enters(tc.e, now); got != tc.want {
				t.Errorf("Enters = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTextSaysEverything(t *testing.T) {
	e := ev(events.ListingOpened, "레이크사이드", "2026-12-05", "07:30", 150000, 4)
	e.OccurredAt = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	now := e.OccurredAt.Add(3 * time.Minute)
	ko := Text("ko", "w", []*events.Event{e}, nil, now)
	for _, want := range []string{"레이크사이드 (East)", "2026-12-05 (토)", "07:30", "150,000원", "4명", "3분 전 오픈"} {
		if !strings.Contains(ko, want) {
			t.Errorf("ko text %q lacks %q", ko, want)
		}
	}
	en := Text("en", "w", []*events.Event{changed(e, 180000, 4)}, nil, now)
	for _, want := range []string{"2026-12-05 (Sat)", "₩150,000 (was ₩180,000)", "4 players", "changed 3 min ago"} {
		if !strings.Contains(en, want) {
			t.Errorf("en text %q lacks %q", en, want)
		}
	}
}

// TestDemoWatchesFileIsValid keeps compose/dev/watches.yaml (make demo) loadable.
func TestDemoWatchesFileIsValid(t *testing.T) {
	c, err := LoadFile("../../../compose/dev/watches.yaml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Watches) == 0 || c.Channels["demo-hook"] == nil {
		t.Errorf("demo watches: %+v", c)
	}
}

// TestEnabledFalseMutesAWatch: enabled: false mutes a watch (it enters nothing); absent or true
// does not; a non-boolean is an error with its line.
func TestEnabledFalseMutesAWatch(t *testing.T) {
	c, err := Parse([]byte("channels:\n  a: {type: webhook, url: http://x/}\nwatches:\n"+
		"  - {name: on, channels: [a]}\n  - {name: also-on, enabled: true, channels: [a]}\n  - {name: off, enabled: false, channels: [a]}\n"),
		env(nil))
	if err != nil {
		t.Fatal(err)
	}
	var muted []bool
	for _, w := range c.Watches {
		muted = append(muted, w.Muted)
	}
	if fmt.Sprint(muted) != "[false false true]" {
		t.Errorf("muted = %v", muted)
	}
	e := ev(events.ListingOpened, "Lake", "2026-12-05", "07:00", 1, 4)
	if got := c.MatchAll(e, time.Now()); len(got) != 2 || got[0].Name != "on" || got[1].Name != "also-on" {
		t.Errorf("matched %d watches, want on and also-on", len(got))
	}
	_, err = Parse([]byte("channels:\n  a: {type: webhook, url: http://x/}\nwatches:\n  - name: w\n    enabled: maybe\n    channels: [a]\n"), env(nil))
	if err == nil || !strings.Contains(err.Error(), "line 5") {
		t.Errorf("enabled: maybe: %v, want an error on line 5", err)
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
	_, err := Parse([]byte(file), func(string) string { return "123456:fake-token" })
	if err == nil || !strings.Contains(err.Error(), `channels "a" and "b"`) || strings.Contains(err.Error(), "123456:fake-token") {
		t.Fatalf("err %v; want a refusal naming a and b, without the token", err)
	}
	if _, err := Parse([]byte(strings.Replace(file, `"2", commands: true`, `"2"`, 1)), func(string) string { return "123456:fake-token" }); err != nil {
		t.Fatalf("one command channel refused: %v", err)
	}
}
