package kafkatest

import (
	"context"
	"time"

	"github.com/segmentio/kafka-go"
)

// CommittedOffsets fetches group's committed offsets on partitions 0..partitions-1 of topic; a
// partition without a commit has CommittedOffset -1.
func CommittedOffsets(ctx context.Context, addr, group, topic string, partitions int) ([]kafka.OffsetFetchPartition, error) {
	parts := make([]int, partitions)
	for i := range parts {
		parts[i] = i
	}
	c := &kafka.Client{Addr: kafka.TCP(addr), Timeout: 10 * time.Second, Transport: &kafka.Transport{DialTimeout: 5 * time.Second}}
	res, err := c.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: parts}})
	if err != nil {
		return nil, err
	}
	return res.Topics[topic], nil
}
