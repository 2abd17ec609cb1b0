package notify

import (
	"slices"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// AddsDemand reports whether w asks the crawler to crawl some page sets more often (#51): a watch
// in force that names a source, play dates or weekdays. A watch naming none of them could match
// any date of any site, so it adds no demand (its alerts come from the scheduled crawls).
func (w *Watch) AddsDemand() bool {
	return !w.Muted && (len(w.Sources) > 0 || !w.DateFrom.IsZero() || !w.DateTo.IsZero() || w.NextDays > 0 || len(w.Weekdays) > 0)
}

// Demands reports whether w (AddsDemand) can match a listing of a page set of source: its play
// date playDate (YYYY-MM-DD; empty: the page set spans dates) and its course (a target's name;
// empty: any). The watch's sources, dates, weekdays and courses decide, and its tee-time window
// once that window has passed for today's page set; its price and players cannot exclude a page
// set. now (any zone) is "today" for next_days.
func (w *Watch) Demands(source, course, playDate string, now time.Time) bool {
	if !w.AddsDemand() || len(w.Sources) > 0 && !slices.Contains(w.Sources, source) {
		return false
	}
	if playDate != "" {
		v := prepare(&events.Event{PlayDate: playDate}, now)
		if !w.datesMatch(v) {
			return false
		}
		if !v.date.IsZero() && v.day == v.today0 && w.TimeTo != "" && now.In(Seoul).Format("15:04") > w.TimeTo {
			return false // today's window has passed
		}
	}
	if course == "" || len(w.Courses) == 0 && len(w.CoursesExact) == 0 {
		return true
	}
	if slices.Contains(w.CoursesExact, course) {
		return true
	}
	lower := strings.ToLower(course)
	return slices.ContainsFunc(w.Courses, func(c string) bool { return strings.Contains(lower, c) })
}
