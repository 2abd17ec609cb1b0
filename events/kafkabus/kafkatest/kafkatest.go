// Package kafkatest gives tests the real Kafka broker that the project's test command starts
// (compose/dev/stack), with a topic of their own, so that tests sharing one broker never see each
// other's messages. It never skips: an unreachable broker fails the test with what to run.
package kafkatest

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// DefaultBootstrap is the dev stack's broker (compose/dev/stack env).
const DefaultBootstrap = "127.0.0.1:19092"

// Bootstrap returns the broker address for tests: TEST_KAFKA_BOOTSTRAP, else KAFKA_BOOTSTRAP, else
// the dev stack's default. It fails the test when the broker does not answer an ApiVersions request.
func Bootstrap(t testing.TB) string {
	t.Helper()
	addr := strings.Split(testkit.EnvOr(DefaultBootstrap, "TEST_KAFKA_BOOTSTRAP", "KAFKA_BOOTSTRAP"), ",")[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := WaitReady(ctx, addr); err != nil {
		t.Fatalf("Kafka broker at %s is unreachable: %v (start it with 'compose/dev/stack up', or run 'make test', which does)", addr, err)
	}
	return addr
}

// WaitReady waits until the broker at addr answers an ApiVersions request.
func WaitReady(ctx context.Context, addr string) error {
	var err error
	for {
		var conn *kafka.Conn
		conn, err = kafka.DialContext(ctx, "tcp", addr)
		if err == nil {
			_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
			_, err = conn.ApiVersions()
			_ = conn.Close()
			if err == nil {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

var seq atomic.Int64

// Name returns a name unique to this test run, for topics and consumer groups.
func Name(t testing.TB, prefix string) string {
	t.Helper()
	clean := strings.NewReplacer("/", "-", " ", "-", "#", "-").Replace(t.Name())
	if len(clean) > 60 {
		clean = clean[:60]
	}
	return fmt.Sprintf("%s-%s-%d-%d-%d", prefix, strings.ToLower(clean), os.Getpid(), time.Now().UnixNano()%1e9, seq.Add(1))
}

// Topic creates a fresh topic with the given partition count on the broker at addr and deletes it
// when the test ends.
func Topic(t testing.TB, addr string, partitions int) string {
	t.Helper()
	topic := Name(t, "t")
	if err := CreateTopic(context.Background(), addr, topic, partitions); err != nil {
		t.Fatalf("create topic %s: %v", topic, err)
	}
	t.Cleanup(func() { _ = DeleteTopic(context.Background(), addr, topic) })
	return topic
}

// CreateTopic creates topic through the cluster's controller and waits (up to 15 s) until each of
// its partitions has a leader.
func CreateTopic(ctx context.Context, addr, topic string, partitions int) error {
	if err := kafkabus.CreateTopic(ctx, addr, topic, partitions); err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	parts, err := kafkabus.WaitForTopic(wctx, []string{addr}, topic, nil)
	if err != nil {
		return err
	}
	if len(parts) != partitions {
		return fmt.Errorf("topic %s has %d partitions, want %d", topic, len(parts), partitions)
	}
	return nil
}

// DeleteTopic deletes topic; errors are returned, not fatal.
func DeleteTopic(ctx context.Context, addr, topic string) error {
	conn, err := controller(ctx, addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.DeleteTopics(topic)
}

func controller(ctx context.Context, addr string) (*kafka.Conn, error) {
	conn, err := kafka.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()
	ctrl, err := conn.Controller()
	if err != nil {
		return nil, fmt.Errorf("find controller: %w", err)
	}
	c, err := kafka.DialContext(ctx, "tcp", net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
	if err != nil {
		return nil, fmt.Errorf("dial controller: %w", err)
	}
	return c, nil
}

// EndOffsets returns the sum of the topic's partition end offsets: how many messages were ever
// written to it.
func EndOffsets(ctx context.Context, addr, topic string) (int64, error) {
	conn, err := kafka.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, err
	}
	parts, err := conn.ReadPartitions(topic)
	_ = conn.Close()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, p := range parts {
		lc, err := kafka.DialLeader(ctx, "tcp", addr, topic, p.ID)
		if err != nil {
			return 0, err
		}
		last, err := lc.ReadLastOffset()
		_ = lc.Close()
		if err != nil {
			return 0, err
		}
		total += last
	}
	return total, nil
}

// Encode turns evs into Kafka messages keyed by listing key, as the publisher sends them.
func Encode(t testing.TB, evs []events.Event) []kafka.Message {
	t.Helper()
	out := make([]kafka.Message, len(evs))
	for i, e := range evs {
		v, err := events.Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = kafka.Message{Key: []byte(e.ListingKey), Value: v}
	}
	return out
}

// Produce writes msgs to topic with acks from all replicas, in chunks, failing t on any error.
// Batches of many messages stay under the broker's message.max.bytes (~1 MB); a single message
// (a test's oversize value, produced alone) may be larger, for the broker to judge.
func Produce(t testing.TB, addr, topic string, msgs []kafka.Message) {
	t.Helper()
	batchBytes := int64(1_000_000)
	if len(msgs) == 1 {
		batchBytes = 4 << 20
	}
	// A transport of its own (fresh metadata: the topic may be new), closed at the end: a Writer's
	// Close leaves a transport it was given running.
	tr := &kafka.Transport{DialTimeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, BatchSize: 2000, BatchBytes: batchBytes, Transport: tr}
	defer w.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	const chunk = 10_000
	for start := 0; start < len(msgs); start += chunk {
		if err := w.WriteMessages(ctx, msgs[start:min(start+chunk, len(msgs))]...); err != nil {
			t.Fatalf("produce %d messages to %s: %.300v", len(msgs), topic, err)
		}
	}
}
