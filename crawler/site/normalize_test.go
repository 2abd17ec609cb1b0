package site

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

func pointerTo[T any](v T) *T { return &v }

// numberCase is a case of a parser of an optional number: want nil with ok means none shown.
type numberCase[N int | int64] struct {
	raw  string
	want *N
	ok   bool
}

// checkNumberParser runs parse, named name, over cases: a case not ok wants an error that is bad.
func checkNumberParser[N int | int64](t *testing.T, name string, parse func(string) (*N, error), bad error, cases []numberCase[N]) {
	t.Helper()
	for _, c := range cases {
		got, err := parse(c.raw)
		switch {
		case !c.ok:
			if err == nil || !errors.Is(err, bad) {
				t.Errorf("%s(%q) = %v, %v; want an error wrapping %q", name, c.raw, showPtr(got), err, bad)
			}
		case err != nil:
			t.Errorf("%s(%q): %v", name, c.raw, err)
		case (got == nil) != (c.want == nil) || (got != nil && *got != *c.want):
			t.Errorf("%s(%q) = %v, want %v", name, c.raw, showPtr(got), showPtr(c.want))
		}
	}
}

// fuzzNumberParser fuzzes parse, named name, from the raw texts of cases: an error is bad and
// comes with no number, a number lies in lo..hi.
func fuzzNumberParser[N int | int64](f *testing.F, name string, parse func(string) (*N, error), bad error, cases []numberCase[N], lo, hi N) {
	for _, c := range cases {
		f.Add(c.raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := parse(raw)
		if err != nil {
			if !errors.Is(err, bad) || got != nil {
				t.Fatalf("%s(%q) = %v, %v", name, raw, showPtr(got), err)
			}
			return
		}
		if got != nil && (*got < lo || *got > hi) {
			t.Fatalf("%s(%q) = %d, outside %d..%d", name, raw, *got, lo, hi)
		}
	})
}

var priceCases = []numberCase[int64]{ // want nil with ok: unknown
	{"150,000원", pointerTo[int64](150000), true},
	{"150000", pointerTo[int64](150000), true},
	{"₩150,000", pointerTo[int64](150000), true},
	{"￦150,000", pointerTo[int64](150000), true},
	{"150,000 KRW", pointerTo[int64](150000), true},
	{"KRW 150,000", pointerTo[int64](150000), true},
	{" 150,000 원 ", pointerTo[int64](150000), true},
	{"\u00a0150,000원\u00a0", pointerTo[int64](150000), true},
	{"1,250,000원", pointerTo[int64](1250000), true},
	{"0원", pointerTo[int64](0), true},
	{"15만원", pointerTo[int64](150000), true},
	{"15만", pointerTo[int64](150000), true},
	{"15만 5천원", pointerTo[int64](155000), true},
	{"15만5천", pointerTo[int64](155000), true},
	{"15.5만원", pointerTo[int64](155000), true},
	{"1만5,000원", pointerTo[int64](15000), true},
	{"1만 2500원", pointerTo[int64](12500), true},
	{"5천원", pointerTo[int64](5000), true},
	{"5천500원", pointerTo[int64](5500), true},
	{"", nil, true},
	{"-", nil, true},
	{" - ", nil, true},
	{"마감", nil, true},
	{"예약마감", nil, true},
	{"매진", nil, true},
	{"전화문의", nil, true},
	{"abc", nil, false},
	{"원", nil, false},
	{"150,00원", nil, false},
	{"1,50,000원", nil, false},
	{"150.000", nil, false},
	{"-150,000원", nil, false},
	{"150,000원~", nil, false},
	{"15만5,000,000", nil, false},
	{"5천5,000", nil, false},
	{"15.5만5천", nil, false},
	{"99,999,999,999", nil, false}, // above MaxPriceKRW
	{"999999999999999999999999", nil, false},
	{"150,000원 180,000원", nil, false},
	{strings.Repeat("1", 300), nil, false},
}

func TestParsePrice(t *testing.T) {
	t.Parallel()
	checkNumberParser(t, "ParsePrice", ParsePrice, ErrBadPrice, priceCases)
}

var playersCases = []numberCase[int]{
	{"4명", pointerTo(4), true},
	{"4인", pointerTo(4), true},
	{"4", pointerTo(4), true},
	{" 4 명 ", pointerTo(4), true},
	{"3~4명", pointerTo(4), true},
	{"3명~4명", pointerTo(4), true},
	{"2-4인", pointerTo(4), true},
	{"2～4인", pointerTo(4), true},
	{"1명", pointerTo(1), true},
	{"", nil, true},
	{"-", nil, true},
	{"마감", nil, true},
	{"0명", nil, false},
	{"101명", nil, false},
	{"4~3명", nil, false},
	{"네명", nil, false},
	{"4명 이상", nil, false},
	{"4.5", nil, false},
	{"-4", nil, false},
	{"1234", nil, false},
}

func TestParsePlayers(t *testing.T) {
	t.Parallel()
	checkNumberParser(t, "ParsePlayers", ParsePlayers, ErrBadPlayers, playersCases)
}

var teeTimeCases = []struct{ raw, want string }{ // want "" means an error
	{"07:30", "07:30"},
	{"7:30", "07:30"},
	{" 07:30\u00a0", "07:30"},
	{"07:30:00", "07:30"},
	{"00:05", "00:05"},
	{"23:59", "23:59"},
	{"07시 30분", "07:30"},
	{"7시30분", "07:30"},
	{"7시", "07:00"},
	{"7시 반", "07:30"},
	{"오전 7:30", "07:30"},
	{"오전7:30", "07:30"},
	{"오후 1:05", "13:05"},
	{"오후 12:30", "12:30"},
	{"오전 12:10", "00:10"},
	{"오전 0:10", "00:10"},
	{"오후 3시 20분", "15:20"},
	{"1:05 PM", "13:05"},
	{"7:30am", "07:30"},
	{"AM 7:30", "07:30"},
	{"", ""},
	{"-", ""},
	{"24:00", ""},
	{"07:60", ""},
	{"7:5", ""},
	{"0730", "07:30"}, // booking APIs' HHMM
	{"1405", "14:05"},
	{"2400", ""},
	{"0760", ""},
	{"730", ""},
	{"07300", ""},
	{"07:30:15", ""},
	{"오후 13:00", ""},
	{"오후 0:30", ""},
	{"오전 7:30 PM", ""},
	{"7시 61분", ""},
	{"07:30~08:00", ""},
	{"seven", ""},
}

func TestParseTeeTime(t *testing.T) {
	t.Parallel()
	for _, c := range teeTimeCases {
		got, err := ParseTeeTime(c.raw)
		if c.want == "" {
			if err == nil || !errors.Is(err, ErrBadTeeTime) {
				t.Errorf("ParseTeeTime(%q) = %q, %v; want an ErrBadTeeTime", c.raw, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("ParseTeeTime(%q) = %q, %v; want %q", c.raw, got, err, c.want)
		}
	}
}

var cleanTextCases = []struct{ in, want string }{
	{"", ""},
	{"  a  ", "a"},
	{"a\u00a0\u00a0b", "a b"},
	{"\t남서울\n  CC \r\n", "남서울 CC"},
	{"a\u3000b", "a b"},
	{"a\u200bb\ufeff", "ab"},
	{"a\u00adb", "ab"},
	{"a\x00b", "ab"},
	{"a\xffb", "a\ufffdb"},
	{"a &amp; b", "a &amp; b"},
	// Bidi and other format marks (invisible, they split one name into two listings), and NFD Hangul composed to NFC.
	{"레이크 CC\u200e", "레이크 CC"},
	{"\u200f레이크\u202a CC\u202c", "레이크 CC"},
	{"\u2066레이크 CC\u2069\u202e", "레이크 CC"},
	{"\u1105\u1166\u110b\u1175\u110f\u1173 CC", "레이크 CC"},
	{"\u1105\u200e\u1166 CC", "레 CC"},
	{"Cafe\u0301", "Caf\u00e9"},
}

func TestCleanText(t *testing.T) {
	t.Parallel()
	for _, c := range cleanTextCases {
		if got := CleanText(c.in); got != c.want {
			t.Errorf("CleanText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func showPtr[T any](p *T) any {
	if p == nil {
		return "nil"
	}
	return *p
}

func FuzzParsePrice(f *testing.F) {
	fuzzNumberParser(f, "ParsePrice", ParsePrice, ErrBadPrice, priceCases, 0, MaxPriceKRW)
}

func FuzzParsePlayers(f *testing.F) {
	fuzzNumberParser(f, "ParsePlayers", ParsePlayers, ErrBadPlayers, playersCases, 1, MaxPlayers)
}

func FuzzParseTeeTime(f *testing.F) {
	for _, c := range teeTimeCases {
		f.Add(c.raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := ParseTeeTime(raw)
		if err != nil {
			if !errors.Is(err, ErrBadTeeTime) || got != "" {
				t.Fatalf("ParseTeeTime(%q) = %q, %v", raw, got, err)
			}
			return
		}
		if tm, err := time.Parse("15:04", got); err != nil || tm.Format("15:04") != got {
			t.Fatalf("ParseTeeTime(%q) = %q, not HH:MM", raw, got)
		}
		if again, err := ParseTeeTime(got); err != nil || again != got {
			t.Fatalf("ParseTeeTime(%q) = %q, but ParseTeeTime(%q) = %q, %v", raw, got, got, again, err)
		}
	})
}

func FuzzCleanText(f *testing.F) {
	for _, c := range cleanTextCases {
		f.Add(c.in)
	}
	f.Add("\u202e\u0301\u1100\u200d\u1161\u11a8 \u00a0\ufeffx")
	f.Fuzz(func(t *testing.T, s string) {
		got := CleanText(s)
		if !utf8.ValidString(got) {
			t.Fatalf("CleanText(%q) = %q, invalid UTF-8", s, got)
		}
		if strings.TrimSpace(got) != got || strings.Contains(got, "  ") {
			t.Fatalf("CleanText(%q) = %q, untrimmed or unfolded", s, got)
		}
		if strings.Join(strings.Fields(got), " ") != got {
			t.Fatalf("CleanText(%q) = %q, white space other than single spaces", s, got)
		}
		if !norm.NFC.IsNormalString(got) {
			t.Fatalf("CleanText(%q) = %q, not NFC", s, got)
		}
		for _, r := range got {
			if unicode.Is(unicode.Cf, r) {
				t.Fatalf("CleanText(%q) = %q keeps the format mark %U", s, got, r)
			}
		}
		if again := CleanText(got); again != got {
			t.Fatalf("CleanText not idempotent: %q -> %q -> %q", s, got, again)
		}
	})
}
