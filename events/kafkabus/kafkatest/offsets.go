package kafkatest

import (
	"context"
	"time"

	"github.com/segmentio/kafka-go"
)

// groupTransport carries every group request of the tests in this process (offset fetches and
// commits). Those go to the group's coordinator, found by FindCoordinator, never through the
// cached topic metadata that makes a fresh topic unknown on a shared transport (see
// TestEveryKafkaClientHasATransportOfItsOwn), so one transport is safe for all of them, and kept,
// so that a poll reuses its connection: a transport per call that is never closed leaves its
// connections and its metadata loop running (TestHelpersLeaveNothingRunning).
var groupTransport = &kafka.Transport{DialTimeout: 5 * time.Second}

// GroupClient is a client for group requests (OffsetFetch, OffsetCommit) to the brokers at
// addrs, on the tests' group transport. Topic requests (ListOffsets, Metadata, Produce) need
// fresh metadata: give them a Transport of their own and close it (CloseIdleConnections).
func GroupClient(addrs ...string) *kafka.Client {
	return &kafka.Client{Addr: kafka.TCP(addrs...), Timeout: 10 * time.Second, Transport: groupTransport}
}

// CommittedOffsets fetches group's committed offsets on partitions 0..partitions-1 of topic; a
// partition without a commit has CommittedOffset -1.
func CommittedOffsets(ctx context.Context, addr, group, topic string, partitions int) ([]kafka.OffsetFetchPartition, error) {
	parts := make([]int, partitions)
	for i := range parts {
		parts[i] = i
	}
	res, err := GroupClient(addr).OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: parts}})
	if err != nil {
		return nil, err
	}
	return res.Topics[topic], nil
}
