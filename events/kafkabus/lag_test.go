package kafkabus_test

import (
	"strconv"
	"testing"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
)

// TestGroupLag: on a topic with messages, a group that committed nothing lags by each partition's
// whole log (Committed -1); after a commit on partition 0, that partition lags by the rest only.
// A topic that does not exist is an error naming it.
func TestGroupLag(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 2)
	group := kafkatest.Name(t, "lag")
	msgs := make([]kafka.Message, 20)
	for i := range msgs {
		msgs[i] = kafka.Message{Key: []byte("k" + strconv.Itoa(i)), Value: []byte("v")}
	}
	kafkatest.Produce(t, addr, topic, msgs)
	lag := kafkabus.GroupLag([]string{addr}, topic, group)

	got, err := lag(t.Context())
	if err != nil || len(got) != 2 {
		t.Fatalf("GroupLag = %+v, %v; want 2 partitions", got, err)
	}
	var total int64
	for i, p := range got {
		if p.Partition != i || p.Committed != -1 || p.Lag != p.End {
			t.Errorf("partition %d before any commit: %+v, want Committed -1 and Lag == End", i, p)
		}
		total += p.End
	}
	if total != int64(len(msgs)) {
		t.Errorf("end offsets sum to %d, want %d", total, len(msgs))
	}

	c := kafkatest.GroupClient(addr)
	if _, err := c.OffsetCommit(t.Context(), &kafka.OffsetCommitRequest{GroupID: group, GenerationID: -1,
		Topics: map[string][]kafka.OffsetCommit{topic: {{Partition: 0, Offset: 1}}}}); err != nil {
		t.Fatal(err)
	}
	after, err := lag(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if p := after[0]; p.Committed != 1 || p.Lag != got[0].End-1 {
		t.Errorf("partition 0 after committing offset 1: %+v, want Committed 1 and Lag %d", p, got[0].End-1)
	}
	if p := after[1]; p.Committed != -1 || p.Lag != got[1].End {
		t.Errorf("partition 1, never committed: %+v", p)
	}

	missing := kafkatest.Name(t, "missing")
	if _, err := kafkabus.GroupLag([]string{addr}, missing, group)(t.Context()); err == nil {
		t.Errorf("GroupLag on a missing topic: no error")
	}
}
