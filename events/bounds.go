package events

import "fmt"

// Byte bounds of the event's text fields (UTF-8 bytes, after white space folding). They keep every
// index entry far below PostgreSQL's btree limit (2704 bytes per entry; listing_key is indexed
// with play_date and occurred_at): all of them together are 1,364 bytes. Real values are tens of
// bytes. An event over a bound is malformed (ErrFieldTooLong, dead-lettered by the consumer); the
// crawler rejects a row that would exceed one (reason field_too_long) instead of emitting it.
const (
	MaxSourceBytes     = 100 // a site name of the sites file
	MaxCourseNameBytes = 200
	MaxCoursePartBytes = 200
	MaxRoundDateBytes  = 64
	MaxCrawlIDBytes    = 200 // "<source>@<RFC 3339>" is at most 126
	// MaxListingKeyBytes bounds the whole key: parts within their own bounds can still exceed it
	// when escaping doubles their '|' and '\' characters.
	MaxListingKeyBytes = 600
)

// ErrFieldTooLong is the kind of a text field longer than its bound (see MaxListingKeyBytes).
var ErrFieldTooLong = fmt.Errorf("%w: field too long", ErrMalformed)

// CheckBounds reports the first text field of l (source, course_name, course_part, round_date,
// then its listing key) longer than its bound, as a *FieldError of kind ErrFieldTooLong; nil if
// none is. The lengths are of the values as an event carries them (white space folded).
func (l Listing) CheckBounds() error {
	for _, f := range []struct {
		name string
		v    string
		max  int
	}{
		{"source", norm(l.Source), MaxSourceBytes},
		{"course_name", norm(l.CourseName), MaxCourseNameBytes},
		{"course_part", norm(l.CoursePart), MaxCoursePartBytes},
		{"round_date", l.RoundDate, MaxRoundDateBytes},
		{"listing_key", l.Key(), MaxListingKeyBytes},
	} {
		if err := checkLen(f.name, f.v, f.max); err != nil {
			return err
		}
	}
	return nil
}

// checkLen is the FieldError of a value over its bound. The value itself is not quoted (it may be
// kilobytes); its length is.
func checkLen(field, v string, max int) error {
	if len(v) <= max {
		return nil
	}
	return &FieldError{Field: field, Kind: ErrFieldTooLong, Value: fmt.Sprintf("%d bytes > %d", len(v), max)}
}
