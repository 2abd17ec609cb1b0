// Package textfmt holds the small text formats more than one package prints for people.
package textfmt

import (
	"strconv"
	"strings"
)

// Thousands formats n with comma separators, as Korean sites and messages show prices:
// 150000 -> "150,000", -1234 -> "-1,234".
func Thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
