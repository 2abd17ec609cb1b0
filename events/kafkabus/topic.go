package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
)

// CreateTopic creates topic with the given partition count and the cluster's replication factor
// (ClusterReplicationFactor: 1 on the single dev broker, 3 on a cluster of three or more) through
// the cluster's controller. A topic that exists already is left as it is, whatever its partition
// count, and is no error (kafka-go's CreateTopics does not tell the two apart).
func CreateTopic(ctx context.Context, addr, topic string, partitions int) error {
	return CreateTopicOn(ctx, []string{addr}, topic, partitions, nil)
}

// CreateTopicOn is CreateTopic through whichever of brokers answers first, in order: a bootstrap
// list whose first broker is down still works. configs are topic settings for a topic it creates
// (e.g. "max.message.bytes"); an existing topic keeps its own. When every broker fails it returns
// each one's error.
func CreateTopicOn(ctx context.Context, brokers []string, topic string, partitions int, configs map[string]string) error {
	return CreateTopicWith(ctx, brokers, topic, TopicSpec{Partitions: partitions, Configs: configs})
}

// TopicSpec is how CreateTopicWith creates a topic.
type TopicSpec struct {
	Partitions int
	// ReplicationFactor is the replicas per partition; 0 asks the cluster for its broker count and
	// takes ClusterReplicationFactor of it.
	ReplicationFactor int
	Configs           map[string]string // topic settings, e.g. "min.insync.replicas"
}

// CreateTopicWith is CreateTopicOn with a replication factor of the caller's choosing.
func CreateTopicWith(ctx context.Context, brokers []string, topic string, spec TopicSpec) error {
	if len(brokers) == 0 {
		return fmt.Errorf("create topic %s: %w", topic, ErrNoBrokers)
	}
	partitions, configs := spec.Partitions, spec.Configs
	rf := spec.ReplicationFactor
	if rf <= 0 {
		r, err := InspectTopic(ctx, brokers, topic)
		if err != nil {
			return fmt.Errorf("create topic %s: count the brokers: %w", topic, err)
		}
		rf = ClusterReplicationFactor(r.Brokers)
	}
	var entries []kafka.ConfigEntry
	for k, v := range configs {
		entries = append(entries, kafka.ConfigEntry{ConfigName: k, ConfigValue: v})
	}
	var errs []error
	for _, addr := range brokers {
		err := createTopic(ctx, addr, kafka.TopicConfig{Topic: topic, NumPartitions: partitions, ReplicationFactor: rf,
			ConfigEntries: entries})
		if err == nil {
			return nil
		}
		errs = append(errs, err)
		var kerr kafka.Error
		if errors.As(err, &kerr) || ctx.Err() != nil {
			break // the cluster answered (or we are stopping): another broker would answer the same
		}
	}
	return errors.Join(errs...)
}

func createTopic(ctx context.Context, addr string, tc kafka.TopicConfig) error {
	d := kafka.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("create topic %s: dial %s: %w", tc.Topic, addr, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(writeCallTimeout))
	ctrl, err := conn.Controller()
	if err != nil {
		return fmt.Errorf("create topic %s: find the controller via %s: %w", tc.Topic, addr, err)
	}
	cc, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
	if err != nil {
		return fmt.Errorf("create topic %s: dial the controller: %w", tc.Topic, err)
	}
	defer cc.Close()
	_ = cc.SetDeadline(time.Now().Add(writeCallTimeout))
	if err := cc.CreateTopics(tc); err != nil {
		return fmt.Errorf("create topic %s: %w", tc.Topic, err)
	}
	return nil
}

// ErrTopicNotReady says the cluster's metadata does not (yet) show a topic with a leader for
// each of its partitions.
var ErrTopicNotReady = errors.New("topic not ready")

// WaitForTopic returns topic's partition ids once TopicPartitions finds it ready, asking again
// every 250 ms until ctx ends; then it returns an error naming the topic. waiting, if not nil, is
// called once when the first answer says the topic is not there yet.
func WaitForTopic(ctx context.Context, brokers []string, topic string, waiting func()) ([]int, error) {
	for attempt := 0; ; attempt++ {
		parts, err := TopicPartitions(ctx, brokers, topic)
		if err == nil {
			return parts, nil
		}
		if attempt == 0 && waiting != nil {
			waiting()
		}
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("topic %s is not ready: %w (last answer: %v)", topic, ctx.Err(), err)
		}
	}
}

// TopicPartitions asks the cluster once for topic's metadata and returns its partition ids when
// every partition has a leader; otherwise an error wrapping ErrTopicNotReady, or the request's
// error. Each call uses a client of its own, so a metadata cache cannot hide a topic created a
// moment ago (kafka-go's transports cache "unknown topic" for their MetadataTTL).
func TopicPartitions(ctx context.Context, brokers []string, topic string) ([]int, error) {
	tr := &kafka.Transport{DialTimeout: dialTimeout, ClientID: DefaultClientID}
	defer tr.CloseIdleConnections()
	rctx, cancel := context.WithTimeout(ctx, writeCallTimeout)
	defer cancel()
	c := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: tr}
	resp, err := c.Metadata(rctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	for _, t := range resp.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			return nil, fmt.Errorf("%s: %w: %w", topic, ErrTopicNotReady, t.Error)
		}
		if len(t.Partitions) == 0 {
			return nil, fmt.Errorf("%s: %w: no partitions", topic, ErrTopicNotReady)
		}
		parts := make([]int, 0, len(t.Partitions))
		for _, p := range t.Partitions {
			if p.Error != nil {
				return nil, fmt.Errorf("%s: %w: partition %d: %w", topic, ErrTopicNotReady, p.ID, p.Error)
			}
			parts = append(parts, p.ID)
		}
		return parts, nil
	}
	return nil, fmt.Errorf("%s: %w: not in the metadata", topic, ErrTopicNotReady)
}
