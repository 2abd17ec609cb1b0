package consumer_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/consumer"
	"github.com/golfcrawler/golf-crawler/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// TestWalkingSkeleton is the thinnest slice through the real parts: events go through the
// crawler's production publisher (kafkabus.NewPublisher: bounded queue, background writer, acks
// from all replicas) to the stack's Kafka broker, a consumer group (consumer.Run) stores them in
// PostgreSQL, and they are read back: every event once, byte for byte as published.
func TestWalkingSkeleton(t *testing.T) {
	t.Parallel()
	addr, topic, db := onStack(t, 3)

	evs := testEvents(300, "skeleton")
	pub := kafkabus.NewPublisher(kafkabus.PublisherConfig{
		Brokers: []string{addr}, Topic: topic, RetryWindow: 30 * time.Second, Logger: testkit.Logger(t, slog.LevelInfo),
	})
	for _, e := range evs {
		pub.Publish(e)
	}
	if err := pub.Close(t.Context()); err != nil {
		t.Fatalf("publisher close: %v", err)
	}
	st := pub.(interface {
		Stats() kafkabus.PublisherStats
	}).Stats()
	if st.Published != int64(len(evs)) || st.Failed != 0 || st.Dropped != 0 {
		t.Fatalf("publisher stats %+v, want all %d published", st, len(evs))
	}

	c := consumertest.Start(t, t.Context(), newChecked(t, addr, topic, kafkatest.Name(t, "g"), db), store.New(db), consumer.Config{BatchSize: 100})
	testkit.WaitFor(t, 30*time.Second, "every event stored", func() bool { return c.Metrics.Inserted.Load() >= int64(len(evs)) })
	c.Stop(t)

	var buf bytes.Buffer
	n, err := store.New(db).Export(t.Context(), &buf, store.ExportFilter{})
	if err != nil || n != len(evs) {
		t.Fatalf("export: %d events, err %v; want %d", n, err, len(evs))
	}
	want := map[string]events.Event{}
	for _, e := range evs {
		want[e.EventID.String()] = e
	}
	dec := json.NewDecoder(&buf)
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		got, err := events.Decode(raw)
		if err != nil {
			t.Fatalf("stored payload does not decode: %v", err)
		}
		w, ok := want[got.EventID.String()]
		if !ok {
			t.Fatalf("stored an event that was never published: %s", got.EventID)
		}
		delete(want, got.EventID.String())
		wb, _ := events.Encode(w)
		gb, _ := events.Encode(got)
		if !bytes.Equal(wb, gb) {
			t.Errorf("event %s changed on the way:\npublished %s\nstored    %s", got.EventID, wb, gb)
		}
	}
	if len(want) != 0 {
		t.Fatalf("%d published events were not stored", len(want))
	}
}
