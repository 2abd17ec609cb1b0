package kafkabus_test

import (
	"context"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/events/spool"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

func spoolBatch(t *testing.T, sp *spool.Spool, evs []events.Event) {
	t.Helper()
	b, err := sp.Prepare("test", evs)
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Commit(b); err != nil {
		t.Fatal(err)
	}
}

// TestSpoolPublisherSendsOnceAndResumes: what the spool holds reaches the topic, acknowledged;
// after a restart only what came after the cursor is sent, so the topic holds each event once.
func TestSpoolPublisherSendsOnceAndResumes(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 1)
	dir := t.TempDir()
	log, _ := newLogger()
	cfg := kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic, Logger: log}
	evs := testEvents(300, 30)
	for round := range 2 {
		sp, err := spool.Open(dir, spool.Options{Retain: true, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		pub := kafkabus.NewSpoolPublisher(cfg, sp)
		part := evs[round*150 : (round+1)*150]
		spoolBatch(t, sp, part[:100])
		spoolBatch(t, sp, part[100:])
		testkit.WaitFor(t, 30*time.Second, "the spool sent", func() bool { return sp.Stats().Unsent == 0 })
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		if err := pub.Close(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := sp.Close(); err != nil {
			t.Fatal(err)
		}
	}
	msgs := readPartition(t, addr, topic, 0)
	seen := map[string]int{}
	for _, m := range msgs {
		seen[string(m.Headers[0].Value)]++
	}
	if len(msgs) != 300 || len(seen) != 300 {
		t.Fatalf("topic holds %d messages of %d ids, want 300 once each", len(msgs), len(seen))
	}
}

// TestSpoolPublisherKeepsEverythingWhileUnreachable: with no broker answering, nothing is lost
// whatever the time; Close leaves the events in the spool, and a publisher started on the
// same spool once a broker answers sends every one.
func TestSpoolPublisherKeepsEverythingWhileUnreachable(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 1)
	dir := t.TempDir()
	log, _ := newLogger()
	sp, err := spool.Open(dir, spool.Options{Retain: true, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	down := kafkabus.NewSpoolPublisher(kafkabus.PublisherConfig{Brokers: []string{testkit.FreeAddr(t)}, Topic: topic, Logger: log}, sp)
	spoolBatch(t, sp, testEvents(50, 10))
	testkit.WaitFor(t, 20*time.Second, "a failed call", func() bool { c, _ := down.Failing(); return c == "unreachable" })
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	if err := down.Close(ctx); err == nil {
		t.Error("Close with the broker down and events unsent returned nil")
	}
	cancel()
	if st := sp.Stats(); st.Unsent != 50 || st.OldestUnsent.IsZero() {
		t.Fatalf("after an outage: %+v, want the 50 unsent", st)
	}
	up := kafkabus.NewSpoolPublisher(kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic, Logger: log}, sp)
	testkit.WaitFor(t, 30*time.Second, "the spool sent", func() bool { return sp.Stats().Unsent == 0 })
	ctx, cancel = context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := up.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if msgs := readPartition(t, addr, topic, 0); len(msgs) != 50 {
		t.Errorf("topic holds %d messages, want 50", len(msgs))
	}
}
