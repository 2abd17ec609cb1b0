package cli

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in    string
		width int
		want  string
	}{
		{`{"course_name":"레이크 CC"}`, 0, `{"course_name":"레이크 CC"}`},
		{"a\nb\tc\rd", 0, `a\nb\tc\rd`},
		{"nul\x00 esc\x1b[31m del\x7f", 0, `nul\u0000 esc\u001b[31m del\u007f`},
		{"bad \xff\xfe utf8 \xe2\x82", 0, `bad \xff\xfe utf8 \xe2\x82`},
		{`back\slash \xff`, 0, `back\\slash \\xff`},
		{"bidi \u202e override \u200b zw", 0, `bidi \u202e override \u200b zw`},
		{"c1 \u0085", 0, `c1 \u0085`},
		{"0123456789abcdef", 10, "0123456789…(+6 bytes)"},
		{"\x00\x00\x00", 8, `\u0000…(+2 bytes)`},
		{"short", 10, "short"},
	} {
		if got := Escape([]byte(tc.in), tc.width); got != tc.want {
			t.Errorf("Escape(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}

func FuzzEscape(f *testing.F) {
	f.Add([]byte("레이크\x00\xff\u202e\\x"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := Escape(b, 0)
		if !utf8.ValidString(s) {
			t.Fatalf("Escape(%q) = %q: invalid UTF-8", b, s)
		}
		for _, r := range s {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				t.Fatalf("Escape(%q) = %q: contains %U", b, s, r)
			}
		}
		if w := Escape(b, 7); utf8.RuneCountInString(strings.SplitN(w, "…", 2)[0]) > 7 {
			t.Fatalf("Escape(%q, 7) = %q: longer than 7 before the cut", b, w)
		}
	})
}
