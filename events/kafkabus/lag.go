package kafkabus

import (
	"context"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/segmentio/kafka-go"
)

// PartitionLag is one partition's consumer lag: the log end offset minus the group's committed
// offset (Committed -1: the group has committed nothing there; Lag is then the whole log).
type PartitionLag struct {
	Partition int
	End       int64
	Committed int64
	Lag       int64
}

// GroupLag returns a function reporting group's lag on every partition of topic, sorted by
// partition: metadata, end offsets and the group's committed offsets, each request bounded by the
// caller's context (and 3 s; dialling 2 s). The dashboard's pipeline page calls it on every view.
func GroupLag(brokers []string, topic, group string) func(context.Context) ([]PartitionLag, error) {
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 3 * time.Second,
		Transport: &kafka.Transport{Dial: (&net.Dialer{Timeout: 2 * time.Second}).DialContext}}
	return func(ctx context.Context) ([]PartitionLag, error) {
		md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
		if err != nil {
			return nil, fmt.Errorf("kafka metadata: %w", err)
		}
		var parts []int
		for _, t := range md.Topics {
			if t.Name != topic {
				continue
			}
			if t.Error != nil {
				return nil, fmt.Errorf("topic %s: %w", topic, t.Error)
			}
			for _, p := range t.Partitions {
				parts = append(parts, p.ID)
			}
		}
		if len(parts) == 0 {
			return nil, fmt.Errorf("topic %s has no partitions (not created yet: start `booking-consumer run`)", topic)
		}
		slices.Sort(parts)
		req := make([]kafka.OffsetRequest, len(parts))
		for i, p := range parts {
			req[i] = kafka.LastOffsetOf(p)
		}
		lo, err := client.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: req}})
		if err != nil {
			return nil, fmt.Errorf("kafka end offsets: %w", err)
		}
		end := map[int]int64{}
		for _, po := range lo.Topics[topic] {
			if po.Error != nil {
				return nil, fmt.Errorf("end offset of partition %d: %w", po.Partition, po.Error)
			}
			end[po.Partition] = po.LastOffset
		}
		of, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: parts}})
		if err != nil {
			return nil, fmt.Errorf("offsets of group %s: %w", group, err)
		}
		if of.Error != nil {
			return nil, fmt.Errorf("offsets of group %s: %w", group, of.Error)
		}
		committed := map[int]int64{}
		for _, p := range of.Topics[topic] {
			committed[p.Partition] = p.CommittedOffset
		}
		out := make([]PartitionLag, 0, len(parts))
		for _, p := range parts {
			c, ok := committed[p]
			if !ok {
				c = -1
			}
			l := end[p] - max(c, 0)
			out = append(out, PartitionLag{Partition: p, End: end[p], Committed: c, Lag: l})
		}
		return out, nil
	}
}
