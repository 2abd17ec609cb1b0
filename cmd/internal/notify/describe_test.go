package notify

import (
	"testing"
	"time"
)

// TestDescribeFileWatch: /watches and `crawler watches` say a file watch's other conditions too.
func TestDescribeFileWatch(t *testing.T) {
	p, n := int64(90000), 3
	w := &Watch{Sources: []string{"sim-golf"}, CoursesExact: []string{"파인 CC"}, NextDays: 14, MaxPriceKRW: &p, MinPlayers: &n,
		DateFrom: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	if got, want := Describe(w, "en"), "2026-12-01~, within 14 days, up to 90,000 KRW, 3+ players, course is '파인 CC', sites sim-golf"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := Describe(&Watch{}, "ko"); got != "모든 티타임" {
		t.Errorf("no conditions: %q", got)
	}
}
