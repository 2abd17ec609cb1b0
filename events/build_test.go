package events

import (
	"encoding/json"
	"testing"
	"time"
)

// TestConstructorsGolden pins the constructors' events, ids included, as JSON: moving or
// restructuring them must not change a byte (ids are stored and deduplicated on; a changed
// id is a duplicate event downstream).
func TestConstructorsGolden(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	price, players := int64(150000), 4
	l := Listing{Source: " sim-golf ", CourseName: "레이크  CC", CoursePart: "OUT", RoundDate: "12/05(토)",
		PlayDate: "2026-12-05", TeeTime: "07:30", Values: Values{PriceKRW: &price, Players: &players}, URL: "https://example.test/x"}
	cheaper, three := int64(130000), 3
	next := l
	next.PriceKRW, next.Players = &cheaper, &three
	unknown := l
	unknown.PriceKRW, unknown.Players = nil, nil
	s := Seq{Epoch: "sim-golf@2026-11-29T19:00:00+09:00", Lifetime: 2, Change: 3}
	for _, c := range []struct {
		name string
		e    Event
		want string
	}{
		{"Opened", Opened(l, "c1", at), `{"event_id":"2a037770-bd7e-53c3-b77c-311b9059494c","event_type":"listing_opened","schema_version":1,"occurred_at":"2026-11-29T19:00:00.000000+09:00","crawl_id":"c1","source":"sim-golf","listing_key":"sim-golf|레이크 CC|OUT|2026-12-05|07:30","course_name":"레이크 CC","course_part":"OUT","round_date":"12/05(토)","play_date":"2026-12-05","tee_time":"07:30","price_krw":150000,"players":4}`},
		{"Changed", Changed(l, next, "c1", at), `{"event_id":"cadc8bc3-f427-5bd1-9bff-95993c88596f","event_type":"listing_changed","schema_version":1,"occurred_at":"2026-11-29T19:00:00.000000+09:00","crawl_id":"c1","source":"sim-golf","listing_key":"sim-golf|레이크 CC|OUT|2026-12-05|07:30","course_name":"레이크 CC","course_part":"OUT","round_date":"12/05(토)","play_date":"2026-12-05","tee_time":"07:30","price_krw":130000,"players":3,"previous":{"price_krw":150000,"players":4}}`},
		{"ChangedToUnknown", Changed(l, unknown, "c1", at), `{"event_id":"431f81ba-8214-5946-a216-ae879e3f7527","event_type":"listing_changed","schema_version":1,"occurred_at":"2026-11-29T19:00:00.000000+09:00","crawl_id":"c1","source":"sim-golf","listing_key":"sim-golf|레이크 CC|OUT|2026-12-05|07:30","course_name":"레이크 CC","course_part":"OUT","round_date":"12/05(토)","play_date":"2026-12-05","tee_time":"07:30","price_krw":null,"players":null,"previous":{"price_krw":150000,"players":4}}`},
		{"Closed", Closed(l, "c1", at, Booked), `{"event_id":"fffb8d9d-4d0a-5115-a73a-cd06ea977358","event_type":"listing_closed","schema_version":1,"occurred_at":"2026-11-29T19:00:00.000000+09:00","crawl_id":"c1","source":"sim-golf","listing_key":"sim-golf|레이크 CC|OUT|2026-12-05|07:30","course_name":"레이크 CC","course_part":"OUT","round_date":"12/05(토)","play_date":"2026-12-05","tee_time":"07:30","price_krw":150000,"players":4,"close_reason":"booked"}`},
		{"OpenedSeq", OpenedSeq(l, s, "c1", at), `{"event_id":"91ae269a-eeec-5aaf-a92c-32aa73e5edc8","event_type":"listing_opened","schema_version":1,"occurred_at":"2026-11-29T19:00:00.000000+09:00","crawl_id":"c1","source":"sim-golf","listing_key":"sim-golf|레이크 CC|OUT|2026-12-05|07:30","course_name":"레이크 CC","course_part":"OUT","round_date":"12/05(토)","play_date":"2026-12-05","tee_time":"07:30","price_krw":150000,"players":4}`},
		{"ChangedSeq", ChangedSeq(l, next, s, "c1", at), `{"event_id":"c9bad83c-3bec-55cf-ac83-ed29d532f39d","event_type":"listing_changed","schema_version":1,"occurred_at":"2026-11-29T19:00:00.000000+09:00","crawl_id":"c1","source":"sim-golf","listing_key":"sim-golf|레이크 CC|OUT|2026-12-05|07:30","course_name":"레이크 CC","course_part":"OUT","round_date":"12/05(토)","play_date":"2026-12-05","tee_time":"07:30","price_krw":130000,"players":3,"previous":{"price_krw":150000,"players":4}}`},
		{"ClosedSeq", ClosedSeq(unknown, s, "c1", at, Expired), `{"event_id":"6f4cea04-a4d8-52c7-80e4-17348f49d943","event_type":"listing_closed","schema_version":1,"occurred_at":"2026-11-29T19:00:00.000000+09:00","crawl_id":"c1","source":"sim-golf","listing_key":"sim-golf|레이크 CC|OUT|2026-12-05|07:30","course_name":"레이크 CC","course_part":"OUT","round_date":"12/05(토)","play_date":"2026-12-05","tee_time":"07:30","price_krw":null,"players":null,"close_reason":"expired"}`},
	} {
		b, err := json.Marshal(c.e)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, b, c.want)
		}
		if err := c.e.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
