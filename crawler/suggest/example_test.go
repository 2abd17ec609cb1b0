package suggest

import (
	"fmt"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// A row of text as the page shows one tee time is split by the crawler's own shapes: a date, a
// time (with its words: 06시 30분, 오전 6:30), a price (160,000원, 14만5천원, 160000), a player
// count (4, 4명); the words none takes are one name.
func TestSplitRow(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"12/06 06:30 샤인코스 160,000원 4명", `[round_date "12/06" tee_time "06:30" the name "샤인코스" price "160,000원" players "4명"]`},
		{"06시 30분 레이크 CC 동코스 14만5천원", `[tee_time "06시 30분" the name "레이크 CC 동코스" price "14만5천원"]`},
		{"오전 6:30 OUT 160000 4", `[tee_time "오전 6:30" the name "OUT" price "160000" players "4"]`},
		{"0630 160,000 원", `[tee_time "0630" price "160,000 원"]`},
		{"2026-12-06 6:30 AM", `[round_date "2026-12-06" tee_time "6:30 AM"]`},
		{"160,000", `[price "160,000"]`},
	} {
		if got := fmt.Sprint(splitRow(tc.in)); got != tc.want {
			t.Errorf("splitRow(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

// An example value matches a row's value when both normalise alike, or for a name when one
// contains the other once 코스, course, CC and spaces are dropped.
func TestExampleReads(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, site.Seoul())
	for _, tc := range []struct {
		v    exampleValue
		cell string
		raw  string
		want bool
	}{
		{exampleValue{"price", "160,000원"}, "price", "160000", true},
		{exampleValue{"price", "160,000원"}, "price", "100000", false},
		{exampleValue{"tee_time", "06:30"}, "tee_time", "0630", true},
		{exampleValue{"players", "4명"}, "players", "4", true},
		{exampleValue{"round_date", "12/06"}, "round_date", "12/06(일)", true},
		{exampleValue{"round_date", "2026-12-06"}, "round_date", "12/06", true},
		{exampleValue{nameCell, "샤인코스"}, "course_part", "샤인", true},
		{exampleValue{nameCell, "샤인"}, "course_part", "샤인 코스", true},
		{exampleValue{nameCell, "Lake Course"}, "course_part", "LAKE", true},
		{exampleValue{nameCell, "샤인코스"}, "course_part", "A", false},
		{exampleValue{nameCell, "코스"}, "course_part", "코스", false},
	} {
		if got := tc.v.reads(tc.raw, tc.cell, at); got != tc.want {
			t.Errorf("%s reads %q as %s: %v, want %v", tc.v, tc.raw, tc.cell, got, tc.want)
		}
	}
}

func TestParseExamples(t *testing.T) {
	got, err := parseExamples([]string{"06:30 160,000원", "price=160,000", "course_part=샤인"})
	if err != nil {
		t.Fatal(err)
	}
	if s := fmt.Sprint(got); s != `[{06:30 160,000원 [{tee_time 06:30} {price 160,000원}]} {price=160,000 course_part=샤인 [{price 160,000} {course_part 샤인}]}]` {
		t.Errorf("parseExamples = %s", s)
	}
	if _, err := parseExamples([]string{"greenfee=160000"}); err == nil {
		t.Errorf("greenfee=160000 (not a cell) is no error")
	}
}
