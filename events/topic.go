package events

import (
	"context"
	"fmt"
	"net"
	"strconv"

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
