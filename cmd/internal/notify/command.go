package notify

// The chat's commands: the grammar of /watch and its siblings, parsed without any I/O (the
// Commander in chat.go runs them).

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// Verb is a chat command's name (without the slash).
type Verb string

// The chat's commands.
const (
	VerbWatch   Verb = "watch"
	VerbWatches Verb = "watches"
	VerbMute    Verb = "mute"
	VerbUnmute  Verb = "unmute"
	VerbRemove  Verb = "remove"
	VerbTest    Verb = "test"
	VerbHelp    Verb = "help"
)

// Command is one parsed chat command: its verb and its arguments (the text after it, trimmed).
// Watch is set for /watch, Name for /mute, /unmute and /remove.
type Command struct {
	Verb  Verb
	Args  string
	Watch *Watch // /watch: the conditions (no name, no channel yet)
	Name  string // /mute, /unmute, /remove
}

// ErrNotCommand is ParseCommand's error for a message that is no command of ours (ignored).
var ErrNotCommand = errors.New("not a command")

// maxCommandLen bounds a command's text: a watch is a line, not a page.
const maxCommandLen = 512

// ParseCommand reads a chat message: "/verb[@bot] args". A message that does not start with a
// known /verb is ErrNotCommand; a known verb with bad arguments is another error, whose text is
// the answer to give (it says what was not understood, in the language lang: ko or en).
func ParseCommand(text, lang string) (Command, error) {
	text = strings.TrimSpace(text)
	if !strings.HasPrefix(text, "/") || len(text) > maxCommandLen || !utf8.ValidString(text) {
		return Command{}, ErrNotCommand
	}
	head, args, _ := strings.Cut(text[1:], " ")
	head, _, _ = strings.Cut(head, "@") // "/watch@MyBot" in a group
	head, rest, hasNL := strings.Cut(head, "\n")
	if hasNL {
		args = rest + " " + args
	}
	c := Command{Verb: Verb(strings.ToLower(head)), Args: strings.Join(strings.Fields(args), " ")}
	switch c.Verb {
	case VerbWatches, VerbTest, VerbHelp:
		return c, nil
	case VerbMute, VerbUnmute, VerbRemove:
		if !nameRE.MatchString(c.Args) {
			return c, errors.New(say(lang, "이름을 하나 주세요: /"+string(c.Verb)+" 이름 (목록: /watches)",
				"give one name: /"+string(c.Verb)+" NAME (list: /watches)"))
		}
		c.Name = c.Args
		return c, nil
	case VerbWatch:
		w, err := ParseWatchSpec(c.Args, lang)
		if err != nil {
			return c, err
		}
		c.Watch = w
		return c, nil
	}
	return Command{}, ErrNotCommand
}

func say(lang, ko, en string) string {
	if lang == "en" {
		return en
	}
	return ko
}

var (
	windowRE = regexp.MustCompile(`^([0-9]{1,2}):([0-9]{2})[-~–]([0-9]{1,2}):([0-9]{2})$`)
	// weekday groups beside the single days of the watches file's weekday map.
	dayGroups = map[string][]time.Weekday{
		"주말": {time.Saturday, time.Sunday}, "weekend": {time.Saturday, time.Sunday},
		"평일":       {time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday},
		"weekdays": {time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday},
	}
	// priceWords may follow a price ("15만 이하") and say nothing more.
	priceWords = []string{"이하", "까지", "under", "max", "<="}
)

// ParseWatchSpec reads /watch's arguments, words in any order:
//
//   - weekdays, comma-separated: 토,일 or sat,sun (월..일, mon..sun, or 주말/weekend, 평일/weekdays);
//   - a tee-time window HH:MM-HH:MM (or H:MM, '~' for '-');
//   - a price cap in the forms the crawler reads (site.ParsePrice): 15만, 150,000원, 150000;
//   - anything else is the course: a case-insensitive substring of the course name (words joined
//     by a space; commas separate several courses).
//
// At least one condition is required. The watch has no name and no channel (the Commander sets them).
func ParseWatchSpec(args, lang string) (*Watch, error) {
	w := &Watch{}
	var course []string
	words := strings.Fields(args)
	if len(words) == 0 {
		return nil, errors.New(say(lang, "조건을 주세요. 예: /watch 토,일 05:00-08:00 15만 레이크 (/help)",
			"give conditions, e.g. /watch sat,sun 05:00-08:00 150000 lake (/help)"))
	}
	for _, word := range words {
		if days, ok := parseDays(word); ok {
			for _, d := range days {
				if !slices.Contains(w.Weekdays, d) {
					w.Weekdays = append(w.Weekdays, d)
				}
			}
			continue
		}
		if m := windowRE.FindStringSubmatch(word); m != nil {
			from, to, ok := window(m)
			if !ok {
				return nil, fmt.Errorf(say(lang, "시간 %q: HH:MM-HH:MM 이고 시작이 끝보다 늦지 않아야 합니다",
					"time %q: want HH:MM-HH:MM, the start not after the end"), word)
			}
			if w.TimeFrom != "" {
				return nil, errors.New(say(lang, "시간대는 하나만 주세요", "give one tee-time window"))
			}
			w.TimeFrom, w.TimeTo = from, to
			continue
		}
		if slices.Contains(priceWords, strings.ToLower(word)) && w.MaxPriceKRW != nil {
			continue
		}
		if strings.ContainsAny(word, "0123456789") {
			p, err := site.ParsePrice(word)
			if err != nil || p == nil {
				return nil, fmt.Errorf(say(lang, "가격 %q를 읽지 못했습니다 (예: 15만, 150,000원, 150000)",
					"price %q not understood (e.g. 15만, 150,000원, 150000)"), word)
			}
			if w.MaxPriceKRW != nil {
				return nil, errors.New(say(lang, "가격 상한은 하나만 주세요", "give one price cap"))
			}
			w.MaxPriceKRW = p
			continue
		}
		course = append(course, word)
	}
	if len(course) > 0 {
		for c := range strings.SplitSeq(strings.Join(course, " "), ",") {
			if c = strings.ToLower(strings.TrimSpace(c)); c != "" && !slices.Contains(w.Courses, c) {
				w.Courses = append(w.Courses, c)
			}
		}
	}
	slices.Sort(w.Weekdays)
	return w, nil
}

// parseDays reads a comma-separated list of weekdays (or weekday groups); ok false if any part
// is not one.
func parseDays(word string) ([]time.Weekday, bool) {
	var out []time.Weekday
	for part := range strings.SplitSeq(strings.ToLower(word), ",") {
		part = strings.TrimSuffix(strings.TrimSuffix(part, "요일"), ".")
		if g, ok := dayGroups[part]; ok {
			out = append(out, g...)
			continue
		}
		if d, ok := weekday[part]; ok {
			out = append(out, d)
			continue
		}
		if len(part) >= 3 && part[0] < utf8.RuneSelf {
			if d, ok := weekday[part[:3]]; ok && strings.HasPrefix(strings.ToLower(d.String()), part) {
				out = append(out, d)
				continue
			}
		}
		return nil, false
	}
	return out, len(out) > 0
}

// window normalises a tee-time window's match to "HH:MM" (ok false if out of range or reversed).
func window(m []string) (from, to string, ok bool) {
	var n [4]int
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	if n[0] > 23 || n[2] > 23 || n[1] > 59 || n[3] > 59 {
		return "", "", false
	}
	from, to = fmt.Sprintf("%02d:%02d", n[0], n[1]), fmt.Sprintf("%02d:%02d", n[2], n[3])
	return from, to, from <= to
}

var (
	dayKO = [7]string{"일", "월", "화", "수", "목", "금", "토"}
	dayEN = [7]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
)

// Describe says what a watch asks, in lang: "토·일 05:00–08:00, 150,000원 이하, 코스에 '레이크'".
func Describe(w *Watch, lang string) string {
	var parts []string
	when := ""
	if len(w.Weekdays) > 0 {
		days := slices.Clone(w.Weekdays)
		// Korean golfers read the weekend as 토·일: Monday first, Sunday last.
		slices.SortFunc(days, func(a, b time.Weekday) int { return (int(a)+6)%7 - (int(b)+6)%7 })
		names := make([]string, len(days))
		for i, d := range days {
			names[i] = say(lang, dayKO[d], dayEN[d])
		}
		when = strings.Join(names, "·")
	}
	if w.TimeFrom != "" || w.TimeTo != "" {
		when = strings.TrimSpace(when + " " + w.TimeFrom + "–" + w.TimeTo)
	}
	if when != "" {
		parts = append(parts, when)
	}
	if !w.DateFrom.IsZero() || !w.DateTo.IsZero() {
		d := func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.Format("2006-01-02")
		}
		parts = append(parts, d(w.DateFrom)+"~"+d(w.DateTo))
	}
	if w.NextDays > 0 {
		parts = append(parts, fmt.Sprintf(say(lang, "%d일 안", "within %d days"), w.NextDays))
	}
	if w.MaxPriceKRW != nil {
		parts = append(parts, fmt.Sprintf(say(lang, "%s원 이하", "up to %s KRW"), thousands(*w.MaxPriceKRW)))
	}
	if w.MinPlayers != nil {
		parts = append(parts, fmt.Sprintf(say(lang, "%d명 이상", "%d+ players"), *w.MinPlayers))
	}
	for _, c := range w.Courses {
		parts = append(parts, fmt.Sprintf(say(lang, "코스에 '%s'", "course has '%s'"), c))
	}
	for _, c := range w.CoursesExact {
		parts = append(parts, fmt.Sprintf(say(lang, "코스 = '%s'", "course is '%s'"), c))
	}
	if len(w.Sources) > 0 {
		parts = append(parts, say(lang, "사이트 ", "sites ")+strings.Join(w.Sources, "·"))
	}
	if len(parts) == 0 {
		return say(lang, "모든 티타임", "every tee time")
	}
	return strings.Join(parts, ", ")
}

// thousands writes n with comma separators: 150000 → "150,000".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// CommandHelp is /help's answer: the grammar with examples in Korean and English.
const CommandHelp = `명령 / commands
/watch 조건…  새 알림 / a new watch. 조건 (순서 무관 / any order):
  요일 / weekdays: 토,일 · 주말 · 평일 · sat,sun · weekend · weekdays
  시간 / tee time: 05:00-08:00
  가격 상한 / price cap: 15만 · 150,000원 · 150000
  그 밖의 말은 코스 이름의 일부 / any other word: part of the course name (쉼표로 여럿 / commas for several)
  예 / e.g.  /watch 토,일 05:00-08:00 15만 레이크
             /watch sat,sun 06:00-09:00 120000 pine
/watches        알림 목록 (파일·채팅) / list the watches (file and chat)
/mute 이름       알림 끄기 / mute a watch     /unmute 이름  다시 켜기 / unmute
/remove 이름     채팅에서 만든 알림 지우기 / remove a watch made in the chat
/test           시험 메시지 / a test message
/help           이 도움말 / this help`
