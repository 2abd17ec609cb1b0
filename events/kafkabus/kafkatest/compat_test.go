package kafkatest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
)

// TestGroupResumesFromCommittedOffset proves kafka-go v0.4.51 against the stack's broker (Kafka 4.1):
// produce with acks=all, consume with a consumer group, commit part of what was read, close, reopen
// the same group, and see it resume exactly after the commit.
func TestGroupResumesFromCommittedOffset(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 1)
	group := kafkatest.Name(t, "g")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	// A Transport of its own: the global one caches metadata from earlier tests in this process,
	// without this fresh topic, and would answer Unknown Topic Or Partition for its TTL.
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, RequiredAcks: kafka.RequireAll, BatchTimeout: time.Millisecond,
		Transport: &kafka.Transport{DialTimeout: 5 * time.Second}}
	defer w.Close()
	var msgs []kafka.Message
	for i := range 20 {
		msgs = append(msgs, kafka.Message{Key: []byte("k"), Value: []byte(fmt.Sprint(i))})
	}
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatalf("produce: %v", err)
	}

	open := func() *kafka.Reader {
		return kafka.NewReader(kafkabus.GroupReaderConfig(kafkabus.GroupReaderOptions{Brokers: []string{addr}, Topic: topic, Group: group}))
	}
	r := open()
	var first []kafka.Message
	for range 10 {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("fetch: %v", err)
		}
		first = append(first, m)
	}
	if string(first[0].Value) != "0" {
		t.Fatalf("a new group started at %q, want the first message", first[0].Value)
	}
	if err := r.CommitMessages(ctx, first[:7]...); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	r = open()
	defer r.Close()
	m, err := r.FetchMessage(ctx)
	if err != nil {
		t.Fatalf("fetch after reopen: %v", err)
	}
	if m.Offset != 7 || string(m.Value) != "7" {
		t.Fatalf("reopened group resumed at offset %d (%q), want 7: the commit of 0..6 was not honoured", m.Offset, m.Value)
	}
}
