package site

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
)

// seoulTime is a wall-clock time in Asia/Seoul.
func seoulTime(t testing.TB, s string) time.Time {
	t.Helper()
	tm, err := time.ParseInLocation("2006-01-02 15:04", s, Seoul())
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

type playDateCase struct {
	name    string
	raw     string
	crawled string // Asia/Seoul wall clock, or RFC 3339 with a zone
	want    string // "" means an error is expected
}

func (c playDateCase) crawledAt(t testing.TB) time.Time {
	t.Helper()
	if strings.Contains(c.crawled, "T") {
		tm, err := time.Parse(time.RFC3339, c.crawled)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	return seoulTime(t, c.crawled)
}

// The weekdays below were checked with time.Weekday: 2026-12-05 Sat, 2027-01-02 Sat,
// 2028-02-29 Tue, 2027-01-01 Fri, 2020-01-01 Wed; TestPlayDateWeekdaysInTable re-checks them.
var playDateCases = []playDateCase{
	// Every accepted form, crawled 2026-11-20 (a Friday) → 2026-12-05 (a Saturday).
	{"Slash", "12/05", "2026-11-20 09:00", "2026-12-05"},
	{"Dot", "12.05", "2026-11-20 09:00", "2026-12-05"},
	{"Dash", "12-05", "2026-11-20 09:00", "2026-12-05"},
	{"OneDigitDay", "12/5", "2026-11-20 09:00", "2026-12-05"},
	{"DotsWithSpaces", "12. 5.", "2026-11-20 09:00", "2026-12-05"},
	{"ParenKorean", "12/05(토)", "2026-11-20 09:00", "2026-12-05"},
	{"SpaceParenKorean", "12/05 (토)", "2026-11-20 09:00", "2026-12-05"},
	{"SpaceKorean", "12/05 토", "2026-11-20 09:00", "2026-12-05"},
	{"KoreanLongWeekday", "12.05(토요일)", "2026-11-20 09:00", "2026-12-05"},
	{"FullWidthParens", "12/05（토）", "2026-11-20 09:00", "2026-12-05"},
	{"SquareBrackets", "12/05[토]", "2026-11-20 09:00", "2026-12-05"},
	{"EnglishShort", "12/05 Sat", "2026-11-20 09:00", "2026-12-05"},
	{"EnglishUpperParen", "12/05 (SAT)", "2026-11-20 09:00", "2026-12-05"},
	{"EnglishLong", "12-05 saturday", "2026-11-20 09:00", "2026-12-05"},
	{"EnglishDot", "12/05(Sat.)", "2026-11-20 09:00", "2026-12-05"},
	{"KoreanMonthDay", "12월 5일", "2026-11-20 09:00", "2026-12-05"},
	{"KoreanMonthDayParen", "12월 5일 (토)", "2026-11-20 09:00", "2026-12-05"},
	{"KoreanCompact", "12월5일(토요일)", "2026-11-20 09:00", "2026-12-05"},
	{"NbspAndSpaces", " \t12/05\u00a0(토)\n ", "2026-11-20 09:00", "2026-12-05"},
	{"LiteralNbspEntity", "12/05&nbsp;(토)", "2026-11-20 09:00", "2026-12-05"},
	{"IdeographicSpace", "12월\u30005일\u3000토", "2026-11-20 09:00", "2026-12-05"},
	{"FullDash", "2026-12-05", "2026-11-20 09:00", "2026-12-05"},
	{"FullDot", "2026.12.05", "2026-11-20 09:00", "2026-12-05"},
	{"FullSlash", "2026/12/05", "2026-11-20 09:00", "2026-12-05"},
	{"FullDotsSpaces", "2026. 12. 5.", "2026-11-20 09:00", "2026-12-05"},
	{"FullWeekday", "2026-12-05(토)", "2026-11-20 09:00", "2026-12-05"},
	{"FullKorean", "2026년 12월 5일 (토)", "2026-11-20 09:00", "2026-12-05"},
	{"TwoDigitYearInWindow", "26.12.05", "2026-11-20 09:00", "2026-12-05"},
	{"TwoDigitYearKorean", "26년 12월 5일", "2026-11-20 09:00", "2026-12-05"},
	{"FullOutsideWindowTakenAsGiven", "2020-01-01(수)", "2026-11-20 09:00", "2020-01-01"},

	// Across the year boundary: crawled 2026-12-28 in Seoul.
	{"NextYear", "01/02(토)", "2026-12-28 10:00", "2027-01-02"},
	{"NextYearNoWeekday", "1/2", "2026-12-28 10:00", "2027-01-02"},
	{"SameYear", "12/31", "2026-12-28 10:00", "2026-12-31"},
	{"SevenDaysBefore", "12/21", "2026-12-28 10:00", "2026-12-21"},
	{"EightDaysBeforeRejected", "12/20", "2026-12-28 10:00", ""},
	{"LastDayOfWindow", "11/28", "2026-12-28 10:00", "2027-11-28"},
	{"PastWindowRejected", "11/29", "2026-12-28 10:00", ""},
	{"WeekdayMismatchAcrossBoundary", "01/02(금)", "2026-12-28 10:00", ""},

	// The crawl time is converted to Seoul first: 2026-12-31 15:30 UTC is 2027-01-01 00:30 KST,
	// so the window starts 2026-12-25, not 2026-12-24.
	{"UTCNextDayInSeoul", "12/25", "2026-12-31T15:30:00Z", "2026-12-25"},
	{"UTCNextDayInSeoulLowerBound", "12/24", "2026-12-31T15:30:00Z", ""},
	{"UTCNextDayNewYear", "01/01(금)", "2026-12-31T15:30:00Z", "2027-01-01"},
	{"UTCSameDayInSeoul", "12/24", "2026-12-31T14:30:00Z", "2026-12-24"},

	// Leap days.
	{"LeapDayNextYear", "02/29", "2027-11-01 12:00", "2028-02-29"},
	{"LeapDayWeekday", "02/29(화)", "2027-11-01 12:00", "2028-02-29"},
	{"LeapDayWrongWeekday", "02/29(월)", "2027-11-01 12:00", ""},
	{"LeapDayTooFar", "02/29", "2027-03-01 12:00", ""},
	{"LeapDayNonLeapFull", "2027-02-29", "2027-01-01 12:00", ""},

	// Rejections.
	{"Empty", "", "2026-11-20 09:00", ""},
	{"Blank", " \u00a0 ", "2026-11-20 09:00", ""},
	{"Feb30", "02/30", "2026-11-20 09:00", ""},
	{"Month13", "13/01", "2026-11-20 09:00", ""},
	{"Month0", "00/10", "2026-11-20 09:00", ""},
	{"Day0", "12/00", "2026-11-20 09:00", ""},
	{"Day32", "12/32", "2026-11-20 09:00", ""},
	{"WeekdayMismatch", "12/05(일)", "2026-11-20 09:00", ""},
	{"FullWeekdayMismatch", "2026-12-05 Sun", "2026-11-20 09:00", ""},
	{"UnknownWeekday", "12/05(X)", "2026-11-20 09:00", ""},
	{"TrailingGarbage", "12/05(토)x", "2026-11-20 09:00", ""},
	{"TwoWeekdays", "12/05(토)(토)", "2026-11-20 09:00", ""},
	{"TextAfter", "12/05 오전", "2026-11-20 09:00", ""},
	{"Words", "tomorrow", "2026-11-20 09:00", ""},
	{"MonthOnly", "12", "2026-11-20 09:00", ""},
	{"NoSeparator", "1205", "2026-11-20 09:00", ""},
	{"DayMonthYear", "05/12/2026", "2026-11-20 09:00", ""},
	{"TwoDigitYearOutsideWindow", "24.12.05", "2026-11-20 09:00", ""},
	{"TooLong", "12/05" + strings.Repeat(" ", 200), "2026-11-20 09:00", ""},
}

func TestPlayDate(t *testing.T) {
	t.Parallel()
	for _, c := range playDateCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := PlayDate(c.raw, c.crawledAt(t))
			if c.want == "" {
				if err == nil {
					t.Fatalf("PlayDate(%q) = %q, want an error", c.raw, got)
				}
				if !errors.Is(err, ErrBadRoundDate) {
					t.Fatalf("error %v does not wrap ErrBadRoundDate", err)
				}
				if q := strconv.Quote(truncate(c.raw, maxRoundDateLen)); !strings.Contains(err.Error(), q) {
					t.Fatalf("error %q does not quote the raw text %s", err, q)
				}
				return
			}
			if err != nil {
				t.Fatalf("PlayDate(%q): %v", c.raw, err)
			}
			if got != c.want {
				t.Fatalf("PlayDate(%q) = %q, want %q", c.raw, got, c.want)
			}
		})
	}
}

// TestPlayDateWeekdaysInTable guards the table itself: every accepted case that shows a weekday
// shows the real one, computed here by the standard library.
func TestPlayDateWeekdaysInTable(t *testing.T) {
	t.Parallel()
	for _, c := range playDateCases {
		if c.want == "" {
			continue
		}
		wd, ok := trailingWeekday(CleanText(strings.ReplaceAll(c.raw, "&nbsp;", " ")))
		if !ok {
			continue
		}
		d, err := time.Parse(dateLayout, c.want)
		if err != nil {
			t.Fatal(err)
		}
		if d.Weekday() != wd {
			t.Errorf("%s: %s is a %s, the table says %s", c.name, c.want, d.Weekday(), wd)
		}
	}
}

func TestPlayDateErrorNamesReason(t *testing.T) {
	t.Parallel()
	at := seoulTime(t, "2026-11-20 09:00")
	for raw, want := range map[string]string{
		"02/30":    "not a real date",
		"12/05(일)": "does not match",
		"12/20":    "", // in the window, fine
		"11/12":    "within",
		"12/05 zz": "unknown weekday",
	} {
		_, err := PlayDate(raw, at)
		if want == "" {
			if err != nil {
				t.Errorf("PlayDate(%q): %v", raw, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("PlayDate(%q) error %v, want it to mention %q", raw, err, want)
		}
	}
}

// trailingWeekday finds a weekday shown after the date, independently of the parser's regexps:
// the text after the last digit, stripped of brackets, spaces and 일 (of "5일").
func trailingWeekday(s string) (time.Weekday, bool) {
	i := strings.LastIndexFunc(s, unicode.IsDigit)
	if i < 0 {
		return 0, false
	}
	rest := strings.TrimLeft(s[i+1:], ".")
	rest = strings.TrimPrefix(strings.TrimSpace(rest), "일")
	rest = strings.Trim(rest, " ()（）[].")
	wd, ok := weekdays[strings.ToLower(rest)]
	if !ok {
		wd, ok = weekdays[strings.ToLower(rest)+"."]
	}
	return wd, ok
}

func FuzzPlayDate(f *testing.F) {
	for _, c := range playDateCases {
		f.Add(c.raw, c.crawledAt(f).Unix())
	}
	const lo, hi = 946684800, 4102444800 // 2000-01-01 .. 2100-01-01 UTC
	f.Fuzz(func(t *testing.T, raw string, unix int64) {
		if unix < lo || unix >= hi {
			unix = lo + (unix%(hi-lo)+(hi-lo))%(hi-lo)
		}
		at := time.Unix(unix, 0)
		got, err := PlayDate(raw, at)
		if err != nil {
			if !errors.Is(err, ErrBadRoundDate) {
				t.Fatalf("PlayDate(%q) error %v does not wrap ErrBadRoundDate", raw, err)
			}
			return
		}
		d, perr := time.Parse(dateLayout, got)
		if perr != nil || d.Format(dateLayout) != got {
			t.Fatalf("PlayDate(%q) = %q, not a real YYYY-MM-DD date", raw, got)
		}
		clean := cleanForParse(raw)
		if !startsWith4Digits(clean) { // only a four-digit-year date may lie outside the window
			c := at.In(Seoul())
			day := time.Date(c.Year(), c.Month(), c.Day(), 0, 0, 0, 0, time.UTC)
			if d.Before(day.AddDate(0, 0, -WindowBeforeDays)) || d.After(day.AddDate(0, 0, WindowAfterDays)) {
				t.Fatalf("PlayDate(%q) crawled %s = %s, outside the window", raw, c, got)
			}
		}
		if wd, ok := trailingWeekday(clean); ok && d.Weekday() != wd {
			t.Fatalf("PlayDate(%q) = %s, a %s, but the text says %s", raw, got, d.Weekday(), wd)
		}
		if again, err := PlayDate(got, at); err != nil || again != got {
			t.Fatalf("PlayDate(%q) = %q, but PlayDate(%q) = %q, %v", raw, got, got, again, err)
		}
	})
}

func startsWith4Digits(s string) bool {
	if len(s) < 4 {
		return false
	}
	for i := range 4 {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
