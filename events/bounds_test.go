package events

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestValidateBounds (contract side): an event whose indexed
// text is too long for a PostgreSQL btree entry (about 2.7 KB) must be malformed (dead-lettered),
// not a valid event that fails its whole batch forever.
func TestValidateBounds(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	price, players := int64(150000), 4
	ok := Listing{Source: "sim-golf", CourseName: "레이크 CC", CoursePart: "OUT", RoundDate: "12/05(토)",
		PlayDate: "2026-12-05", TeeTime: "07:30", Values: Values{PriceKRW: &price, Players: &players}}
	long := func(n int) string { return strings.Repeat("가", n/3+1) } // n+ bytes of UTF-8
	cases := []struct {
		field string
		edit  func(l *Listing, crawlID *string)
	}{
		{"course_name", func(l *Listing, _ *string) { l.CourseName = long(MaxCourseNameBytes) }},
		{"course_part", func(l *Listing, _ *string) { l.CoursePart = long(MaxCoursePartBytes) }},
		{"round_date", func(l *Listing, _ *string) { l.RoundDate = long(MaxRoundDateBytes) }},
		{"source", func(l *Listing, _ *string) { l.Source = strings.Repeat("s", MaxSourceBytes+1) }},
		{"crawl_id", func(_ *Listing, c *string) { *c = strings.Repeat("c", MaxCrawlIDBytes+1) }},
		// Every part within its own bound, the key over its bound (escaping doubles the '|'s).
		{"listing_key", func(l *Listing, _ *string) {
			l.CourseName = strings.Repeat("|", MaxCourseNameBytes)
			l.CoursePart = strings.Repeat("|", MaxCoursePartBytes)
		}},
	}
	for _, c := range cases {
		l, crawlID := ok, "sim-golf@2026-11-29T10:00:00+09:00"
		c.edit(&l, &crawlID)
		e := Opened(l, crawlID, at)
		verr := e.Validate()
		err := verr
		var fe *FieldError
		if !errors.Is(err, ErrFieldTooLong) || !errors.Is(err, ErrMalformed) || !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s over its bound: Validate = %v, want ErrFieldTooLong on %s", c.field, err, c.field)
			continue
		}
		b, err := Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Decode(b); !errors.Is(err, ErrFieldTooLong) {
			t.Errorf("%s over its bound: Decode = %v, want ErrFieldTooLong", c.field, err)
		}
		if len(verr.Error()) > 300 {
			t.Errorf("%s: the error quotes the whole value (%d bytes)", c.field, len(verr.Error()))
		}
	}
	// At the bounds exactly, the event is valid.
	l := ok
	l.CourseName = strings.Repeat("c", MaxCourseNameBytes)
	l.CoursePart = strings.Repeat("p", MaxCoursePartBytes)
	l.RoundDate = strings.Repeat("r", MaxRoundDateBytes)
	l.Source = strings.Repeat("s", MaxSourceBytes)
	if err := Opened(l, strings.Repeat("c", MaxCrawlIDBytes), at).Validate(); err != nil {
		t.Errorf("every field at its bound: %v", err)
	}
	// The bounds together stay well under PostgreSQL's btree entry limit (2704 bytes).
	if sum := MaxListingKeyBytes + MaxCourseNameBytes + MaxCoursePartBytes + MaxRoundDateBytes + MaxSourceBytes + MaxCrawlIDBytes; sum >= 2704 {
		t.Errorf("the bounds add up to %d bytes", sum)
	}
}
