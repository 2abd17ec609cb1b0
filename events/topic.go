package events

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"

	"github.com/segmentio/kafka-go"
)

// CreateTopic creates topic with the given partition count (replication factor 1: the stack is one
// broker) through the cluster's controller. It reports false, and no error, when the topic already
// exists, whatever its partition count.
func CreateTopic(ctx context.Context, addr, topic string, partitions int) (created bool, err error) {
	var d kafka.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false, fmt.Errorf("create topic %s: dial %s: %w", topic, addr, err)
	}
	defer conn.Close()
	ctrl, err := conn.Controller()
	if err != nil {
		return false, fmt.Errorf("create topic %s: find the controller: %w", topic, err)
	}
	cc, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
	if err != nil {
		return false, fmt.Errorf("create topic %s: dial the controller: %w", topic, err)
	}
	defer cc.Close()
	err = cc.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1})
	switch {
	case errors.Is(err, kafka.TopicAlreadyExists):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("create topic %s: %w", topic, err)
	}
	return true, nil
}
