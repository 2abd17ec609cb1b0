package kafkabus

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/segmentio/kafka-go"
)

// Between generations (the coordinator unreachable, or the group rebalancing) a commit cannot be
// decided: the partition may stay this member's or move. It must fail, so the consumer retries it
// with backoff and reports itself stuck after its alarm count (TestBrokerOutageWithInflight4 saw a
// 79 s broker outage with /healthz 200 and no failed commit while it was skipped and logged at Info).
func TestCommitWithoutAGenerationFails(t *testing.T) {
	r := &GroupReader{o: GroupReaderOptions{Topic: "t", Group: "g"}, first: map[int]int64{0: 3},
		logger: slog.New(slog.DiscardHandler)}
	err := r.CommitMessages(t.Context(), kafka.Message{Topic: "t", Partition: 0, Offset: 5})
	if !errors.Is(err, ErrNoGeneration) {
		t.Fatalf("commit with no current generation: err = %v, want ErrNoGeneration", err)
	}
}
