package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// The one spelling of a time the product writes, in events (occurred_at, crawl_id, ce_time) and
// for people (CSV, JSON, lists): RFC 3339 at +09:00 (Asia/Seoul, which has kept that offset since
// 1988) with six fractional digits, microseconds, PostgreSQL's precision: a time read back from
// the database or an export spells the same, and two times of one second keep their order, also
// as text. Readers accept any RFC 3339 offset and precision (the README's Event contract).
const TimestampLayout = "2006-01-02T15:04:05.000000Z07:00"

// writeZone is the offset times are written at: fixed, so writing needs no time-zone database.
var writeZone = time.FixedZone("KST", 9*60*60)

// FormatTime spells t as TimestampLayout at +09:00, truncated to the microsecond.
func FormatTime(t time.Time) string { return FormatTimeIn(t, writeZone) }

// FormatTimeIn is FormatTime in loc instead (a --tz the user asked for), still to the microsecond.
func FormatTimeIn(t time.Time, loc *time.Location) string {
	return t.In(loc).Truncate(time.Microsecond).Format(TimestampLayout)
}

// appendTimeJSON appends t as a JSON string spelled by FormatTime.
func appendTimeJSON(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.In(writeZone).Truncate(time.Microsecond).AppendFormat(b, TimestampLayout)
	return append(b, '"')
}

// occurredAtKey is how occurred_at's key starts in an encoded event. Every string value is
// escaped, so the sequence (a quote not preceded by a backslash) can only be the key.
var occurredAtKey = []byte(`"occurred_at":"`)

// MarshalJSON writes e as Encode does, so an event inside another JSON value spells its time the
// same way.
func (e Event) MarshalJSON() ([]byte, error) { return encode(e) }

// encode is encoding/json's spelling of e (fields in struct order) with occurred_at spelled by
// FormatTime instead of time.Time's RFC 3339 with nanoseconds in the time's own zone.
func encode(e Event) ([]byte, error) {
	type plain Event // without MarshalJSON
	b, err := json.Marshal(plain(e))
	if err != nil {
		return nil, err
	}
	i := bytes.Index(b, occurredAtKey)
	if i < 0 {
		return nil, fmt.Errorf("no occurred_at in %.80s", b)
	}
	start := i + len(occurredAtKey) - 1 // the value's opening quote
	end := start + 1 + bytes.IndexByte(b[start+1:], '"') + 1
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:start]...)
	out = appendTimeJSON(out, e.OccurredAt)
	return append(out, b[end:]...), nil
}
