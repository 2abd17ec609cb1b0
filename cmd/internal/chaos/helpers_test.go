//go:build chaos

package chaos_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/retry"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// poison returns the i-th kind of undecodable message.
func poison(i int) kafka.Message {
	kinds := [][]byte{
		[]byte(`{not json`),
		[]byte(`{"event_id":"` + uuid.NewString() + `","event_type":"listing_exploded","schema_version":1}`),
		[]byte(`{"event_type":"listing_opened"}`),
		{0xff, 0xfe, 0xfd},
		[]byte(`{"event_id":"` + uuid.NewString() + `","event_type":"listing_opened","schema_version":1,"play_date":"2026-02-30","tee_time":"07:00"}`),
	}
	return kafka.Message{Key: []byte(fmt.Sprint("poison-", i)), Value: kinds[i%len(kinds)]}
}

// position is a message's place in the topic and what it is.
type position struct {
	partition int
	offset    int64
	id        uuid.UUID // uuid.Nil for poison
}

// readTopic reads every message of topic (no group) and returns them by partition, in offset order.
func readTopic(t testing.TB, addr, topic string, partitions int) map[int][]position {
	t.Helper()
	out := map[int][]position{}
	for p := range partitions {
		conn, err := kafka.DialLeader(t.Context(), "tcp", addr, topic, p)
		if err != nil {
			t.Fatalf("dial leader %s/%d: %v", topic, p, err)
		}
		last, err := conn.ReadLastOffset()
		conn.Close()
		if err != nil {
			t.Fatal(err)
		}
		if last == 0 {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: []string{addr}, Topic: topic, Partition: p, MinBytes: 1, MaxBytes: 10 << 20})
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				cancel()
				r.Close()
				t.Fatalf("read %s/%d: %v", topic, p, err)
			}
			pos := position{partition: p, offset: m.Offset}
			if e, err := events.Decode(m.Value); err == nil {
				pos.id = e.EventID
			}
			out[p] = append(out[p], pos)
			if m.Offset >= last-1 {
				break
			}
		}
		cancel()
		r.Close()
	}
	return out
}

// committedOffsets returns the group's committed offset per partition (-1: none).
func committedOffsets(t testing.TB, addr, group, topic string, partitions int) map[int]int64 {
	t.Helper()
	ps := make([]int, partitions)
	for i := range ps {
		ps[i] = i
	}
	c := kafkatest.GroupClient(addr)
	var resp *kafka.OffsetFetchResponse
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		resp, err = c.OffsetFetch(t.Context(), &kafka.OffsetFetchRequest{GroupID: group, Topics: map[string][]int{topic: ps}})
		if err == nil && resp.Error == nil {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if err != nil || resp.Error != nil {
		t.Fatalf("offset fetch %s: %v %v", group, err, resp)
	}
	out := map[int]int64{}
	for _, p := range resp.Topics[topic] {
		out[p.Partition] = p.CommittedOffset
	}
	return out
}

// drain is where the scenarios that drain a topic into the database start: the private broker, a
// topic of drainPartitions partitions, a consumer group, a database of its own, and the topic's
// layout once produced.
type drain struct {
	addr, topic, group string
	db                 *pgxpool.Pool
	dbURL              string
	layout             map[int][]position
}

const drainPartitions = 3

func newDrain(t testing.TB, group string) *drain {
	t.Helper()
	d := &drain{addr: kafkatest.Bootstrap(t), group: kafkatest.Name(t, group)}
	d.topic = kafkatest.Topic(t, d.addr, drainPartitions)
	d.db, d.dbURL = storetest.NewDBURL(t)
	return d
}

// produce writes msgs to the topic and records where each one landed (layout).
func (d *drain) produce(t testing.TB, msgs []kafka.Message) {
	t.Helper()
	kafkatest.Produce(t, d.addr, d.topic, msgs)
	d.layout = readTopic(t, d.addr, d.topic, drainPartitions)
}

// committed is the group's committed offset per partition.
func (d *drain) committed(t testing.TB) map[int]int64 {
	t.Helper()
	return committedOffsets(t, d.addr, d.group, d.topic, drainPartitions)
}

// atEnd reports whether the group's committed offsets reached the end of every partition.
func (d *drain) atEnd(t testing.TB) bool {
	c := d.committed(t)
	for p, ps := range d.layout {
		if len(ps) > 0 && c[p] != ps[len(ps)-1].offset+1 {
			return false
		}
	}
	return true
}

// checkCommitted is checkCommittedStored at the group's committed offsets now.
func (d *drain) checkCommitted(t testing.TB) int {
	t.Helper()
	return checkCommittedStored(t, d.db, d.topic, d.layout, d.committed(t))
}

// checkCommittedStored verifies that every message below each committed offset is stored: a
// valid event as a row, poison as a dead letter at its position, and that the listing_lifetimes
// projection equals the view. It returns how many were checked.
func checkCommittedStored(t testing.TB, db *pgxpool.Pool, topic string, layout map[int][]position, committed map[int]int64) int {
	t.Helper()
	checked := 0
	for p, c := range committed {
		var ids []uuid.UUID
		var poisonOffsets []int64
		for _, pos := range layout[p] {
			if pos.offset >= c {
				break
			}
			if pos.id == uuid.Nil {
				poisonOffsets = append(poisonOffsets, pos.offset)
			} else {
				ids = append(ids, pos.id)
			}
		}
		distinct := map[uuid.UUID]bool{}
		for _, id := range ids {
			distinct[id] = true
		}
		var rows, dead int
		if err := retryDB(t, func(ctx context.Context) error {
			return db.QueryRow(ctx, "select count(*) from booking_events where event_id = any($1)", ids).Scan(&rows)
		}); err != nil {
			t.Fatal(err)
		}
		if err := retryDB(t, func(ctx context.Context) error {
			return db.QueryRow(ctx, `select count(*) from booking_events_dead
				where kafka_topic = $1 and kafka_partition = $2 and kafka_offset = any($3)`, topic, p, poisonOffsets).Scan(&dead)
		}); err != nil {
			t.Fatal(err)
		}
		if rows != len(distinct) || dead != len(poisonOffsets) {
			t.Errorf("partition %d committed at %d: %d of %d valid events and %d of %d poison messages stored: an offset is ahead of its rows",
				p, c, rows, len(distinct), dead, len(poisonOffsets))
		}
		checked += len(ids) + len(poisonOffsets)
	}
	checkProjection(t, db)
	return checked
}

// retryDB retries f for up to 90 s (the database may be restarting).
func retryDB(t testing.TB, f func(ctx context.Context) error) error {
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		err := f(ctx)
		cancel()
		if err == nil || time.Now().After(deadline) || t.Context().Err() != nil {
			return err
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func count(t testing.TB, db *pgxpool.Pool, table string) int {
	t.Helper()
	var n int
	if err := retryDB(t, func(ctx context.Context) error {
		return db.QueryRow(ctx, "select count(*) from "+table).Scan(&n)
	}); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

// runningConsumer runs consumer.Run the way production runs the binary, with the production
// reader (kafkabus.GroupReaderConfig, its default queue) and Config, under a restart policy
// (compose: restart: unless-stopped): if Run returned an error, the reader would be closed and a
// new one started after a second. Run retries fetch and insert failures itself, so any restart
// fails the test (stop).
type runningConsumer struct {
	cancel   context.CancelFunc
	done     chan struct{}
	restarts atomic.Int64
	lastErr  atomic.Value
}

func startConsumer(t testing.TB, addr, topic, group string, db *pgxpool.Pool, logger *slog.Logger) *runningConsumer {
	ctx, cancel := context.WithCancel(t.Context())
	c := &runningConsumer{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for ctx.Err() == nil {
			r := kafka.NewReader(kafkabus.GroupReaderConfig(kafkabus.GroupReaderOptions{Brokers: []string{addr}, Group: group, Topic: topic}))
			err := consumer.Run(ctx, r, store.New(db), consumer.Config{Logger: logger})
			consumertest.Close(t, r)
			if err == nil {
				return
			}
			c.restarts.Add(1)
			c.lastErr.Store(err.Error())
			_ = retry.Sleep(ctx, time.Second) // the loop ends with ctx
		}
	}()
	// The loop ends before the test does, also when the test fails before stop.
	t.Cleanup(func() { c.cancel(); testkit.Recv(t, c.done, time.Minute, "the consumer loop") })
	return c
}

func (c *runningConsumer) stop(t testing.TB) {
	t.Helper()
	c.cancel()
	testkit.Recv(t, c.done, time.Minute, "the consumer loop")
	// consumer.Run retries failed fetches itself: an outage must pause the loop, not end it.
	if n := c.restarts.Load(); n > 0 {
		t.Errorf("the consumer loop returned an error %d times (last: %v); it must outlive outages", n, c.lastErr.Load())
	}
}
