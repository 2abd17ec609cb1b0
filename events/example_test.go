package events_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// Decode reads one message value strictly: a valid event comes back whole, anything else is an
// error wrapping ErrMalformed (the consumer dead-letters it), with a FieldError naming the field
// when one field is wrong.
func ExampleDecode() {
	price, players := int64(150_000), 4
	l := events.Listing{Source: "sim-golf", CourseName: "Lake", CoursePart: "East", RoundDate: "2026-05-02",
		PlayDate: "2026-05-02", TeeTime: "07:12", Values: events.Values{PriceKRW: &price, Players: &players}}
	value, err := events.Encode(events.Opened(l, "sim-golf@2026-05-01T10:00:00+09:00", time.Date(2026, 5, 1, 1, 0, 0, 0, time.UTC)))
	if err != nil {
		fmt.Println(err)
		return
	}

	e, err := events.Decode(value)
	fmt.Println(e.EventType, e.ListingKey == l.Key(), *e.PriceKRW, err)

	_, err = events.Decode([]byte(`{"event_id":"5f0c6b5e-8e4e-4d55-9a0e-3a4f1f0d2c11","event_type":"listing_sold","schema_version":1}`))
	var fe *events.FieldError
	fmt.Println(errors.Is(err, events.ErrMalformed), errors.As(err, &fe), fe.Field, fe.Value)

	_, err = events.Decode([]byte(`not json`))
	fmt.Println(errors.Is(err, events.ErrNotJSON))
	// Output:
	// listing_opened true 150000 <nil>
	// true true event_type listing_sold
	// true
}
