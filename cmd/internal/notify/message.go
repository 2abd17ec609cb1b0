package notify

import (
	"github.com/google/uuid"

	"fmt"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/textfmt"
)

// wording is one language's words of a message. The comments name the arguments of each fmt
// format; match names them by index, so that each language orders them as it needs.
type wording struct {
	header           string // watch, number of matches
	weekdays         [7]string
	price, was       string // the price, thousands-separated (was: the previous one)
	noPrice          string
	players          string // number of players
	noPlayers        string
	opened, changed  string
	match            string // course, play date, weekday, tee time, price, players, opened/changed, how long ago
	seconds, minutes string // how long ago: seconds; minutes
	hoursMinutes     string // how long ago: hours, minutes
	// open is the line of a backlog match (already open when the watch asked): course, play
	// date, weekday, tee time, price, players, how long it has been open (openDays,
	// openHours, openMinutes: a number).
	open                             string
	openDays, openHours, openMinutes string
}

var (
	english = &wording{
		header:   "⛳ Tee-time alert: %s (%d)\n",
		weekdays: [...]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"},
		price:    "₩%s", was: " (was ₩%s)", noPrice: "price n/a",
		players: "%d players", noPlayers: "players n/a",
		opened: "opened", changed: "changed",
		match:   "%[1]s · %[2]s (%[3]s) %[4]s · %[5]s · %[6]s · %[7]s %[8]s ago",
		seconds: "%ds", minutes: "%d min", hoursMinutes: "%dh %dmin",
		open:     "%[1]s · %[2]s (%[3]s) %[4]s · %[5]s · %[6]s · open for %[7]s",
		openDays: "%d days", openHours: "%dh", openMinutes: "%d min",
	}
	korean = &wording{
		header:   "⛳ 티타임 알림: %s (%d건)\n",
		weekdays: [...]string{"일", "월", "화", "수", "목", "금", "토"},
		price:    "%s원", was: " (기존 %s원)", noPrice: "가격 미정",
		players: "%d명", noPlayers: "인원 미정",
		opened: "오픈", changed: "변경",
		match:   "%[1]s · %[2]s (%[3]s) %[4]s · %[5]s · %[6]s · %[8]s 전 %[7]s",
		seconds: "%d초", minutes: "%d분", hoursMinutes: "%d시간 %d분",
		open:     "%[1]s · %[2]s (%[3]s) %[4]s · %[5]s · %[6]s · 열려 있음 · %[7]s",
		openDays: "%d일째", openHours: "%d시간째", openMinutes: "%d분째",
	}
)

// wordingOf is the wording of lang: "en" is English, anything else Korean.
func wordingOf(lang string) *wording {
	if lang == "en" {
		return english
	}
	return korean
}

// Text is the message of one watch's matches from one crawl, in lang ("ko" or "en"): per match
// the course and part, play date with weekday, tee time, price, players, and how long ago it
// opened (or changed), relative to now; a backlog match (backlog[i], when backlog is not nil: a
// listing open before the watch asked) worded as already open ("open for N days") since its
// first-seen time. It is the generic webhook's text: not escaped, not bounded.
func Text(lang, watch string, evs []*events.Event, backlog []bool, now time.Time) string {
	return layout{w: wordingOf(lang), escape: plain}.text(watch, evs, backlog, now, 0, 0)
}

// layout is how one channel writes a message: its wording, the escaping of its markup and its
// limit on a message's length (0: none). Length is counted in UTF-16 code units, which is what
// Telegram counts and never less than the characters Discord and Slack count.
type layout struct {
	w      *wording
	escape func(string) string
	limit  int
}

func plain(s string) string { return s }

// longestAgo is the "how long ago" a length is measured with when a group is split: the text of a
// match grows with the time until its send (a claim older than the max age is skipped, not sent),
// and a split decided once must fit at every later attempt. longestOpen is the same for a backlog
// line ("open for N days").
const (
	longestAgo  = 9999*time.Hour + 59*time.Minute
	longestOpen = 9999 * 24 * time.Hour
)

// textLen is the length of s as the channels count it (UTF-16 code units).
func textLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// header is a message's first line: the watch, its number of matches n and, for a group split in
// several messages, "(part/parts)".
func (l layout) header(watch string, n, part, parts int) string {
	h := fmt.Sprintf(l.w.header, watch, n)
	if parts > 1 {
		h = strings.TrimSuffix(h, "\n") + fmt.Sprintf(" (%d/%d)\n", part, parts)
	}
	return l.escape(h)
}

// lineBudget is the longest a match's line may be (escaped), so that one line with the longest
// header fits the limit; 0: no limit.
func (l layout) lineBudget(watch string) int {
	if l.limit == 0 {
		return 0
	}
	return l.limit - textLen(l.header(watch, MaxEventsPerMessage, 99, 99)) - textLen("• ")
}

// line is e's line, escaped; longer than budget (when set) it is shortened by cutting the course
// and part (with "…"), so that tee time, date and price always stay.
func (l layout) line(e *events.Event, open bool, now time.Time, budget int) string {
	course := courseOf(e)
	full := l.escape(l.w.line(e, course, open, now))
	if budget <= 0 || textLen(full) <= budget {
		return full
	}
	rs := []rune(course)
	lo, hi := 0, len(rs) // the longest prefix of the course that fits: binary search
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if textLen(l.escape(l.w.line(e, string(rs[:mid])+"…", open, now))) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return l.escape(l.w.line(e, string(rs[:lo])+"…", open, now))
}

// text is the message of evs, part part of parts (0 and 1: not split); open[i] (when open is
// not nil) says evs[i] is a backlog match, worded as already open.
func (l layout) text(watch string, evs []*events.Event, open []bool, now time.Time, part, parts int) string {
	budget := l.lineBudget(watch)
	var b strings.Builder
	b.WriteString(l.header(watch, len(evs), part, parts))
	for i, e := range evs {
		b.WriteString("• ")
		b.WriteString(l.line(e, i < len(open) && open[i], now, budget))
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

// split cuts the matches of one new group (in claim order) into messages: the sizes of
// consecutive parts, each at most MaxEventsPerMessage lines and, with a limit, at most the limit
// long whenever it is sent (measured with longestAgo, a shortened line at its budget). Lines are
// never cut: a message holds whole lines.
func (l layout) split(watch string, evs []*events.Event) []int {
	var sizes []int
	if l.limit == 0 {
		for n := len(evs); n > 0; n -= MaxEventsPerMessage {
			sizes = append(sizes, min(n, MaxEventsPerMessage))
		}
		return sizes
	}
	budget := l.lineBudget(watch)
	lens := make([]int, len(evs)) // each line with its bullet and newline
	total := 0
	for i, e := range evs {
		// At its longest the line is its full text at longestAgo (or, for a backlog match,
		// longestOpen: the split does not know which it is); one shortened at send time is at
		// most the budget.
		n := max(textLen(l.escape(l.w.line(e, courseOf(e), false, e.OccurredAt.Add(longestAgo)))),
			textLen(l.escape(l.w.line(e, courseOf(e), true, e.OccurredAt.Add(longestOpen)))))
		n = min(n, budget)
		lens[i] = n + textLen("• ") + 1
		total += lens[i]
	}
	if len(evs) <= MaxEventsPerMessage && textLen(l.header(watch, len(evs), 0, 0))+total-1 <= l.limit {
		return []int{len(evs)}
	}
	head := textLen(l.header(watch, MaxEventsPerMessage, 99, 99))
	size, n := head, 0
	for _, ln := range lens {
		if n > 0 && (n == MaxEventsPerMessage || size+ln-1 > l.limit) {
			sizes = append(sizes, n)
			size, n = head, 0
		}
		size += ln
		n++
	}
	if n > 0 {
		sizes = append(sizes, n)
	}
	return sizes
}

// courseOf is e's course and part as a line shows them.
func courseOf(e *events.Event) string {
	if e.CoursePart != "" {
		return e.CourseName + " (" + e.CoursePart + ")"
	}
	return e.CourseName
}

// line is e's line with course as its course (and part); open: a backlog match, worded as
// already open for as long as since its first-seen time (its occurred_at).
func (w *wording) line(e *events.Event, course string, open bool, now time.Time) string {
	wd := ""
	if d, err := time.Parse(events.DateLayout, e.PlayDate); err == nil {
		wd = w.weekdays[d.Weekday()]
	}
	ago := now.Sub(e.OccurredAt).Round(time.Second)
	if ago < 0 {
		ago = 0
	}
	price := w.noPrice
	if e.PriceKRW != nil {
		price = fmt.Sprintf(w.price, textfmt.Thousands(*e.PriceKRW))
		if e.Previous != nil && e.Previous.PriceKRW != nil && *e.Previous.PriceKRW != *e.PriceKRW {
			price += fmt.Sprintf(w.was, textfmt.Thousands(*e.Previous.PriceKRW))
		}
	}
	players := w.noPlayers
	if e.Players != nil {
		players = fmt.Sprintf(w.players, *e.Players)
	}
	if open {
		return fmt.Sprintf(w.open, course, e.PlayDate, wd, e.TeeTime, price, players, w.openFor(ago))
	}
	verb := w.opened
	if e.EventType == events.ListingChanged {
		verb = w.changed
	}
	return fmt.Sprintf(w.match, course, e.PlayDate, wd, e.TeeTime, price, players, verb, w.ago(ago))
}

// openFor is how long a backlog match has been open: days, else hours, else minutes.
func (w *wording) openFor(d time.Duration) string {
	switch {
	case d >= 24*time.Hour:
		return fmt.Sprintf(w.openDays, int(d/(24*time.Hour)))
	case d >= time.Hour:
		return fmt.Sprintf(w.openHours, int(d.Hours()))
	default:
		return fmt.Sprintf(w.openMinutes, int(d.Minutes()))
	}
}

func (w *wording) ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf(w.seconds, int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf(w.minutes, int(d.Minutes()))
	default:
		return fmt.Sprintf(w.hoursMinutes, int(d.Hours()), int(d.Minutes())%60)
	}
}

// TestMessage is the message `alerts test` (and a chat's /test) sends on the channel: a fresh
// key, no matches, a text in the channel's language saying what it is.
func (ch *Channel) TestMessage(now time.Time) Message {
	text := "golf-crawler 테스트 메시지: 채널 " + ch.Name + "에 알림이 이렇게 옵니다. (" + now.Format(time.RFC3339) + ")"
	if ch.Language == "en" {
		text = "golf-crawler test message: alerts on channel " + ch.Name + " arrive here. (" + now.Format(time.RFC3339) + ")"
	}
	return Message{Key: uuid.New(), Watch: "test", CrawlID: "test", Now: now, Text: text}
}

// SplitLines puts lines (a command's answer) in as few messages as the channel's limit allows: see
// splitLines.
func (ch *Channel) SplitLines(lines []string, title string) []string {
	return ch.layout().splitLines(lines, title)
}

// splitLines puts lines in as few messages as the layout's limit allows (one, as they are, when
// they fit); split, each message starts with a header line of title (a format of the number of
// lines) and "(part/parts)", and a line is never cut across two (one line alone over the limit
// is shortened with "…").
func (l layout) splitLines(lines []string, title string) []string {
	whole := strings.Join(lines, "\n")
	if l.limit == 0 || textLen(whole) <= l.limit {
		return []string{whole}
	}
	header := func(part, parts int) string {
		return fmt.Sprintf(title, len(lines)) + fmt.Sprintf(" (%d/%d)", part, parts)
	}
	budget := l.limit - textLen(header(99, 99)) - 1 // the header and its newline at their longest
	var groups [][]string
	size := 0
	for _, ln := range lines {
		if textLen(ln) > budget {
			ln = shorten(ln, budget)
		}
		if n := len(groups); n == 0 || size+1+textLen(ln) > budget {
			groups, size = append(groups, nil), -1
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], ln)
		size += 1 + textLen(ln)
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = header(i+1, len(groups)) + "\n" + strings.Join(g, "\n")
	}
	return out
}

// shorten cuts s to at most n (UTF-16 units) with "…" at its end.
func shorten(s string, n int) string {
	rs := []rune(s)
	for len(rs) > 0 && textLen(string(rs))+1 > n {
		rs = rs[:len(rs)-1]
	}
	return string(rs) + "…"
}
