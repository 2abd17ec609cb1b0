package site

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // Asia/Seoul must resolve on machines without a zoneinfo database
)

// ErrBadRoundDate is the meaning of every PlayDate error: the round_date text could not be turned
// into exactly one real calendar date. The listing must be skipped (and counted), never guessed.
var ErrBadRoundDate = errors.New("bad round_date")

// The play_date window, relative to the crawl's calendar date in Asia/Seoul. Booking sites open tee
// times at most about ten months ahead and may keep showing the last week of past rounds, so a
// year-less date is placed in [crawl date - 7 days, crawl date + 335 days]. The window spans 343
// days, less than a year, so at most one year can put a month-day in it; the weekday, when shown,
// is then a cross-check that rejects a misread instead of choosing among years.
const (
	WindowBeforeDays = 7
	WindowAfterDays  = 335
)

// maxRoundDateLen bounds the input so that a page full of text pasted into a cell is rejected fast.
const maxRoundDateLen = 128

var (
	// 2026-12-05, 2026.12.05, 2026/12/05, 2026. 12. 5., 2026년 12월 5일; also 26.12.05 (see PlayDate).
	reFullDate = regexp.MustCompile(`^(\d{4}|\d{2})\s*(?:([-./])\s*(\d{1,2})\s*[-./]\s*(\d{1,2})\s*\.?|년\s*(\d{1,2})\s*월\s*(\d{1,2})\s*일)`)
	// 12/05, 12.05, 12-05, 12. 5., 12월 5일.
	reMonthDay = regexp.MustCompile(`^(\d{1,2})\s*(?:[-./]\s*(\d{1,2})\s*\.?|월\s*(\d{1,2})\s*일)`)
	// An optional weekday after the date: "(토)", "（토요일）", " Sat", " saturday.", "토".
	reWeekday = regexp.MustCompile(`^(?:[(（\[]\s*([^\s()（）\[\]]+)\s*[)）\]]|([^\s()（）\[\]]+))$`)
)

// weekdays maps every accepted weekday spelling (lower case) to its time.Weekday.
var weekdays = func() map[string]time.Weekday {
	m := map[string]time.Weekday{}
	ko := []string{"일", "월", "화", "수", "목", "금", "토"}
	en := [][]string{
		{"sun", "sunday"}, {"mon", "monday"}, {"tue", "tues", "tuesday"}, {"wed", "wednesday"},
		{"thu", "thur", "thurs", "thursday"}, {"fri", "friday"}, {"sat", "saturday"},
	}
	for d := time.Sunday; d <= time.Saturday; d++ {
		m[ko[d]] = d
		m[ko[d]+"요일"] = d
		for _, s := range en[d] {
			m[s] = d
			m[s+"."] = d
		}
	}
	return m
}()

// PlayDate turns a listing's round_date text into its play_date, "YYYY-MM-DD".
//
// Accepted forms, after CleanText (surrounding and inner white space, nbsp included, is folded):
//
//	12/05  12.05  12-05  12. 5.  12월 5일  12월5일      month and day, year inferred
//	2026-12-05  2026.12.05  2026/12/05  2026년 12월 5일  full date, taken as given
//	26.12.05  26년 12월 5일                              two-digit year: only inside the window
//
// each optionally followed by a weekday in Korean (토, 토요일) or English (Sat, Saturday, any
// case), in parentheses (ASCII, full-width or square) or after a space.
//
// A month-day gets the one year that puts it between WindowBeforeDays before and WindowAfterDays
// after the crawl's calendar date in Asia/Seoul (crawledAt is converted first, so a UTC crawl time
// that is already tomorrow in Seoul counts as tomorrow). A full four-digit-year date is taken as
// given, whatever the window. A two-digit year is read as 20YY and accepted only when that date
// lies in the window, because "26.12.05" could also be a day-month-year typo. Every form is checked
// to be a real date (no 02/30, no 02/29 outside leap years) and, when a weekday is shown, that the
// weekday matches. Anything else returns an error wrapping ErrBadRoundDate that quotes raw.
func PlayDate(raw string, crawledAt time.Time) (string, error) {
	d, err := playDate(raw, crawledAt)
	if err != nil {
		return "", fmt.Errorf("%w %q: %s", ErrBadRoundDate, truncate(raw, maxRoundDateLen), err.Error())
	}
	return d.Format(dateLayout), nil
}

const dateLayout = "2006-01-02"

// reason is an error whose text is only the reason; PlayDate adds the sentinel and the raw text.
type reason string

func (r reason) Error() string { return string(r) }

func playDate(raw string, crawledAt time.Time) (time.Time, error) {
	if len(raw) > maxRoundDateLen {
		return time.Time{}, reason("too long")
	}
	s := cleanForParse(raw)
	if s == "" {
		return time.Time{}, reason("empty")
	}
	p, ok := splitDate(s)
	if !ok {
		return time.Time{}, reason("no month and day")
	}
	wd, hasWD, err := parseWeekday(p.rest)
	if err != nil {
		return time.Time{}, err
	}
	if p.month < 1 || p.month > 12 {
		return time.Time{}, reason(fmt.Sprintf("month %d out of range", p.month))
	}
	if p.day < 1 || p.day > 31 {
		return time.Time{}, reason(fmt.Sprintf("day %d out of range", p.day))
	}
	w := windowAround(crawledAt)
	if p.yearDigits > 0 {
		return givenYear(p, wd, hasWD, w)
	}
	return inferYear(p.month, p.day, wd, hasWD, w)
}

// dateParts is what the date regexps read: a year (yearDigits 0: none shown), month and day, and
// the text after the date.
type dateParts struct {
	year, yearDigits, month, day int
	rest                         string
}

// splitDate reads a full date (reFullDate) or a month-day (reMonthDay) at the start of s.
func splitDate(s string) (dateParts, bool) {
	if m := reFullDate.FindStringSubmatch(s); m != nil {
		p := dateParts{yearDigits: len(m[1]), year: atoi(m[1]), rest: s[len(m[0]):]}
		if m[2] != "" {
			p.month, p.day = atoi(m[3]), atoi(m[4])
		} else {
			p.month, p.day = atoi(m[5]), atoi(m[6])
		}
		return p, true
	}
	if m := reMonthDay.FindStringSubmatch(s); m != nil {
		p := dateParts{rest: s[len(m[0]):]}
		if m[2] != "" {
			p.month, p.day = atoi(m[1]), atoi(m[2])
		} else {
			p.month, p.day = atoi(m[1]), atoi(m[3])
		}
		return p, true
	}
	return dateParts{}, false
}

// dateWindow is the play_date window around a crawl's calendar date in Asia/Seoul (crawlDay, at
// midnight UTC like realDate's dates): [lo, hi].
type dateWindow struct{ crawlDay, lo, hi time.Time }

func windowAround(crawledAt time.Time) dateWindow {
	c := crawledAt.In(Seoul())
	day := time.Date(c.Year(), c.Month(), c.Day(), 0, 0, 0, 0, time.UTC)
	return dateWindow{crawlDay: day, lo: day.AddDate(0, 0, -WindowBeforeDays), hi: day.AddDate(0, 0, WindowAfterDays)}
}

func (w dateWindow) contains(d time.Time) bool { return !d.Before(w.lo) && !d.After(w.hi) }

func (w dateWindow) String() string {
	return fmt.Sprintf("[%s, %s]", w.lo.Format(dateLayout), w.hi.Format(dateLayout))
}

// givenYear checks a date shown with its year: real, its weekday (when shown) right and, for a
// two-digit year (20YY), inside the window.
func givenYear(p dateParts, wd time.Weekday, hasWD bool, w dateWindow) (time.Time, error) {
	year := p.year
	if p.yearDigits == 2 {
		year += 2000
	}
	d, ok := realDate(year, p.month, p.day)
	if !ok {
		return time.Time{}, reason(fmt.Sprintf("%04d-%02d-%02d is not a real date", year, p.month, p.day))
	}
	if hasWD && d.Weekday() != wd {
		return time.Time{}, reason(fmt.Sprintf("%s is a %s, not a %s", d.Format(dateLayout), d.Weekday(), wd))
	}
	if p.yearDigits == 2 && !w.contains(d) {
		return time.Time{}, reason(fmt.Sprintf("two-digit year date %s outside %s", d.Format(dateLayout), w))
	}
	return d, nil
}

// inferYear gives a month-day the one year that puts it in the window with the shown weekday.
func inferYear(month, day int, wd time.Weekday, hasWD bool, w dateWindow) (time.Time, error) {
	var fits []time.Time
	var mismatch []string
	real := false
	for y := w.crawlDay.Year() - 1; y <= w.crawlDay.Year()+1; y++ {
		d, ok := realDate(y, month, day)
		if !ok {
			continue
		}
		real = true
		if !w.contains(d) {
			continue
		}
		if hasWD && d.Weekday() != wd {
			mismatch = append(mismatch, fmt.Sprintf("%s is a %s", d.Format(dateLayout), d.Weekday()))
			continue
		}
		fits = append(fits, d)
	}
	switch {
	case len(fits) == 1:
		return fits[0], nil
	case len(fits) > 1: // impossible while the window is shorter than a year; kept as a guard
		return time.Time{}, reason(fmt.Sprintf("ambiguous: %d years fit", len(fits)))
	case len(mismatch) > 0:
		return time.Time{}, reason(fmt.Sprintf("weekday %s does not match: %s", wd, strings.Join(mismatch, ", ")))
	case !real:
		return time.Time{}, reason(fmt.Sprintf("%02d-%02d is not a real date", month, day))
	default:
		return time.Time{}, reason(fmt.Sprintf("no year puts %02d-%02d within %s", month, day, w))
	}
}

// parseWeekday reads what follows the date: nothing, or one weekday.
func parseWeekday(rest string) (time.Weekday, bool, error) {
	rest = strings.TrimSpace(rest)
	if rest == "" {
		return 0, false, nil
	}
	m := reWeekday.FindStringSubmatch(rest)
	if m == nil {
		return 0, false, reason(fmt.Sprintf("unexpected text %q after the date", truncate(rest, 32)))
	}
	w := m[1] + m[2]
	wd, ok := weekdays[strings.ToLower(w)]
	if !ok {
		return 0, false, reason(fmt.Sprintf("unknown weekday %q", truncate(w, 32)))
	}
	return wd, true, nil
}

// realDate returns the date y-m-d at midnight UTC, and false when it does not exist (02-30).
func realDate(y, m, d int) (time.Time, bool) {
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	return t, t.Year() == y && int(t.Month()) == m && t.Day() == d
}

// atoi converts a 1-4 digit string matched by the regexps above; it cannot fail or overflow.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
