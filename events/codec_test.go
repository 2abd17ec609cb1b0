package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
)

func ptr[T any](v T) *T { return &v }

var seoul = time.FixedZone("KST", 9*3600)

func sampleListing() Listing {
	return Listing{
		Source: "sim-golf", CourseName: "레이크 CC", CoursePart: "OUT",
		RoundDate: "12/05(토)", PlayDate: "2026-12-05", TeeTime: "07:30",
		Values: Values{PriceKRW: ptr(int64(150000)), Players: ptr(4)},
	}
}

func sampleEvents() []Event {
	l := sampleListing()
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, seoul)
	changed := l
	changed.PriceKRW = ptr(int64(130000))
	return []Event{
		Opened(l, "sim-golf@2026-11-29T10:00:00+09:00", at),
		Changed(l, changed, "sim-golf@2026-11-29T10:10:00+09:00", at.Add(10*time.Minute)),
		Closed(changed, "sim-golf@2026-11-29T10:20:00+09:00", at.Add(20*time.Minute), Booked),
	}
}

// roundTrip encodes e, decodes that, and fails t unless the decoded event encodes to the same
// bytes; it returns the decoded event.
func roundTrip(t *testing.T, e Event) Event {
	t.Helper()
	b, err := Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	b2, _ := Encode(got)
	if string(b) != string(b2) {
		t.Fatalf("Decode(Encode(e)) changed the event:\n%s\n%s", b, b2)
	}
	return got
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	t.Parallel()
	for _, e := range sampleEvents() {
		got := roundTrip(t, e)
		if !got.OccurredAt.Equal(e.OccurredAt) {
			t.Fatalf("occurred_at %v != %v", got.OccurredAt, e.OccurredAt)
		}
	}
}

func TestEncodedFieldNames(t *testing.T) {
	t.Parallel()
	b, _ := Encode(sampleEvents()[1])
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"event_id", "event_type", "schema_version", "occurred_at", "crawl_id", "source",
		"listing_key", "course_name", "course_part", "round_date", "play_date", "tee_time", "price_krw", "players", "previous"} {
		if _, ok := m[f]; !ok {
			t.Errorf("encoded changed event lacks %q: %s", f, b)
		}
	}
	if _, ok := m["close_reason"]; ok {
		t.Errorf("changed event carries close_reason: %s", b)
	}
	if !strings.Contains(string(b), `"occurred_at":"2026-11-29T10:10:00.000000+09:00"`) {
		t.Errorf("occurred_at is not RFC 3339 at +09:00 with microseconds: %s", b)
	}
}

// mutate encodes a valid opened event as a map, applies f, and re-encodes it.
func mutate(t *testing.T, f func(m map[string]any)) []byte {
	t.Helper()
	b, _ := Encode(sampleEvents()[0])
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"NotJSON", []byte("{not json"), ErrNotJSON},
		{"Empty", []byte(""), ErrNotJSON},
		{"Array", []byte("[]"), ErrNotJSON},
		{"UnknownType", mutate(t, func(m map[string]any) { m["event_type"] = "listing_exploded" }), ErrUnknownType},
		{"MissingID", mutate(t, func(m map[string]any) { delete(m, "event_id") }), ErrMissingID},
		{"NilID", mutate(t, func(m map[string]any) { m["event_id"] = uuid.Nil.String() }), ErrMissingID},
		{"BadID", mutate(t, func(m map[string]any) { m["event_id"] = "not-a-uuid" }), ErrNotJSON},
		{"ImpossibleDate", mutate(t, func(m map[string]any) { m["play_date"] = "2026-02-30" }), ErrBadDate},
		{"YearlessDate", mutate(t, func(m map[string]any) { m["play_date"] = "12/05" }), ErrBadDate},
		{"BadTime", mutate(t, func(m map[string]any) { m["tee_time"] = "25:99" }), ErrBadTime},
		{"SecondsInTime", mutate(t, func(m map[string]any) { m["tee_time"] = "07:30:00" }), ErrBadTime},
		{"WrongType", mutate(t, func(m map[string]any) { m["price_krw"] = "150,000원" }), ErrNotJSON},
		{"UnknownField", mutate(t, func(m map[string]any) { m["surprise"] = 1 }), ErrNotJSON},
		{"SchemaVersion", mutate(t, func(m map[string]any) { m["schema_version"] = 2 }), ErrSchemaVersion},
		{"MissingSource", mutate(t, func(m map[string]any) { delete(m, "source") }), ErrMissingField},
		{"MissingOccurredAt", mutate(t, func(m map[string]any) { delete(m, "occurred_at") }), ErrMissingField},
		{"KeyMismatch", mutate(t, func(m map[string]any) { m["listing_key"] = "x|y|z|2026-12-05|07:30" }), ErrKeyMismatch},
		{"NegativePrice", mutate(t, func(m map[string]any) { m["price_krw"] = -1 }), ErrInvalidField},
		{"CloseReasonOnOpen", mutate(t, func(m map[string]any) { m["close_reason"] = "booked" }), ErrUnexpectedNull},
		{"ClosedWithoutReason", mutate(t, func(m map[string]any) { m["event_type"] = "listing_closed" }), ErrInvalidField},
		{"ChangedWithoutPrevious", mutate(t, func(m map[string]any) { m["event_type"] = "listing_changed" }), ErrMissingField},
		{"TrailingData", append(mutate(t, func(map[string]any) {}), []byte(` {"a":1}`)...), ErrTrailingData},
		{"InvalidUTF8", []byte("{\"source\":\"\xff\xfe\"}"), ErrInvalidUTF8},
		{"TooLarge", []byte(`{"course_name":"` + strings.Repeat("a", MaxEventBytes) + `"}`), ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Decode(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Decode: got %v, want %v", err, tt.want)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
		})
	}
}

func TestFieldErrorNamesTheField(t *testing.T) {
	t.Parallel()
	_, err := Decode(mutate(t, func(m map[string]any) { m["play_date"] = "2026-02-30" }))
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "play_date" || fe.Value != "2026-02-30" {
		t.Fatalf("got %#v", err)
	}
	if !strings.Contains(err.Error(), `play_date="2026-02-30"`) {
		t.Fatalf("message does not name the field and value: %v", err)
	}
}

func TestEventIDs(t *testing.T) {
	t.Parallel()
	a, b := sampleEvents(), sampleEvents()
	seen := map[uuid.UUID]bool{}
	for i := range a {
		if a[i].EventID != b[i].EventID {
			t.Fatalf("the same transition got two ids: %s %s", a[i].EventID, b[i].EventID)
		}
		if a[i].EventID.Version() != 5 {
			t.Fatalf("id %s is not name-based (v5)", a[i].EventID)
		}
		if seen[a[i].EventID] {
			t.Fatalf("two transitions share id %s", a[i].EventID)
		}
		seen[a[i].EventID] = true
	}
	l := sampleListing()
	other := l
	other.Players = ptr(3)
	cases := map[string]uuid.UUID{
		"same crawl, changed price": NewID(l.Key(), ListingChanged, "c1", ptr(int64(1)), l.Players),
		"same crawl, changed again": NewID(l.Key(), ListingChanged, "c1", ptr(int64(2)), l.Players),
		"players change":            NewID(l.Key(), ListingChanged, "c1", ptr(int64(1)), other.Players),
		"opened":                    NewID(l.Key(), ListingOpened, "c1", nil, nil),
		"reopened, later crawl":     NewID(l.Key(), ListingOpened, "c2", nil, nil),
		"closed":                    NewID(l.Key(), ListingClosed, "c1", nil, nil),
		"other listing":             NewID(other.Key()+"x", ListingOpened, "c1", nil, nil),
	}
	ids := map[uuid.UUID]string{}
	for name, id := range cases {
		if prev, dup := ids[id]; dup {
			t.Fatalf("%q and %q share id %s", name, prev, id)
		}
		ids[id] = name
	}
}

func TestListingKeyFoldsWhiteSpace(t *testing.T) {
	t.Parallel()
	a := ListingKey(" sim ", "레이크  CC", "", "2026-12-05", "07:30")
	b := ListingKey("sim", "레이크 CC", " ", "2026-12-05", "07:30")
	if a != b || a != "sim|레이크 CC||2026-12-05|07:30" {
		t.Fatalf("keys differ: %q %q", a, b)
	}
}

func FuzzDecode(f *testing.F) {
	for _, e := range sampleEvents() {
		b, _ := Encode(e)
		f.Add(b)
	}
	f.Add([]byte(`{"event_id":"00000000-0000-0000-0000-000000000000"}`))
	f.Add([]byte("{\"source\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		e, err := Decode(in)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("decoded event fails validation: %v", err)
		}
		roundTrip(t, e)
	})
}

// decodeStd is Decode as it was with encoding/json: the reference FuzzDecodeAgreesWithEncodingJSON
// holds the faster parser to.
func decodeStd(b []byte) (Event, error) {
	var e Event
	if len(b) > MaxEventBytes || !utf8.Valid(b) {
		return e, ErrMalformed
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Event{}, ErrTrailingData
	}
	if err := exactNames(b); err != nil {
		return Event{}, err
	}
	if err := e.Validate(); err != nil {
		return Event{}, err
	}
	return e, nil
}

// exactNames rejects an event (already decoded by encoding/json, so well formed) whose field
// names, or previous's, differ from the contract's in case: encoding/json matches them
// case-insensitively, Decode does not.
func exactNames(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	names := map[string]bool{}
	for _, f := range wireFields(reflect.TypeFor[Event]()) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		names[name] = true
	}
	for k := range m {
		if !names[k] {
			return fmt.Errorf("%w: unknown field %q", ErrNotJSON, k)
		}
	}
	var prev map[string]json.RawMessage
	if p, ok := m["previous"]; ok && json.Unmarshal(p, &prev) == nil {
		for k := range prev {
			if k != "price_krw" && k != "players" {
				return fmt.Errorf("%w: unknown field %q", ErrNotJSON, k)
			}
		}
	}
	return nil
}

// Decode accepts exactly what encoding/json (Decoder, DisallowUnknownFields, nothing after the
// object) accepts, and decodes it to the same event.
func FuzzDecodeAgreesWithEncodingJSON(f *testing.F) {
	for _, e := range sampleEvents() {
		b, _ := Encode(e)
		f.Add(b)
		s := string(b)
		for _, variant := range []string{
			s + " \n", s + "{}", s + "x", " " + s, strings.Replace(s, `"event_id"`, `"EVENT_ID"`, 1),
			strings.Replace(s, `"source":`, `"source":"x","source":`, 1), strings.Replace(s, `"players":`, `"players":null,"players":`, 1),
			strings.Replace(s, `{`, `{"extra":1,`, 1), strings.Replace(s, `"schema_version":1`, `"schema_version":1.0`, 1),
			strings.Replace(s, `"schema_version":1`, `"schema_version":"1"`, 1), strings.Replace(s, `"schema_version":1`, `"schema_version":1e0`, 1),
			strings.Replace(s, `"source":"`, `"source":"\u0041\ud800`, 1), strings.Replace(s, `"source":"`, `"source":"\\u0000`, 1),
			strings.Replace(s, `"course_name":"`, `"course_name":"\\"\\/\\b\\f\\n\\r\\t`, 1),
			strings.Replace(s, `"occurred_at":"`, `"occurred_at":"2026-13-01T00:00:00Z","x":"`, 1),
			strings.Replace(s, `"event_id":"`, `"event_id":"{`, 1), strings.ReplaceAll(s, `:`, ` : `),
			strings.Replace(s, `"price_krw":`, `"price_krw":99999999999999999999,"y":`, 1),
			strings.Replace(s, `"previous":{`, `"previous":{"z":1,`, 1), `null`, `[]`, `{}`, `{"event_id":null}`, `"x"`, ``,
		} {
			f.Add([]byte(variant))
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Decode(in)
		want, wantErr := decodeStd(in)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("Decode(%q): err = %v, encoding/json says %v", in, err, wantErr)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		g, _ := Encode(got)
		w, _ := Encode(want)
		if !bytes.Equal(g, w) || !got.OccurredAt.Equal(want.OccurredAt) {
			t.Fatalf("Decode(%q) =\n%s\nencoding/json:\n%s", in, g, w)
		}
	})
}

// BenchmarkDecode times Decode and the encoding/json decoder it replaced on the same events,
// side by side: decoding is part of the consumer's CPU budget.
//
//	go test ./events/ -run '^$' -bench Decode
func BenchmarkDecode(b *testing.B) {
	var msgs [][]byte
	for _, e := range sampleEvents() {
		v, err := Encode(e)
		if err != nil {
			b.Fatal(err)
		}
		msgs = append(msgs, v)
	}
	per := func(decode func([]byte) (Event, error)) time.Duration {
		const rounds = 2000
		start := time.Now()
		for range rounds {
			for _, m := range msgs {
				if _, err := decode(m); err != nil {
					b.Fatal(err)
				}
			}
		}
		return time.Since(start) / time.Duration(rounds*len(msgs))
	}
	for b.Loop() {
		fast, std := per(Decode), per(decodeStd)
		b.ReportMetric(float64(fast.Nanoseconds()), "decode_ns/event")
		b.ReportMetric(float64(std.Nanoseconds()), "encoding_json_ns/event")
		b.ReportMetric(float64(std)/float64(fast), "speedup")
	}
}
