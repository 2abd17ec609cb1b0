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

	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	cheaper, three := int64(130000), 3
	next := l
	next.PriceKRW, next.Players = &cheaper, &three
	const changed = `{"event_id":"cadc8bc3-f427-5bd1-9bff-95993c88596f","event_type":"listing_changed","schema_version":1,"occurred_at":"2026-11-29T10:00:00Z","crawl_id":"c1","source":"sim-golf","listing_key":"sim-golf|레이크 CC|OUT|2026-12-05|07:30","course_name":"레이크 CC","course_part":"OUT","round_date":"12/05(토)","play_date":"2026-12-05","tee_time":"07:30","price_krw":130000,"players":3,"previous":{"price_krw":150000,"players":4}}`
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
