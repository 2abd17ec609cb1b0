package events

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Encode spells occurred_at one way whatever the time's zone and precision: RFC 3339 at +09:00
// with six fractional digits (microseconds, PostgreSQL's precision), so the event id, which does
// not depend on the time's spelling, is what it was.
func TestEncodeSpellsOccurredAtAtSeoulWithMicroseconds(t *testing.T) {
	t.Parallel()
	l := sampleListing()
	utc := time.Date(2026, 11, 29, 1, 10, 0, 123456789, time.UTC) // 10:10:00.123456789 in Seoul
	for _, at := range []time.Time{utc, utc.In(seoul), utc.In(time.FixedZone("", -5*3600)), utc.Local()} {
		e := Opened(l, "c1", at)
		b, err := Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		if want := `"occurred_at":"2026-11-29T10:10:00.123456+09:00"`; !strings.Contains(string(b), want) {
			t.Errorf("%v: %s lacks %s", at, b, want)
		}
		if e.EventID != Opened(l, "c1", utc).EventID {
			t.Errorf("%v: the event id depends on the time's zone", at)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		if !got.OccurredAt.Equal(utc.Truncate(time.Microsecond)) {
			t.Errorf("%v: decoded %v, want %v", at, got.OccurredAt, utc.Truncate(time.Microsecond))
		}
	}
	if got := FormatTime(time.Date(2026, 11, 29, 1, 10, 0, 0, time.UTC)); got != "2026-11-29T10:10:00.000000+09:00" {
		t.Errorf("a whole second: %s", got)
	}
}

// Two events of one second keep their order in their spelling, and an event inside another JSON
// value (a dead letter's listing, --json) spells its time as Encode does.
func TestOccurredAtSortsAndNestsAsEncoded(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 1, 10, 0, 0, time.UTC)
	var prev string
	for _, d := range []time.Duration{0, time.Microsecond, 90 * time.Microsecond, 100 * time.Millisecond, time.Second} {
		s := FormatTime(at.Add(d))
		if s <= prev {
			t.Errorf("%s sorts before or with %s", s, prev)
		}
		prev = s
	}
	e := sampleEvents()[1]
	e.OccurredAt = at.Add(time.Nanosecond)
	enc, err := Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	nested, err := json.Marshal(struct {
		Events []Event `json:"events"`
	}{[]Event{e}})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"events":[` + string(enc) + `]}`; string(nested) != want {
		t.Errorf("nested %s, want %s", nested, want)
	}
}

// Consumers accept any RFC 3339 offset and precision (the contract's compatibility rules): an
// older producer's UTC with nanoseconds, another offset, no fraction, milliseconds.
func TestDecodeAcceptsAnyOffsetAndPrecision(t *testing.T) {
	t.Parallel()
	want := time.Date(2026, 11, 29, 1, 10, 0, 0, time.UTC)
	for _, spelled := range []struct {
		s    string
		frac time.Duration
	}{
		{"2026-11-29T01:10:00Z", 0},
		{"2026-11-29T01:10:00.123456789Z", 123456789},
		{"2026-11-29T10:10:00+09:00", 0},
		{"2026-11-29T10:10:00.5+09:00", 500 * time.Millisecond},
		{"2026-11-29T10:10:00.123456+09:00", 123456 * time.Microsecond},
		{"2026-11-28T20:10:00.123-05:00", 123 * time.Millisecond},
		{"2026-11-29T06:40:00+05:30", 0},
	} {
		b := mutate(t, func(m map[string]any) { m["occurred_at"] = spelled.s })
		e, err := Decode(b)
		if err != nil {
			t.Errorf("%s: %v", spelled.s, err)
			continue
		}
		if !e.OccurredAt.Equal(want.Add(spelled.frac)) {
			t.Errorf("%s: decoded %v, want %v", spelled.s, e.OccurredAt, want.Add(spelled.frac))
		}
	}
}
