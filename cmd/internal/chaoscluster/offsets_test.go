//go:build cluster

package chaoscluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
)

const partitions = 3

// committed is the group's committed offset per partition (-1: none); ok false when the
// coordinator did not answer (it may be moving).
func committed(ctx context.Context, brokers []string, group, topic string) (map[int]int64, bool) {
	resp, err := kafkatest.GroupClient(brokers...).OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: {0, 1, 2}}})
	if err != nil || resp.Error != nil {
		return nil, false
	}
	out := map[int]int64{}
	for _, p := range resp.Topics[topic] {
		if p.Error != nil {
			return nil, false
		}
		out[p.Partition] = p.CommittedOffset
	}
	return out, len(out) == partitions
}

// endOffsets is each partition's next offset; ok false when a leader did not answer.
func endOffsets(ctx context.Context, brokers []string, topic string) (map[int]int64, bool) {
	req := map[string][]kafka.OffsetRequest{topic: {kafka.LastOffsetOf(0), kafka.LastOffsetOf(1), kafka.LastOffsetOf(2)}}
	// A transport per call, closed: the leaders move under the faults, and a kept transport's
	// metadata is up to 6 s old.
	tr := &kafka.Transport{DialTimeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	c := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second, Transport: tr}
	resp, err := c.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: req})
	if err != nil {
		return nil, false
	}
	out := map[int]int64{}
	for _, p := range resp.Topics[topic] {
		if p.Error != nil {
			return nil, false
		}
		out[p.Partition] = p.LastOffset
	}
	return out, len(out) == partitions
}

// lagReport says, per partition, the committed and the end offset (for a timeout's message).
func lagReport(ctx context.Context, brokers []string, group, topic string) string {
	c, ok1 := committed(ctx, brokers, group, topic)
	e, ok2 := endOffsets(ctx, brokers, topic)
	if !ok1 || !ok2 {
		return "the coordinator or a leader did not answer"
	}
	out := ""
	for p := range partitions {
		out += fmt.Sprintf(" partition %d committed %d of %d;", p, c[p], e[p])
	}
	return out
}

// lagZero reports whether the group has committed every partition to its end.
func lagZero(ctx context.Context, brokers []string, group, topic string) bool {
	c, ok1 := committed(ctx, brokers, group, topic)
	e, ok2 := endOffsets(ctx, brokers, topic)
	if !ok1 || !ok2 {
		return false
	}
	for p, end := range e {
		if end > 0 && c[p] != end {
			return false
		}
	}
	return true
}

// idsBelow reads partition p from offset 0 up to (not including) upTo and returns the event ids;
// ok false when the partition could not be read (its leader is down or moving).
func idsBelow(t *testing.T, brokers []string, topic string, p int, upTo int64) (ids []uuid.UUID, ok bool) {
	t.Helper()
	if upTo <= 0 {
		return nil, true
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p, MinBytes: 1, MaxBytes: 10 << 20, MaxWait: 200 * time.Millisecond})
	defer r.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			return nil, false
		}
		if m.Offset >= upTo {
			return ids, true
		}
		if e, err := events.Decode(m.Value); err == nil {
			ids = append(ids, e.EventID)
		}
		if m.Offset == upTo-1 {
			return ids, true
		}
	}
}

// offsetWatch is the highest committed offset seen per partition: a group's committed offset
// never goes back (a stale member's commit after a rebalance once moved it back, and the group
// then kept lag no one consumed).
type offsetWatch map[int]int64

func (w offsetWatch) check(t *testing.T, c map[int]int64) {
	t.Helper()
	for p, off := range c {
		if prev, seen := w[p]; seen && off < prev {
			t.Errorf("partition %d: the group's committed offset went back from %d to %d", p, prev, off)
		}
		w[p] = max(w[p], off)
	}
}

// sampled counts the offset samples that could be checked and the messages they covered.
type sampled struct{ samples, messages int }

func (s *sampled) add(n int) {
	if n > 0 {
		s.samples++
		s.messages += n
	}
}

// checkCommittedStored samples the group's committed offsets, checks that none went back (w) and
// that every message below them is in booking_events: an offset is committed only after its
// batch's transaction. It returns how many messages it checked (0 when the coordinator or a leader
// did not answer this time).
func checkCommittedStored(t *testing.T, db *pgxpool.Pool, brokers []string, group, topic string, w offsetWatch) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	c, ok := committed(ctx, brokers, group, topic)
	cancel()
	if !ok {
		return 0
	}
	w.check(t, c)
	checked := 0
	for p, off := range c {
		ids, ok := idsBelow(t, brokers, topic, p, off)
		if !ok {
			continue
		}
		distinct := map[uuid.UUID]bool{}
		for _, id := range ids {
			distinct[id] = true
		}
		n := countQuery(t, db, "select count(*) from booking_events where event_id = any($1)", ids)
		if n != len(distinct) {
			t.Errorf("partition %d committed at %d: %d of its %d events stored: an offset passed an uncommitted write", p, off, n, len(distinct))
		}
		checked += len(ids)
	}
	return checked
}
