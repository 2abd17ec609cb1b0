package notify

import (
	"fmt"
	"strings"
	"time"

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
	}
	korean = &wording{
		header:   "⛳ 티타임 알림: %s (%d건)\n",
		weekdays: [...]string{"일", "월", "화", "수", "목", "금", "토"},
		price:    "%s원", was: " (기존 %s원)", noPrice: "가격 미정",
		players: "%d명", noPlayers: "인원 미정",
		opened: "오픈", changed: "변경",
		match:   "%[1]s · %[2]s (%[3]s) %[4]s · %[5]s · %[6]s · %[8]s 전 %[7]s",
		seconds: "%d초", minutes: "%d분", hoursMinutes: "%d시간 %d분",
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
// opened (or changed), relative to now.
func Text(lang, watch string, evs []*events.Event, now time.Time) string {
	w := wordingOf(lang)
	var b strings.Builder
	fmt.Fprintf(&b, w.header, watch, len(evs))
	for _, e := range evs {
		b.WriteString("• ")
		b.WriteString(w.line(e, now))
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

func (w *wording) line(e *events.Event, now time.Time) string {
	course := e.CourseName
	if e.CoursePart != "" {
		course += " (" + e.CoursePart + ")"
	}
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
	verb := w.opened
	if e.EventType == events.ListingChanged {
		verb = w.changed
	}
	return fmt.Sprintf(w.match, course, e.PlayDate, wd, e.TeeTime, price, players, verb, w.ago(ago))
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
