package site

import "strings"

// deriveList derives the selector of the element that holds the rows from the row selector: each
// comma-separated alternative without its last compound selector ("table.tee-list tr.tee-row" →
// "table.tee-list", "#resList > tbody > tr" → "#resList > tbody"). It fails for an alternative
// of one compound ("tr.slot") or whose last combinator is a sibling one (+, ~): the holder is not
// named there.
func deriveList(row string) (string, bool) {
	var out []string
	for _, alt := range splitTop(row, ',') {
		alt = strings.TrimSpace(alt)
		from, to := lastCombinator(alt)
		if from < 0 || strings.ContainsAny(alt[from:to], "+~") {
			return "", false
		}
		head := strings.TrimSpace(alt[:from])
		if head == "" {
			return "", false
		}
		out = append(out, head)
	}
	if len(out) == 0 || checkSelector(strings.Join(out, ", ")) != nil {
		return "", false
	}
	return strings.Join(out, ", "), true
}

// scanTop calls fn for every byte of s with whether it is at the top level: outside brackets,
// parentheses, quotes and escapes.
func scanTop(s string, fn func(i int, c byte, top bool)) {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			fn(i, c, false)
			if i+1 < len(s) {
				i++
				fn(i, s[i], false)
			}
			continue
		case quote != 0:
			if c == quote {
				quote = 0
			}
			fn(i, c, false)
			continue
		case c == '"' || c == '\'':
			quote = c
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		}
		fn(i, c, depth == 0 && quote == 0)
	}
}

// splitTop splits s at sep outside brackets, parentheses and quotes.
func splitTop(s string, sep byte) []string {
	var out []string
	start := 0
	scanTop(s, func(i int, c byte, top bool) {
		if top && c == sep {
			out = append(out, s[start:i])
			start = i + 1
		}
	})
	return append(out, s[start:])
}

// lastCombinator is where the last top-level combinator (spaces, >, +, ~) of one selector
// alternative starts and ends, or -1, -1 when it has one compound only.
func lastCombinator(s string) (from, to int) {
	from, to = -1, -1
	inRun := false
	scanTop(s, func(i int, c byte, top bool) {
		isComb := top && strings.IndexByte(" \t\n>+~", c) >= 0
		switch {
		case isComb && !inRun:
			from, inRun = i, true
		case !isComb && inRun:
			to, inRun = i, false
		}
	})
	if inRun || to < 0 { // a trailing combinator, or none
		return -1, -1
	}
	return from, to
}
