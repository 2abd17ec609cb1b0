package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"github.com/segmentio/kafka-go"
)

// ensureTopic creates topic with the given partition count when it does not exist yet, so that a
// fresh stack works without an admin tool. An existing topic is left as it is, whatever its
// partition count. partitions < 1 turns this off.
func ensureTopic(ctx context.Context, logger *slog.Logger, brokers []string, topic string, partitions int) error {
	if partitions < 1 {
		return nil
	}
	var d kafka.Dialer
	conn, err := d.DialContext(ctx, "tcp", brokers[0])
	if err != nil {
		return fmt.Errorf("ensure topic %s: dial %s: %w", topic, brokers[0], err)
	}
	defer conn.Close()
	ctrl, err := conn.Controller()
	if err != nil {
		return fmt.Errorf("ensure topic %s: find the controller: %w", topic, err)
	}
	cc, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ctrl.Host, strconv.Itoa(ctrl.Port)))
	if err != nil {
		return fmt.Errorf("ensure topic %s: dial the controller: %w", topic, err)
	}
	defer cc.Close()
	err = cc.CreateTopics(kafka.TopicConfig{Topic: topic, NumPartitions: partitions, ReplicationFactor: 1})
	switch {
	case errors.Is(err, kafka.TopicAlreadyExists):
		return nil
	case err != nil:
		return fmt.Errorf("ensure topic %s: create: %w", topic, err)
	}
	logger.InfoContext(ctx, "created topic", "topic", topic, "partitions", partitions)
	return nil
}
