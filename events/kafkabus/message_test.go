package kafkabus_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// contractEvents are one event of each type, observed in Seoul, with a course name that needs
// escaping neither in JSON nor in the key and one that needs both.
func contractEvents() []events.Event {
	seoul := time.FixedZone("KST", 9*3600)
	at := time.Date(2026, 12, 1, 6, 30, 15, 123456789, seoul)
	p1, p2, four, three := int64(150_000), int64(130_000), 4, 3
	l := events.Listing{Source: "golfzon", CourseName: "레이크 코스", CoursePart: "OUT", RoundDate: "2026-12-05",
		PlayDate: "2026-12-05", TeeTime: "07:12", Values: events.Values{PriceKRW: &p1, Players: &four}}
	changed := l
	changed.PriceKRW, changed.Players = &p2, &three
	odd := events.Listing{Source: "site a", CourseName: `Pine|Hill "West"`, RoundDate: "12/06 (토)",
		PlayDate: "2026-12-06", TeeTime: "13:40"}
	return []events.Event{
		events.OpenedSeq(l, events.Seq{Epoch: "e1", Lifetime: 1}, "golfzon@2026-12-01T06:30:00+09:00", at),
		events.ChangedSeq(l, changed, events.Seq{Epoch: "e1", Lifetime: 1, Change: 1}, "golfzon@2026-12-01T06:40:00+09:00", at.Add(10*time.Minute)),
		events.ClosedSeq(odd, events.Seq{Epoch: "e1", Lifetime: 1}, "site a@2026-12-01T06:50:00Z", at.UTC().Add(20*time.Minute), events.Booked),
	}
}

// TestMessageGolden pins the bytes of the Kafka messages every publishing path sends: the key
// (listing_key), the headers (event_id and the CloudEvents binary-mode ones) and the value, which is
// events.Encode's output unchanged.
func TestMessageGolden(t *testing.T) {
	var out bytes.Buffer
	for _, e := range contractEvents() {
		m, err := kafkabus.Message(e)
		if err != nil {
			t.Fatal(err)
		}
		want, err := events.Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(m.Value, want) || string(m.Key) != e.ListingKey {
			t.Errorf("event %s: key %q value %s, want key %q and value events.Encode's %s", e.EventID, m.Key, m.Value, e.ListingKey, want)
		}
		fmt.Fprintf(&out, "key: %s\n", m.Key)
		for _, h := range m.Headers {
			fmt.Fprintf(&out, "header %s: %s\n", h.Key, h.Value)
		}
		fmt.Fprintf(&out, "value: %s\n\n", m.Value)
		if err := events.CheckCloudEvents(kafkabus.EventsHeaders(m.Headers), e); err != nil {
			t.Errorf("event %s: its own headers do not check: %v", e.EventID, err)
		}
	}
	testkit.Golden(t, filepath.Join("testdata", "messages.golden"), out.Bytes())
}
