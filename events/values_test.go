package events

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// The wire bytes of a Listing (the crawler's snapshots hold them) and of an Event through both
// decoders are pinned here, so that how the values are declared in Go (flat fields, an embedded
// struct) cannot change a byte of either.
func TestWireBytesOfListingAndEvent(t *testing.T) {
	t.Parallel()
	const listing = `{"source":"sim-golf","course_name":"레이크 CC","course_part":"OUT","round_date":"12/05(토)","play_date":"2026-12-05","tee_time":"07:30","price_krw":150000,"players":4,"url":"https://example.test/x"}`
	const unknown = `{"source":"sim-golf","course_name":"레이크 CC","round_date":"12/05(토)","play_date":"2026-12-05","tee_time":"07:30","price_krw":null,"players":null}`
	for _, want := range []string{listing, unknown} {
		var l Listing
		if err := json.Unmarshal([]byte(want), &l); err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(l)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Errorf("listing:\n got %s\nwant %s", b, want)
		}
	}
	var l Listing
	if err := json.Unmarshal([]byte(listing), &l); err != nil {
		t.Fatal(err)
	}
	if l.PriceKRW == nil || *l.PriceKRW != 150000 || l.Players == nil || *l.Players != 4 {
		t.Fatalf("listing's values not read: %+v", l)
	}

	at := time.Date(2026, 11, 29, 19, 0, 0, 0, time.FixedZone("", 9*3600)) // as a decoder reads +09:00
	cheaper, three := int64(130000), 3
	next := l
	next.PriceKRW, next.Players = &cheaper, &three
	const changed = `{"event_id":"cadc8bc3-f427-5bd1-9bff-95993c88596f","event_type":"listing_changed","schema_version":1,"occurred_at":"2026-11-29T19:00:00.000000+09:00","crawl_id":"c1","source":"sim-golf","listing_key":"sim-golf|레이크 CC|OUT|2026-12-05|07:30","course_name":"레이크 CC","course_part":"OUT","round_date":"12/05(토)","play_date":"2026-12-05","tee_time":"07:30","price_krw":130000,"players":3,"previous":{"price_krw":150000,"players":4}}`
	built := Changed(l, next, "c1", at)
	for name, decode := range map[string]func([]byte) (Event, error){
		"Decode": Decode,
		"encoding/json": func(b []byte) (Event, error) {
			var e Event
			err := json.Unmarshal(b, &e)
			return e, err
		},
	} {
		e, err := decode([]byte(changed))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(e, built) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, e, built)
		}
		b, err := Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != changed {
			t.Errorf("%s, encoded again:\n got %s\nwant %s", name, b, changed)
		}
	}
}

// Differ compares every field of Values, by reflection over the struct: a field added to Values
// and left out of Differ fails here.
func TestDifferComparesEveryValue(t *testing.T) {
	t.Parallel()
	set := func(v *Values, field int, n int64) {
		f := reflect.ValueOf(v).Elem().Field(field)
		p := reflect.New(f.Type().Elem())
		p.Elem().Set(reflect.ValueOf(n).Convert(f.Type().Elem()))
		f.Set(p)
	}
	fields := reflect.TypeFor[Values]().NumField()
	var base Values
	for i := range fields {
		if reflect.TypeFor[Values]().Field(i).Type.Kind() != reflect.Pointer {
			t.Fatalf("Values.%s is not a pointer: every value may be unknown (null)", reflect.TypeFor[Values]().Field(i).Name)
		}
		set(&base, i, 1)
	}
	if base.Differ(base) || (Values{}).Differ(Values{}) {
		t.Fatal("equal values differ")
	}
	for i := range fields {
		name := reflect.TypeFor[Values]().Field(i).Name
		other := base
		set(&other, i, 2)
		unknown := base
		reflect.ValueOf(&unknown).Elem().Field(i).SetZero()
		if !base.Differ(other) || !other.Differ(base) {
			t.Errorf("%s 1 -> 2 is no change", name)
		}
		if !base.Differ(unknown) || !unknown.Differ(base) {
			t.Errorf("%s 1 -> null is no change", name)
		}
	}
}

// wireFields are rt's fields as encoding/json sees them: an embedded struct's (Values) in its place,
// the embedded field itself not.
func wireFields(rt reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(rt) {
		if !f.Anonymous {
			out = append(out, f)
		}
	}
	return out
}

// build copies every field a Listing and an Event share: each of the Listing's fields set (by
// reflection, so a field added to both is covered) is set in the event it builds. A field only a
// Listing has (URL) is not part of the event.
func TestBuildCopiesEveryListingField(t *testing.T) {
	t.Parallel()
	var l Listing
	lv := reflect.ValueOf(&l).Elem()
	for _, f := range wireFields(lv.Type()) {
		fv := lv.FieldByIndex(f.Index)
		switch fv.Kind() {
		case reflect.String:
			fv.SetString("x")
		case reflect.Pointer:
			p := reflect.New(f.Type.Elem())
			p.Elem().Set(reflect.ValueOf(1).Convert(f.Type.Elem()))
			fv.Set(p)
		default:
			t.Fatalf("Listing.%s: set a %s here", f.Name, fv.Kind())
		}
	}
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	for _, e := range []Event{Opened(l, "c", at), Changed(l, l, "c", at), Closed(l, "c", at, Booked)} {
		ev := reflect.ValueOf(e)
		for _, f := range wireFields(lv.Type()) {
			if f.Name == "URL" {
				continue
			}
			got := ev.FieldByName(f.Name)
			if !got.IsValid() {
				t.Errorf("Listing.%s has no field in Event (only URL is the listing's alone)", f.Name)
			} else if got.IsZero() {
				t.Errorf("%s: build does not copy Listing.%s: it is always null", e.EventType, f.Name)
			}
		}
	}
}
