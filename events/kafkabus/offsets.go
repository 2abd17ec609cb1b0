package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/internal/retry"
)

// ParseFrom parses --from: "earliest" (zero time, ok) or an RFC3339 time.
func ParseFrom(s string) (time.Time, error) {
	if s == "earliest" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--from %q: want earliest or an RFC3339 time like 2026-05-01T00:00:00+09:00", s)
	}
	return t, nil
}

// ResetOffsets sets group's committed offsets on topic to the first message at or after from
// ("earliest": the start of each partition) before the group starts consuming.
//
// kafka-go refuses SetOffset on a group Reader, so this commits directly: an OffsetCommit with
// generation -1 and no member id is the "simple consumer" commit that Kafka accepts for a group
// with no active members (the same request kafka-consumer-groups.sh --reset-offsets sends).
// It refuses a group that has members, and one with committed offsets unless force.
func ResetOffsets(ctx context.Context, logger *slog.Logger, brokers []string, group, topic, from string, force bool) error {
	at, err := ParseFrom(from)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// On a broker that just started, or for a group nobody used yet, the coordinator and the
	// topic's metadata take a moment to settle (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS,
	// an unknown topic): such answers are retried until the deadline. Nothing is retried once the
	// offsets were sent.
	for attempt := 1; ; attempt++ {
		err := resetOnce(ctx, logger, brokers, group, topic, from, at, force)
		if err == nil || !Retriable(err) {
			return err
		}
		logger.WarnContext(ctx, "group offsets cannot be reset yet; retrying", "attempt", attempt, "err", err)
		if retry.Sleep(ctx, resetBackoff.Delay(attempt)) != nil {
			return fmt.Errorf("%w (gave up after %d attempts: %v)", err, attempt, ctx.Err())
		}
	}
}

// resetBackoff spaces ResetOffsets' attempts: 200 ms doubling to 2 s.
var resetBackoff = retry.Backoff{Base: 200 * time.Millisecond, Max: 2 * time.Second}

// resetOnce is one attempt of ResetOffsets.
func resetOnce(ctx context.Context, logger *slog.Logger, brokers []string, group, topic, from string, at time.Time, force bool) error {
	// A transport of its own: kafka-go's DefaultTransport caches metadata for every client in the
	// process, and a topic created after that cache was filled would look missing for seconds.
	transport := &kafka.Transport{DialTimeout: 5 * time.Second, ClientID: "booking-consumer"}
	defer transport.CloseIdleConnections()
	client := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second, Transport: transport}

	parts, err := TopicPartitions(ctx, brokers, topic)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}

	groups, err := client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{group}})
	if err != nil {
		return fmt.Errorf("replay: describe group %s: %w", group, err)
	}
	for _, g := range groups.Groups {
		if len(g.Members) > 0 {
			return fmt.Errorf("replay: group %s has %d active members (state %s); stop them first", group, len(g.Members), g.GroupState)
		}
	}

	committed, err := client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: parts}})
	if err == nil {
		err = committed.Error
	}
	if err != nil {
		return fmt.Errorf("replay: committed offsets of group %s: %w", group, err)
	}
	var existing []string
	for _, p := range committed.Topics[topic] {
		if p.CommittedOffset >= 0 {
			existing = append(existing, fmt.Sprintf("%d:%d", p.Partition, p.CommittedOffset))
		}
	}
	if len(existing) > 0 && !force {
		return fmt.Errorf("replay: group %s already has committed offsets on %s (partition:offset %s); "+
			"use a new --group, or add --force-reset to overwrite them", group, topic, strings.Join(existing, " "))
	}

	offsets, err := StartOffsets(ctx, brokers, topic, parts, at)
	if err != nil {
		return err
	}
	req := &kafka.OffsetCommitRequest{GroupID: group, GenerationID: -1, MemberID: "", Topics: map[string][]kafka.OffsetCommit{}}
	for _, p := range parts {
		req.Topics[topic] = append(req.Topics[topic], kafka.OffsetCommit{Partition: p, Offset: offsets[p]})
	}
	res, err := client.OffsetCommit(ctx, req)
	if err != nil {
		return fmt.Errorf("replay: commit offsets for group %s: %w: %w", group, errCommitStage, err)
	}
	var errs []error
	for _, p := range res.Topics[topic] {
		if p.Error != nil {
			errs = append(errs, fmt.Errorf("partition %d: %w", p.Partition, p.Error))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("replay: commit offsets for group %s: %w: %w", group, errCommitStage, err)
	}
	logger.InfoContext(ctx, "group offsets reset for replay", "group", group, "topic", topic, "from", from,
		"offsets", offsets, "overwritten", existing)
	return nil
}

// StartOffsets returns, per partition, the offset of the first message at or after at (the
// partition's end if there is none), or the partition's first offset when at is zero. It asks
// each partition's leader directly: kafka.Client.ListOffsets mixes up first and time offsets in
// its response mapping (it keys results by the returned timestamp, which is -1 for both). The
// leader is looked up through each of brokers in turn until one answers.
func StartOffsets(ctx context.Context, brokers []string, topic string, parts []int, at time.Time) (map[int]int64, error) {
	out := make(map[int]int64, len(parts))
	for _, p := range parts {
		conn, err := dialLeader(ctx, brokers, topic, p)
		if err != nil {
			return nil, fmt.Errorf("replay: dial leader of %s/%d: %w", topic, p, err)
		}
		_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
		var off int64
		if at.IsZero() {
			off, err = conn.ReadFirstOffset()
		} else if off, err = conn.ReadOffset(at); err == nil && off < 0 {
			off, err = conn.ReadLastOffset()
		}
		_ = conn.Close()
		if err != nil {
			return nil, fmt.Errorf("replay: offset of %s/%d at %v: %w", topic, p, at, err)
		}
		out[p] = off
	}
	return out, nil
}

// dialLeader dials the leader of topic/partition, looking it up through each of brokers in turn.
func dialLeader(ctx context.Context, brokers []string, topic string, partition int) (*kafka.Conn, error) {
	var errs []error
	for _, addr := range brokers {
		d := kafka.Dialer{Timeout: 5 * time.Second}
		conn, err := d.DialLeader(ctx, "tcp", addr, topic, partition)
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}
