package notify

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/internal/textfmt"
)

// say is ko, or en when lang is "en".
func say(lang, ko, en string) string {
	if lang == "en" {
		return en
	}
	return ko
}

// Weekday reads a weekday's name: sun..sat (or a longer English prefix of it, saturday), 일..토;
// ok false for anything else.
func Weekday(name string) (time.Weekday, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	if d, ok := weekday[name]; ok {
		return d, true
	}
	if len(name) >= 3 && name[0] < 0x80 {
		if d, ok := weekday[name[:3]]; ok && strings.HasPrefix(strings.ToLower(d.String()), name) {
			return d, true
		}
	}
	return 0, false
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
		parts = append(parts, fmt.Sprintf(say(lang, "%s원 이하", "up to %s KRW"), textfmt.Thousands(*w.MaxPriceKRW)))
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
