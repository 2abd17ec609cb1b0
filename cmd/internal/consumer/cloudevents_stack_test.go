package consumer_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// TestCloudEventsHeaders: the consumer stores events with the crawler's CloudEvents headers and
// without any; a message whose ce_ headers disagree with its body (id, type, time) or name an
// unknown ce_specversion is a dead letter with that reason and its headers kept, and dead retry,
// checking the kept headers again, leaves it dead.
func TestCloudEventsHeaders(t *testing.T) {
	t.Parallel()
	evs := testEvents(12, "ce")
	var valid []kafka.Message
	for i, e := range evs[:8] {
		m, err := kafkabus.Message(e)
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			m = kafkatest.Encode(t, []events.Event{e})[0] // no headers at all
		}
		valid = append(valid, m)
	}
	tamper := []struct {
		header, value, reason string
	}{
		{events.HeaderCEID, evs[0].EventID.String(), "ce_id"},
		{events.HeaderCEType, events.CloudEventType(events.ListingClosed), "ce_type"},
		{events.HeaderCETime, evs[10].OccurredAt.Add(time.Hour).Format(time.RFC3339), "ce_time"},
		{events.HeaderCESpecVersion, "0.3", "ce_specversion"},
	}
	var bad []kafka.Message
	for i, c := range tamper {
		m, err := kafkabus.Message(evs[8+i])
		if err != nil {
			t.Fatal(err)
		}
		for j := range m.Headers {
			if m.Headers[j].Key == c.header {
				m.Headers[j].Value = []byte(c.value)
			}
		}
		bad = append(bad, m)
	}
	dead := deadLetteredBetween(t, valid, bad, 5, 30*time.Second)
	for i, d := range dead {
		if !strings.Contains(d.err, "CloudEvents header") || !strings.Contains(d.err, tamper[i].reason) {
			t.Errorf("dead letter at offset %d: reason %q, want the CloudEvents %s", d.offset, d.err, tamper[i].reason)
		}
		if string(d.raw) != string(bad[i].Value) {
			t.Errorf("dead letter at offset %d keeps %s, want the value as sent", d.offset, d.raw)
		}
	}
}

// TestCloudEventsDeadLettersKeepHeaders: a dead letter's headers are kept byte for byte (a value
// that is not UTF-8 too) and dead retry checks them again: with a disagreeing ce_id it stays.
func TestCloudEventsDeadLettersKeepHeaders(t *testing.T) {
	t.Parallel()
	addr, topic, db := onStack(t, 1)
	evs := testEvents(2, "cekeep")
	m, err := kafkabus.Message(evs[1])
	if err != nil {
		t.Fatal(err)
	}
	m.Headers = append(m.Headers, kafka.Header{Key: "trace", Value: []byte("\xff\x00bin")})
	for j := range m.Headers {
		if m.Headers[j].Key == events.HeaderCEID {
			m.Headers[j].Value = []byte(evs[0].EventID.String())
		}
	}
	kafkatest.Produce(t, addr, topic, []kafka.Message{m})
	r := newChecked(t, addr, topic, kafkatest.Name(t, "g"), db)
	c := consumertest.Start(t, t.Context(), r, store.New(db), consumer.Config{BatchSize: 5})
	testkit.WaitFor(t, 30*time.Second, "the message committed", func() bool { _, n := r.stats(); return n == 1 })
	c.Stop(t)

	s := store.New(db)
	ds, err := s.DeadLetters(t.Context(), store.DeadFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 {
		t.Fatalf("%d dead letters, want 1", len(ds))
	}
	if got, want := headersText(ds[0].Headers), headersText(kafkabus.EventsHeaders(m.Headers)); !ds[0].HeadersKept || got != want {
		t.Errorf("dead letter headers (kept %v)\n %s\nwant\n %s", ds[0].HeadersKept, got, want)
	}
	res, err := s.RetryDead(t.Context(), store.DeadFilter{}, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StillBad != 1 || res.Redriven != 0 {
		t.Errorf("dead retry: %+v, want it still bad (its ce_id disagrees)", res)
	}
	if ds, _ = s.DeadLetters(t.Context(), store.DeadFilter{}); len(ds) != 1 || !strings.Contains(ds[0].Error, "ce_id") {
		t.Errorf("after retry: %+v, want the dead letter kept with the ce_id reason", ds)
	}
}

func headersText(hs []events.Header) string {
	var b strings.Builder
	for _, h := range hs {
		fmt.Fprintf(&b, "%s=%q ", h.Key, h.Value)
	}
	return b.String()
}
