package events

import (
	"bytes"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	fastjson "github.com/segmentio/encoding/json"
)

// ErrMalformed is the meaning every decode and validation error carries: the message can never
// become a valid event, however often it is retried, so it belongs in the dead-letter table.
var ErrMalformed = errors.New("malformed event")

// The kinds of malformed events callers may want to tell apart. Each wraps ErrMalformed.
var (
	ErrNotJSON        = fmt.Errorf("%w: not a JSON event object", ErrMalformed)
	ErrUnknownType    = fmt.Errorf("%w: unknown event_type", ErrMalformed)
	ErrMissingID      = fmt.Errorf("%w: missing event_id", ErrMalformed)
	ErrBadDate        = fmt.Errorf("%w: bad play_date", ErrMalformed)
	ErrBadTime        = fmt.Errorf("%w: bad tee_time", ErrMalformed)
	ErrSchemaVersion  = fmt.Errorf("%w: unsupported schema_version", ErrMalformed)
	ErrMissingField   = fmt.Errorf("%w: missing field", ErrMalformed)
	ErrInvalidField   = fmt.Errorf("%w: invalid field", ErrMalformed)
	ErrKeyMismatch    = fmt.Errorf("%w: listing_key does not match its fields", ErrMalformed)
	ErrTooLarge       = fmt.Errorf("%w: value too large", ErrMalformed)
	ErrInvalidUTF8    = fmt.Errorf("%w: invalid UTF-8", ErrMalformed)
	ErrTrailingData   = fmt.Errorf("%w: trailing data after the event object", ErrMalformed)
	ErrUnexpectedNull = fmt.Errorf("%w: unexpected field for this event_type", ErrMalformed)
)

// MaxEventBytes bounds an encoded event. Real events are ~500 bytes; anything near this is junk.
const MaxEventBytes = 64 << 10

// FieldError says which field of an event is wrong, and why. errors.Is(err, ErrMalformed) holds.
type FieldError struct {
	Field string
	Kind  error // one of the Err* values above
	Value string
}

func (e *FieldError) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("%v: %s=%q", e.Kind, e.Field, e.Value)
	}
	return fmt.Sprintf("%v: %s", e.Kind, e.Field)
}

func (e *FieldError) Unwrap() error { return e.Kind }

// Encode marshals e as one line of JSON (no trailing newline), occurred_at spelled by FormatTime.
func Encode(e Event) ([]byte, error) {
	b, err := encode(e)
	if err != nil {
		return nil, fmt.Errorf("encode event %s: %w", e.EventID, err)
	}
	return b, nil
}

// Decode parses and validates one event strictly: unknown fields, field names in another case than
// the contract's (encoding/json would match "PRICE_KRW" to price_krw, and the consumer stores the
// value verbatim, so readers of the stored payload and the JSON Schemas would not find it), trailing
// data, wrong types, invalid UTF-8 and values over MaxEventBytes are rejected. Every error wraps
// ErrMalformed.
//
// It parses with github.com/segmentio/encoding/json, which accepts and rejects exactly what
// encoding/json's Decoder with DisallowUnknownFields and exact field names does
// (FuzzDecodeAgreesWithEncodingJSON holds it to that) in a fifth of the time: decoding is a large share of the consumer's CPU, on a
// machine whose cores it shares with PostgreSQL and the broker.
func Decode(b []byte) (Event, error) {
	var e Event
	err := decodeInto(b, &e, 0)
	return e, err
}

// DecodeShared is Decode into *e, without copying: the event's strings share b's memory (a string
// that holds an escape sequence is still unescaped into a copy of its own), so b must not change
// while the event is in use. The consumer decodes every message it fetches and keeps the message's
// value anyway (it is the stored payload), so copying each field out of it again, and the event
// itself once more, were a large share of its allocations (docs/performance.md). Callers whose
// buffer is reused (a line scanner) use Decode. It accepts and rejects exactly what Decode does
// (FuzzDecodeSharedAgreesWithDecode); on an error *e is the zero Event.
func DecodeShared(b []byte, e *Event) error {
	return decodeInto(b, e, fastjson.DontCopyString)
}

func decodeInto(b []byte, e *Event, flags fastjson.ParseFlags) error {
	*e = Event{}
	if len(b) > MaxEventBytes {
		return fmt.Errorf("%w (%d bytes > %d)", ErrTooLarge, len(b), MaxEventBytes)
	}
	if !utf8.Valid(b) {
		return ErrInvalidUTF8
	}
	rest, err := fastjson.Parse(b, e, flags|fastjson.DisallowUnknownFields|fastjson.DontMatchCaseInsensitiveStructFields)
	if err != nil {
		*e = Event{}
		return fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	if len(bytes.TrimLeft(rest, " \t\r\n")) != 0 {
		*e = Event{}
		return ErrTrailingData
	}
	if err := e.Validate(); err != nil {
		*e = Event{}
		return err
	}
	return nil
}

// Validate checks an event against the contract (docs/contract.md).
func (e Event) Validate() error {
	switch {
	case e.EventID == uuid.Nil:
		return ErrMissingID
	case e.SchemaVersion != SchemaVersion:
		return &FieldError{Field: "schema_version", Kind: ErrSchemaVersion, Value: fmt.Sprint(e.SchemaVersion)}
	case !e.EventType.Valid():
		return &FieldError{Field: "event_type", Kind: ErrUnknownType, Value: string(e.EventType)}
	case e.OccurredAt.IsZero():
		return &FieldError{Field: "occurred_at", Kind: ErrMissingField}
	}
	for _, f := range []struct{ name, v string }{
		{"crawl_id", e.CrawlID}, {"source", e.Source}, {"listing_key", e.ListingKey},
		{"course_name", e.CourseName}, {"round_date", e.RoundDate},
	} {
		if f.v == "" {
			return &FieldError{Field: f.name, Kind: ErrMissingField}
		}
	}
	for _, f := range []struct {
		name string
		v    string
		max  int
	}{
		{"crawl_id", e.CrawlID, MaxCrawlIDBytes}, {"source", e.Source, MaxSourceBytes},
		{"listing_key", e.ListingKey, MaxListingKeyBytes}, {"course_name", e.CourseName, MaxCourseNameBytes},
		{"course_part", e.CoursePart, MaxCoursePartBytes}, {"round_date", e.RoundDate, MaxRoundDateBytes},
	} {
		if err := checkLen(f.name, f.v, f.max); err != nil {
			return err
		}
	}
	if !isDate(e.PlayDate) {
		return &FieldError{Field: "play_date", Kind: ErrBadDate, Value: e.PlayDate}
	}
	if !isTime(e.TeeTime) {
		return &FieldError{Field: "tee_time", Kind: ErrBadTime, Value: e.TeeTime}
	}
	if e.PriceKRW != nil && *e.PriceKRW < 0 {
		return &FieldError{Field: "price_krw", Kind: ErrInvalidField, Value: fmt.Sprint(*e.PriceKRW)}
	}
	if e.Players != nil && (*e.Players < 0 || *e.Players > 100) {
		return &FieldError{Field: "players", Kind: ErrInvalidField, Value: fmt.Sprint(*e.Players)}
	}
	if !keyMatches(e.ListingKey, e.Source, e.CourseName, e.CoursePart, e.PlayDate, e.TeeTime) {
		return &FieldError{Field: "listing_key", Kind: ErrKeyMismatch, Value: e.ListingKey}
	}
	switch e.EventType {
	case ListingClosed:
		if e.CloseReason != Booked && e.CloseReason != Expired {
			return &FieldError{Field: "close_reason", Kind: ErrInvalidField, Value: string(e.CloseReason)}
		}
		if e.Previous != nil {
			return &FieldError{Field: "previous", Kind: ErrUnexpectedNull}
		}
	case ListingChanged:
		if e.Previous == nil {
			return &FieldError{Field: "previous", Kind: ErrMissingField}
		}
		if e.CloseReason != "" {
			return &FieldError{Field: "close_reason", Kind: ErrUnexpectedNull}
		}
	default:
		if e.CloseReason != "" {
			return &FieldError{Field: "close_reason", Kind: ErrUnexpectedNull}
		}
		if e.Previous != nil {
			return &FieldError{Field: "previous", Kind: ErrUnexpectedNull}
		}
	}
	return nil
}

// isDate reports whether s is a play_date: a date in DateLayout that formats back to itself.
// The common case (YYYY-MM-DD, a day of that month) is checked without allocating; anything else
// takes the definition itself, time.Parse and Format.
func isDate(s string) bool {
	if len(s) == 10 && s[4] == '-' && s[7] == '-' && digits(s[:4]) && digits(s[5:7]) && digits(s[8:]) {
		y, m, d := atoi(s[:4]), atoi(s[5:7]), atoi(s[8:])
		if m >= 1 && m <= 12 && d >= 1 && d <= time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day() {
			return true
		}
	}
	t, err := time.Parse(DateLayout, s)
	return err == nil && t.Format(DateLayout) == s
}

// isTime reports whether s is a tee_time: a time in TimeLayout that formats back to itself (the
// common case, HH:MM, checked without allocating, as in isDate).
func isTime(s string) bool {
	if len(s) == 5 && s[2] == ':' && digits(s[:2]) && digits(s[3:]) && atoi(s[:2]) < 24 && atoi(s[3:]) < 60 {
		return true
	}
	t, err := time.Parse(TimeLayout, s)
	return err == nil && t.Format(TimeLayout) == s
}

func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// atoi is the value of s, ASCII digits only (checked by digits).
func atoi(s string) int {
	n := 0
	for i := range len(s) {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// keyMatches reports whether key == ListingKey(source, course, part, playDate, teeTime) without
// building the key when the parts are already as the key holds them (no white space to fold, no
// character to escape: every event the crawler builds), and by building it into a stack buffer
// otherwise.
func keyMatches(key, source, course, part, playDate, teeTime string) bool {
	if keyPartClean(source) && keyPartClean(course) && keyPartClean(part) && keyPartClean(playDate) && keyPartClean(teeTime) {
		return len(key) == len(source)+len(course)+len(part)+len(playDate)+len(teeTime)+4 &&
			cutPart(&key, source) && cutPart(&key, course) && cutPart(&key, part) && cutPart(&key, playDate) && key == teeTime
	}
	var buf [256]byte // most keys fit: no allocation
	return string(appendListingKey(buf[:0], source, course, part, playDate, teeTime)) == key
}

// cutPart removes part and the '|' after it from the start of *key, if they are there.
func cutPart(key *string, part string) bool {
	k := *key
	if len(k) <= len(part) || k[:len(part)] != part || k[len(part)] != '|' {
		return false
	}
	*key = k[len(part)+1:]
	return true
}

// keyPartClean reports whether s is its own key part: no '\\' or '|' to escape, and folding white
// space would not change it (no white space but single ASCII spaces between other characters).
// Any byte that may start a non-ASCII space (U+0085, U+00A0, U+1680, U+2000-U+3000) makes it
// unclean, which is only the slow path for it.
func keyPartClean(s string) bool {
	for i := range len(s) {
		switch s[i] {
		case '\\', '|', '\t', '\n', '\v', '\f', '\r', 0xC2, 0xE1, 0xE2, 0xE3:
			return false
		case ' ':
			if i == 0 || i == len(s)-1 || s[i+1] == ' ' {
				return false
			}
		}
	}
	return true
}
