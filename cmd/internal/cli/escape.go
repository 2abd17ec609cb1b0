package cli

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape renders raw bytes (a dead letter's key or value, anything received from outside) safe
// for a terminal or a log line: printable text as it is (Korean included), a backslash as \\,
// \n \r \t as such, other control and format characters (C0, DEL, C1, bidi overrides, zero-width)
// as \u00XX or \uXXXX, and every byte of invalid UTF-8 as \xNN. The result is valid UTF-8 without
// control characters, and tells apart every input. When width > 0 and the result is longer than
// width runes it is cut and ends with "…" plus how many bytes of input were left out.
func Escape(b []byte, width int) string {
	var out strings.Builder
	runes := 0
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		var piece string
		switch {
		case r == utf8.RuneError && size <= 1:
			piece = fmt.Sprintf(`\x%02x`, b[i])
		case r == '\\':
			piece = `\\`
		case r == '\n':
			piece = `\n`
		case r == '\r':
			piece = `\r`
		case r == '\t':
			piece = `\t`
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError:
			if r > 0xffff {
				piece = fmt.Sprintf(`\U%08x`, r)
			} else {
				piece = fmt.Sprintf(`\u%04x`, r)
			}
		default:
			piece = string(r)
		}
		n := utf8.RuneCountInString(piece)
		if width > 0 && runes+n > width {
			fmt.Fprintf(&out, "…(+%d bytes)", len(b)-i)
			return out.String()
		}
		out.WriteString(piece)
		runes += n
		i += size
	}
	return out.String()
}
