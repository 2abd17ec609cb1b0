package main

import (
	"context"
	"log/slog"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
)

// ensureTopic creates topic with the given partition count when it does not exist yet, so that a
// fresh stack works without an admin tool. An existing topic is left as it is, whatever its
// partition count. partitions < 1 turns this off. It asks the brokers in order until one answers.
func ensureTopic(ctx context.Context, logger *slog.Logger, brokers []string, topic string, partitions int) error {
	if partitions < 1 {
		return nil
	}
	if err := kafkabus.CreateTopicOn(ctx, brokers, topic, partitions, nil); err != nil {
		return err
	}
	logger.DebugContext(ctx, "topic present", "topic", topic, "partitions_if_created", partitions)
	return nil
}
