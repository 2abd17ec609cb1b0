package events_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

func TestCheckCloudEvents(t *testing.T) {
	price, players := int64(90_000), 4
	e := events.Opened(events.Listing{Source: "golfzon", CourseName: "Lake", RoundDate: "2026-12-05", PlayDate: "2026-12-05",
		TeeTime: "07:12", Values: events.Values{PriceKRW: &price, Players: &players}}, "crawl-1", time.Date(2026, 12, 1, 6, 30, 0, 0, time.UTC))
	good := events.CloudEventHeaders(e)
	with := func(key, value string) []events.Header {
		hs := append([]events.Header(nil), good...)
		for i := range hs {
			if hs[i].Key == key {
				hs[i].Value = []byte(value)
				return hs
			}
		}
		return append(hs, events.Header{Key: key, Value: []byte(value)})
	}
	without := func(key string) []events.Header {
		var hs []events.Header
		for _, h := range good {
			if h.Key != key {
				hs = append(hs, h)
			}
		}
		return hs
	}
	other := e.OccurredAt.Add(time.Second)
	for _, c := range []struct {
		name string
		hs   []events.Header
		want error // nil: accepted
	}{
		{"no headers", nil, nil},
		{"only event_id and content-type", []events.Header{{"event_id", []byte(e.EventID.String())}, {"content-type", []byte("text/plain")}}, nil},
		{"the crawler's", good, nil},
		{"ce_time in another offset", with(events.HeaderCETime, e.OccurredAt.In(time.FixedZone("", -5*3600)).Format(time.RFC3339)), nil},
		{"upper-case ce_id", with(events.HeaderCEID, strings.ToUpper(e.EventID.String())), nil},
		{"ce_id with spaces", with(events.HeaderCEID, " "+e.EventID.String()), events.ErrCEMismatch},
		{"ce_id of another event", with(events.HeaderCEID, "00000000-0000-5000-8000-000000000001"), events.ErrCEMismatch},
		{"ce_type of another type", with(events.HeaderCEType, events.CloudEventType(events.ListingClosed)), events.ErrCEMismatch},
		{"ce_type of another version", with(events.HeaderCEType, "com.github.golfcrawler.listing_opened.v2"), events.ErrCEMismatch},
		{"ce_time another instant", with(events.HeaderCETime, other.Format(time.RFC3339Nano)), events.ErrCEMismatch},
		{"ce_time not a time", with(events.HeaderCETime, "yesterday"), events.ErrCEMismatch},
		{"ce_specversion 0.3", with(events.HeaderCESpecVersion, "0.3"), events.ErrCESpecVersion},
		{"ce_specversion missing", without(events.HeaderCESpecVersion), events.ErrCESpecVersion},
		{"ce_ extension alone", []events.Header{{"ce_traceparent", []byte("x")}}, events.ErrCESpecVersion},
	} {
		err := events.CheckCloudEvents(c.hs, e)
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s: %v, want accepted", c.name, err)
		case c.want != nil && !errors.Is(err, c.want):
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		case c.want != nil && !errors.Is(err, events.ErrMalformed):
			t.Errorf("%s: %v does not wrap ErrMalformed", c.name, err)
		}
	}
}

func TestCloudEventNames(t *testing.T) {
	if got := events.CloudEventType(events.ListingChanged); got != "com.github.golfcrawler.listing_changed.v1" {
		t.Errorf("CloudEventType = %q", got)
	}
	if got := events.CloudEventSource("golfzon"); got != "/golf-crawler/golfzon" {
		t.Errorf("CloudEventSource = %q", got)
	}
}

// BenchmarkCheckCloudEvents is the consumer's per-message cost of checking the crawler's headers.
func BenchmarkCheckCloudEvents(b *testing.B) {
	e := events.Opened(events.Listing{Source: "golfzon", CourseName: "Lake", RoundDate: "2026-12-05", PlayDate: "2026-12-05",
		TeeTime: "07:12"}, "crawl-1", time.Date(2026, 12, 1, 6, 30, 0, 0, time.FixedZone("KST", 9*3600)))
	hs := events.CloudEventHeaders(e)
	b.ReportAllocs()
	for b.Loop() {
		if err := events.CheckCloudEvents(hs, e); err != nil {
			b.Fatal(err)
		}
	}
}
