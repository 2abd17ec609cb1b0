package chat

// The chat's commands: the grammar of /watch and its siblings, parsed without any I/O (the
// Commander in commander.go runs them), and the stored form of a chat watch.

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
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
	Watch *notify.Watch // /watch: the conditions (no name, no channel yet)
	Name  string        // /mute, /unmute, /remove
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

// nameRE is a watch's name (the watches file's rule).
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

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
//   - a price cap in the forms the crawler reads (site.ParsePrice): 15만, 150,000원, 150000; at
//     least MinPriceCapKRW (a bare number below it is refused with a hint: a club's number is
//     written joined to its name, 88CC, a price with its unit, 15만);
//   - anything else is the course: a case-insensitive substring of the course name (words joined
//     by a space; commas separate several courses), a word of digits and letters (88CC, 2코스)
//     included.
//
// At least one condition is required. The watch has no name and no channel (the Commander sets them).
func ParseWatchSpec(args, lang string) (*notify.Watch, error) {
	return parseSpec(args, lang, chatGrammar)
}

// MinPriceCapKRW is the lowest price cap /watch takes: below any green fee, a smaller one is a
// misread ("88 CC") and would never fire.
const MinPriceCapKRW = 10_000

// grammar is a version of /watch's words.
type grammar int

const (
	// chatGrammar is ParseWatchSpec's.
	chatGrammar grammar = iota
	// fdee6edGrammar is /watch's before review 4 (fdee6ed), which the specs stored then were
	// written in: every word with a digit is a price (a bare 88 is 88원, a cap of any size), and a
	// word of digits and letters is refused. Only UpgradeSpec reads it.
	fdee6edGrammar
)

func parseSpec(args, lang string, g grammar) (*notify.Watch, error) {
	w := &notify.Watch{}
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
			if (err != nil || p == nil) && g == chatGrammar && strings.ContainsFunc(word, unicode.IsLetter) {
				course = append(course, word) // 88CC, 2코스: a name
				continue
			}
			if err != nil || p == nil {
				return nil, fmt.Errorf(say(lang, "가격 %q를 읽지 못했습니다 (예: 15만, 150,000원, 150000)",
					"price %q not understood (e.g. 15만, 150,000원, 150000)"), word)
			}
			if g == chatGrammar && *p < MinPriceCapKRW {
				if bareNumberRE.MatchString(word) {
					return nil, fmt.Errorf(say(lang, "%q: 10,000보다 작은 숫자는 가격으로 읽지 않습니다. 골프장 이름이면 붙여 쓰고 (예: 88CC), 가격이면 원 단위로 써 주세요 (예: 15만, 150000)",
						"%q: a number below 10,000 is not read as a price: join a club's number to its name (e.g. 88CC), write a price in won (e.g. 15만, 150000)"), word)
				}
				return nil, fmt.Errorf(say(lang, "가격 상한 %q는 10,000원보다 낮아 알림이 오지 않습니다 (예: 15만)",
					"a price cap of %q is below 10,000 KRW: nothing would match (e.g. 15만)"), word)
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

// bareNumberRE is a number without a unit: 88, 9,999, 150000.
var bareNumberRE = regexp.MustCompile(`^[0-9][0-9,]*$`)

// A chat watch is stored in its canonical form: what the /watch answer prints in Korean
// (Describe), for example "토·일 05:00–08:00, 150,000원 이하, 코스에 '레이크'". It names every
// condition unambiguously whatever /watch's words become, so a stored watch keeps its meaning
// when the grammar changes (specs stored before review 4 are rewritten by UpgradeSpec).

// CanonicalSpec is w's stored form (its Korean description).
func CanonicalSpec(w *notify.Watch) string { return notify.Describe(w, "ko") }

// UpgradeSpec rewrites a spec stored before review 4 (fdee6ed: /watch's arguments as typed,
// read by the grammar of then) into the canonical form, so that the watch keeps the meaning it was
// made with: "88 CC" (then a cap of 88원 and the course cc) becomes "88원 이하, 코스에 'cc'".
func UpgradeSpec(old string) (string, error) {
	w, err := parseSpec(old, "en", fdee6edGrammar)
	if err != nil {
		return "", err
	}
	return CanonicalSpec(w), nil
}

// ReadSpec reads a chat watch's stored spec: its canonical form, else /watch's arguments (a spec
// given to the store as typed). It is the parse of notify.Config.WithChat.
func ReadSpec(spec string) (*notify.Watch, error) {
	if w, ok := parseCanonical(spec); ok {
		return w, nil
	}
	return ParseWatchSpec(spec, "en")
}

var canonicalWindowRE = regexp.MustCompile(`^([0-9]{2}:[0-9]{2})–([0-9]{2}:[0-9]{2})$`)

// parseCanonical reads a canonical spec (CanonicalSpec); ok false when spec is not one.
func parseCanonical(spec string) (*notify.Watch, bool) {
	w := &notify.Watch{}
	if spec == "모든 티타임" {
		return w, true
	}
	for _, part := range strings.Split(spec, ", ") {
		if c, ok := strings.CutPrefix(part, "코스에 '"); ok && strings.HasSuffix(c, "'") && len(c) > 1 {
			w.Courses = append(w.Courses, strings.TrimSuffix(c, "'"))
			continue
		}
		if p, ok := strings.CutSuffix(part, "원 이하"); ok {
			n, err := strconv.ParseInt(strings.ReplaceAll(p, ",", ""), 10, 64)
			if err != nil || n < 0 || w.MaxPriceKRW != nil {
				return nil, false
			}
			w.MaxPriceKRW = &n
			continue
		}
		for _, f := range strings.Fields(part) {
			if m := canonicalWindowRE.FindStringSubmatch(f); m != nil && w.TimeFrom == "" {
				w.TimeFrom, w.TimeTo = m[1], m[2]
				continue
			}
			for d := range strings.SplitSeq(f, "·") {
				wd, ok := notify.Weekday(d)
				if !ok || slices.Contains(w.Weekdays, wd) {
					return nil, false
				}
				w.Weekdays = append(w.Weekdays, wd)
			}
		}
	}
	slices.Sort(w.Weekdays)
	return w, CanonicalSpec(w) == spec // in Describe's order and spelling, nothing else
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
		d, ok := notify.Weekday(part)
		if !ok {
			return nil, false
		}
		out = append(out, d)
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

// commandHelp is /help's answer: the grammar with examples in Korean and English, and how many
// watches a chat may make (most).
func commandHelp(most int) string {
	return fmt.Sprintf(`명령 / commands
/watch 조건…  새 알림 / a new watch (이 채팅에 최대 %[1]d개 / at most %[1]d in this chat). 조건 (순서 무관 / any order):
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
/help           이 도움말 / this help`, most)
}
