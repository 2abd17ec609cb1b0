package notify

import (
	"testing"
	"time"
)

// TestWatchDemands: which page sets (source, course, play date) a watch asks to be crawled more
// often. A watch naming neither a source nor a date or weekday adds none, nor does a muted one;
// courses narrow by the page set's course (a target's name); today's page set drops out once the
// watch's tee-time window has passed.
func TestWatchDemands(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 9, 10, 0, 0, 0, Seoul) // a Monday
	from, to := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name                     string
		w                        Watch
		source, course, playDate string
		want                     bool
	}{
		{"NoSourceNoDate", Watch{Courses: []string{"파인"}}, "club", "파인힐스 CC", "2026-03-14", false},
		{"Muted", Watch{Sources: []string{"club"}, Muted: true}, "club", "", "2026-03-14", false},
		{"Source", Watch{Sources: []string{"club"}}, "club", "", "2026-03-20", true},
		{"OtherSource", Watch{Sources: []string{"club"}}, "other", "", "2026-03-14", false},
		{"Weekday", Watch{Weekdays: []time.Weekday{time.Saturday}}, "any", "", "2026-03-14", true},
		{"OtherWeekday", Watch{Weekdays: []time.Weekday{time.Saturday}}, "any", "", "2026-03-13", false},
		{"DateRange", Watch{DateFrom: from, DateTo: to}, "any", "", "2026-03-15", true},
		{"OutsideRange", Watch{DateFrom: from, DateTo: to}, "any", "", "2026-03-16", false},
		{"NextDays", Watch{NextDays: 3}, "any", "", "2026-03-11", true},
		{"BeyondNextDays", Watch{NextDays: 3}, "any", "", "2026-03-12", false},
		{"CourseSubstring", Watch{Sources: []string{"club"}, Courses: []string{"파인"}}, "club", "파인힐스 CC", "2026-03-14", true},
		{"OtherCourse", Watch{Sources: []string{"club"}, Courses: []string{"파인"}}, "club", "오션뷰 골프클럽", "2026-03-14", false},
		{"CourseExact", Watch{Sources: []string{"club"}, CoursesExact: []string{"오션뷰 골프클럽"}}, "club", "오션뷰 골프클럽", "2026-03-14", true},
		{"SetWithoutCourse", Watch{Sources: []string{"club"}, Courses: []string{"파인"}}, "club", "", "2026-03-14", true},
		{"SetWithoutDate", Watch{Weekdays: []time.Weekday{time.Saturday}}, "any", "파인힐스 CC", "", true},
		{"TodaysWindowPassed", Watch{Sources: []string{"club"}, TimeFrom: "06:00", TimeTo: "09:00"}, "club", "", "2026-03-09", false},
		{"TodaysWindowAhead", Watch{Sources: []string{"club"}, TimeFrom: "06:00", TimeTo: "11:00"}, "club", "", "2026-03-09", true},
		{"PriceDoesNotNarrow", Watch{Sources: []string{"club"}, MaxPriceKRW: new(int64)}, "club", "", "2026-03-14", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.w.Demands(tc.source, tc.course, tc.playDate, now); got != tc.want {
				t.Errorf("Demands(%q, %q, %q) = %v, want %v", tc.source, tc.course, tc.playDate, got, tc.want)
			}
		})
	}
}
