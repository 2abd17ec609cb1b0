package kafkabus_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
)

// groupReader is what the consumer loop uses of the production group reader.
type groupReader interface {
	FetchMessage(ctx context.Context) (kafka.Message, error)
	CommitMessages(ctx context.Context, msgs ...kafka.Message) error
	Close() error
}

func openGroupReader(t *testing.T, addr, topic, group string) groupReader {
	r, err := kafkabus.NewGroupReader(kafkabus.GroupReaderOptions{Brokers: []string{addr}, Topic: topic, Group: group})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestStaleCommitAfterRebalanceDoesNotRewindTheGroup: member A fetches from both partitions and
// holds the messages (a batch in flight); B joins, the group rebalances, B takes one partition,
// reads it to its end and commits. A's late commit of what it fetched before the rebalance must not
// move B's partition back: the group would then show lag that no one consumes (B has read past
// it) until the next rebalance. Found by TestClusterChaos/ControllerKill (lag not back to 0).
func TestStaleCommitAfterRebalanceDoesNotRewindTheGroup(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 2)
	group := kafkatest.Name(t, "g")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var msgs []kafka.Message
	for i := range 40 {
		msgs = append(msgs, kafka.Message{Partition: i % 2, Value: []byte(fmt.Sprint(i))})
	}
	kafkatest.Produce(t, addr, topic, msgs)

	a := openGroupReader(t, addr, topic, group)
	defer a.Close()
	held := map[int]kafka.Message{} // A's first message of each partition, never committed yet
	for len(held) < 2 {
		m, err := a.FetchMessage(ctx)
		if err != nil {
			t.Fatalf("A fetch: %v", err)
		}
		if _, ok := held[m.Partition]; !ok {
			held[m.Partition] = m
		}
	}

	b := openGroupReader(t, addr, topic, group)
	defer b.Close()
	m, err := b.FetchMessage(ctx) // returns once the group has rebalanced and B owns a partition
	if err != nil {
		t.Fatalf("B fetch: %v", err)
	}
	p := m.Partition
	for m.Offset < 19 { // 20 messages a partition: offsets 0..19
		if m, err = b.FetchMessage(ctx); err != nil {
			t.Fatalf("B fetch: %v", err)
		}
		if m.Partition != p {
			t.Fatalf("B read partitions %d and %d: the group did not split", p, m.Partition)
		}
	}
	if err := b.CommitMessages(ctx, m); err != nil {
		t.Fatalf("B commit: %v", err)
	}

	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	err = a.CommitMessages(cctx, held[0], held[1])
	ccancel()
	t.Logf("A's late commit of offsets %d (partition 0) and %d (partition 1): err %v", held[0].Offset, held[1].Offset, err)

	// A's own partition of the new generation still commits.
	mine, err := a.FetchMessage(ctx)
	if err != nil {
		t.Fatalf("A fetch after the rebalance: %v", err)
	}
	if err := a.CommitMessages(ctx, mine); err != nil {
		t.Fatalf("A commit of its own partition: %v", err)
	}

	offs, err := kafkatest.CommittedOffsets(ctx, addr, group, topic, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range offs {
		if o.Partition == p && o.CommittedOffset != 20 {
			t.Errorf("partition %d (B's, committed at 20 by B) is committed at %d after A's late commit: a stale member rewound the group", p, o.CommittedOffset)
		}
		if o.Partition == mine.Partition && o.CommittedOffset != mine.Offset+1 {
			t.Errorf("partition %d (A's now): committed at %d, want %d: A's commit in its generation was lost", o.Partition, o.CommittedOffset, mine.Offset+1)
		}
	}
}
