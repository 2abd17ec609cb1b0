package events

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/segmentio/kafka-go"
)

// CreateTopic creates topic with the given partition count (replication factor 1: the stack is one
// broker) through the cluster's controller. A topic that exists already is left as it is, whatever
// its partition count, and is no error (kafka-go's CreateTopics does not tell the two apart).
func CreateTopic(ctx context.Context, addr, topic string, partitions int) error {
	var d kafka.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("create topic %s: dial %s: %w", topic, addr, err)
	}
	defer conn.Close()
	ctrl, err := conn.Controller()
	if err != nil {
		return fmt.Errorf("create topic %s: find the controller: %w", topic, err)
	}
	cc, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
	if err != nil {
		return fmt.Errorf("create topic %s: dial the controller: %w", topic, err)
	}
	defer cc.Close()
	if err := cc.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1}); err != nil {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return nil
}

// WaitForTopic returns nil once the cluster's metadata lists topic with a leader for each of its
// partitions, asking again every 250 ms until ctx ends; then it returns an error naming the
// topic. waiting, if not nil, is called once when the first answer says the topic is not there
// yet. Each attempt uses a client of its own, so a metadata cache cannot hide a topic created a
// moment ago (a kafka-go Writer caches "unknown topic" for its MetadataTTL).
func WaitForTopic(ctx context.Context, brokers []string, topic string, waiting func()) error {
	var last error
	for attempt := 0; ; attempt++ {
		last = topicReady(ctx, brokers, topic)
		if last == nil {
			return nil
		}
		if attempt == 0 && waiting != nil {
			waiting()
		}
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("topic %s is not ready: %w (last answer: %v)", topic, ctx.Err(), last)
		}
	}
}

// topicReady asks for topic's metadata once.
func topicReady(ctx context.Context, brokers []string, topic string) error {
	tr := &kafka.Transport{DialTimeout: dialTimeout, ClientID: DefaultClientID}
	defer tr.CloseIdleConnections()
	rctx, cancel := context.WithTimeout(ctx, writeCallTimeout)
	defer cancel()
	c := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: tr}
	resp, err := c.Metadata(rctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return err
	}
	for _, t := range resp.Topics {
		if t.Name != topic {
			continue
		}
		if t.Error != nil {
			return t.Error
		}
		if len(t.Partitions) == 0 {
			return errors.New("no partitions")
		}
		for _, p := range t.Partitions {
			if p.Error != nil {
				return fmt.Errorf("partition %d: %w", p.ID, p.Error)
			}
		}
		return nil
	}
	return errors.New("not in the metadata")
}
