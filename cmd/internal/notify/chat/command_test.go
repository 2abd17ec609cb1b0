package chat

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

func TestParseWatchCommand(t *testing.T) {
	cases := []struct {
		text, lang, want string
	}{
		{"/watch 토,일 05:00-08:00 15만 레이크", "ko", "토·일 05:00–08:00, 150,000원 이하, 코스에 '레이크'"},
		{"/watch sat,sun 05:00-08:00 150,000원 Lake", "en", "Sat·Sun 05:00–08:00, up to 150,000 KRW, course has 'lake'"},
		{"/watch@GolfBot 레이크 150000 일,토", "ko", "토·일, 150,000원 이하, 코스에 '레이크'"},
		{"/watch 주말 6:30~9:00", "ko", "토·일 06:30–09:00"},
		{"/watch 평일 15.5만 이하", "ko", "월·화·수·목·금, 155,000원 이하"},
		{"/watch saturday 레이크 사이드,파인", "ko", "토, 코스에 '레이크 사이드', 코스에 '파인'"},
		{"/watch 15만 5천원", "ko", "150,000원 이하"}, // "5천원" is a second price: refused below
		{"/WATCH 토요일", "ko", "토"},
	}
	for _, c := range cases {
		cmd, err := ParseCommand(c.text, c.lang)
		if c.text == "/watch 15만 5천원" {
			if err == nil {
				t.Errorf("%q: two prices accepted", c.text)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.text, err)
			continue
		}
		if cmd.Verb != VerbWatch || cmd.Watch == nil {
			t.Fatalf("%q: %+v", c.text, cmd)
		}
		if got := notify.Describe(cmd.Watch, c.lang); got != c.want {
			t.Errorf("%q: understood %q, want %q", c.text, got, c.want)
		}
	}
}

func TestParseCommandRefusals(t *testing.T) {
	bad := []string{
		"/watch", "/watch 08:00-05:00", "/watch 25:00-26:00", "/watch 15만 20만", "/watch 05:00-06:00 07:00-08:00",
		"/watch 88", "/mute", "/mute two words", "/remove ../x",
	}
	for _, text := range bad {
		if _, err := ParseCommand(text, "ko"); err == nil || errors.Is(err, ErrNotCommand) {
			t.Errorf("%q: err %v, want an answer saying what is wrong", text, err)
		}
	}
	for _, text := range []string{"hello", "", "/start", "/watchx 토", strings.Repeat("/watch 토 ", 100)} {
		if _, err := ParseCommand(text, "ko"); !errors.Is(err, ErrNotCommand) {
			t.Errorf("%q: err %v, want ErrNotCommand", text, err)
		}
	}
	for text, want := range map[string]Command{
		"/watches": {Verb: VerbWatches}, "/test": {Verb: VerbTest}, "/help": {Verb: VerbHelp},
		"/mute chat-1": {Verb: VerbMute, Args: "chat-1", Name: "chat-1"}, "/unmute@bot  chat-2 ": {Verb: VerbUnmute, Args: "chat-2", Name: "chat-2"},
		"/remove weekend-lake": {Verb: VerbRemove, Args: "weekend-lake", Name: "weekend-lake"},
	} {
		got, err := ParseCommand(text, "en")
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", text, got, err, want)
		}
	}
}

// FuzzParseCommand: any text parses or is refused without a panic, and a parsed watch is one
// Describe can say and whose window is ordered.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"/watch 토,일 05:00-08:00 15만 레이크", "/watch sat 1:00~2:00 150,000원", "/mute a", "/watch 주말,평일 ,, 0",
		"/watch 88CC 주말 토, 레이크", "/watch ,sun valley 이하 15만", "/watch o'neil 360도CC,2코스"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCommand(s, "ko")
		if err != nil || c.Watch == nil {
			return
		}
		if c.Watch.TimeFrom > c.Watch.TimeTo {
			t.Fatalf("%q: window %s-%s", s, c.Watch.TimeFrom, c.Watch.TimeTo)
		}
		if c.Watch.MaxPriceKRW != nil && *c.Watch.MaxPriceKRW < MinPriceCapKRW {
			t.Fatalf("%q: a price cap of %d", s, *c.Watch.MaxPriceKRW)
		}
		_ = notify.Describe(c.Watch, "en")
		// What is stored reads back as the same watch.
		back, err := ReadSpec(CanonicalSpec(c.Watch))
		if err != nil || !reflect.DeepEqual(back, c.Watch) {
			t.Fatalf("%q: stored as %q, read back as %+v, %v; want %+v", s, CanonicalSpec(c.Watch), back, err, c.Watch)
		}
	})
}

// TestWatchNumbersAndClubNames (review 4 F7): a bare number below 10,000 is no price (refused
// with a hint), from 10,000 it is one in won; a word of digits and letters is part of the
// course (88CC, 360도CC, 2코스); a cap below 10,000 in any form is refused.
func TestWatchNumbersAndClubNames(t *testing.T) {
	for args, want := range map[string]string{
		"88CC":           "코스에 '88cc'",
		"360도CC 주말":      "토·일, 코스에 '360도cc'",
		"88컨트리클럽 15만":    "150,000원 이하, 코스에 '88컨트리클럽'",
		"레이크 2코스":        "코스에 '레이크 2코스'",
		"코스2100":         "코스에 '코스2100'",
		"18홀 레이크":        "코스에 '18홀 레이크'",
		"10000 레이크":      "10,000원 이하, 코스에 '레이크'",
		"150000":         "150,000원 이하",
		"평일 88CC 12만 이하": "월·화·수·목·금, 120,000원 이하, 코스에 '88cc'",
	} {
		w, err := ParseWatchSpec(args, "ko")
		if err != nil {
			t.Errorf("%q: %v", args, err)
			continue
		}
		if got := notify.Describe(w, "ko"); got != want {
			t.Errorf("%q: understood %q, want %q", args, got, want)
		}
	}
	for args, hint := range map[string]string{
		"88 CC": "88CC", "36 홀": "15만", "레이크 9": "88CC", "1": "15만", "9,999 파인": "15만",
		"00:00-23:59 0원": "10,000", "5천원": "10,000",
	} {
		if w, err := ParseWatchSpec(args, "ko"); err == nil || !strings.Contains(err.Error(), hint) {
			t.Errorf("%q: %v, %v; want a refusal with the hint %q", args, w, err, hint)
		}
	}
}
