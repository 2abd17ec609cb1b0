package notify

import (
	"fmt"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/textfmt"
)

var (
	koWeekday = [...]string{"일", "월", "화", "수", "목", "금", "토"}
	enWeekday = [...]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
)

// Text is the message of one watch's matches from one crawl, in lang ("ko" or "en"): per match
// the course and part, play date with weekday, tee time, price, players, and how long ago it
// opened (or changed), relative to now.
func Text(lang, watch string, evs []*events.Event, now time.Time) string {
	var b strings.Builder
	if lang == "en" {
		fmt.Fprintf(&b, "⛳ Tee-time alert: %s (%d)\n", watch, len(evs))
	} else {
		fmt.Fprintf(&b, "⛳ 티타임 알림: %s (%d건)\n", watch, len(evs))
	}
	for _, e := range evs {
		b.WriteString("• ")
		b.WriteString(line(lang, e, now))
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n")
}

func line(lang string, e *events.Event, now time.Time) string {
	course := e.CourseName
	if e.CoursePart != "" {
		course += " (" + e.CoursePart + ")"
	}
	wd := ""
	if d, err := time.Parse(events.DateLayout, e.PlayDate); err == nil {
		if lang == "en" {
			wd = enWeekday[d.Weekday()]
		} else {
			wd = koWeekday[d.Weekday()]
		}
	}
	ago := now.Sub(e.OccurredAt).Round(time.Second)
	if ago < 0 {
		ago = 0
	}
	if lang == "en" {
		price := "price n/a"
		if e.PriceKRW != nil {
			price = "₩" + textfmt.Thousands(*e.PriceKRW)
			if e.Previous != nil && e.Previous.PriceKRW != nil && *e.Previous.PriceKRW != *e.PriceKRW {
				price += " (was ₩" + textfmt.Thousands(*e.Previous.PriceKRW) + ")"
			}
		}
		players := "players n/a"
		if e.Players != nil {
			players = fmt.Sprintf("%d players", *e.Players)
		}
		verb := "opened"
		if e.EventType == events.ListingChanged {
			verb = "changed"
		}
		return fmt.Sprintf("%s · %s (%s) %s · %s · %s · %s %s ago", course, e.PlayDate, wd, e.TeeTime, price, players, verb, agoEN(ago))
	}
	price := "가격 미정"
	if e.PriceKRW != nil {
		price = textfmt.Thousands(*e.PriceKRW) + "원"
		if e.Previous != nil && e.Previous.PriceKRW != nil && *e.Previous.PriceKRW != *e.PriceKRW {
			price += " (기존 " + textfmt.Thousands(*e.Previous.PriceKRW) + "원)"
		}
	}
	players := "인원 미정"
	if e.Players != nil {
		players = fmt.Sprintf("%d명", *e.Players)
	}
	verb := "오픈"
	if e.EventType == events.ListingChanged {
		verb = "변경"
	}
	return fmt.Sprintf("%s · %s (%s) %s · %s · %s · %s 전 %s", course, e.PlayDate, wd, e.TeeTime, price, players, agoKO(ago), verb)
}

func agoEN(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	default:
		return fmt.Sprintf("%dh %dmin", int(d.Hours()), int(d.Minutes())%60)
	}
}

func agoKO(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d초", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d분", int(d.Minutes()))
	default:
		return fmt.Sprintf("%d시간 %d분", int(d.Hours()), int(d.Minutes())%60)
	}
}
