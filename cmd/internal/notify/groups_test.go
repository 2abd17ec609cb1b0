package notify

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/events"
)

// TestGroupLinesInTeeTimeOrder: a golfer reads for the earliest slot first. The lines of a
// message are sorted by play date, then tee time, then course, whatever order they were claimed
// in (the crawler claims in its diff's order, the central notifier in the order of its batches),
// before a group is split: the first part holds the earliest tee times. A group picked before
// (its send key fixed) is sorted the same way.
func TestGroupLinesInTeeTimeOrder(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	row := func(course, date, tee string, sendKey uuid.UUID) PickRow {
		e := &events.Event{EventID: uuid.New(), EventType: events.ListingOpened, CourseName: course, PlayDate: date, TeeTime: tee, OccurredAt: at}
		return PickRow{GroupClaim: GroupClaim{Key: uuid.New(), Event: e}, Watch: "w", Channel: "hook", CrawlID: "c1", SendKey: sendKey}
	}
	lines := func(g Group) []string {
		var out []string
		for _, c := range g.Claims {
			out = append(out, c.Event.PlayDate+" "+c.Event.TeeTime+" "+c.Event.CourseName)
		}
		return out
	}
	want := []string{"2026-12-20 07:00 레이크", "2026-12-20 08:00 Alps", "2026-12-20 08:00 레이크", "2026-12-21 06:30 Alps"}
	for _, keyed := range []bool{false, true} {
		key := uuid.Nil
		if keyed {
			key = uuid.New()
		}
		rows := []PickRow{row("레이크", "2026-12-21", "06:30", key), row("레이크", "2026-12-20", "08:00", key),
			row("레이크", "2026-12-20", "07:00", key), row("Alps", "2026-12-20", "08:00", key)}
		rows[0].Event.CourseName = "Alps"
		groups := Groups(rows, nil)
		if len(groups) != 1 || !slices.Equal(lines(groups[0]), want) {
			t.Errorf("keyed %v: lines %v, want %v", keyed, lines(groups[0]), want)
		}
	}
	var rows []PickRow
	for i := 25; i > 0; i-- { // claimed latest first
		rows = append(rows, row("레이크", "2026-12-20", fmt.Sprintf("%02d:%02d", 5+i/6, i%6*10), uuid.Nil))
	}
	groups := Groups(rows, nil)
	if len(groups) != 2 || len(groups[0].Claims) != 20 || lines(groups[0])[0] != "2026-12-20 05:10 레이크" || lines(groups[1])[4] != "2026-12-20 09:10 레이크" {
		t.Errorf("25 lines split: %v", func() (out [][]string) {
			for _, g := range groups {
				out = append(out, lines(g))
			}
			return out
		}())
	}
}
