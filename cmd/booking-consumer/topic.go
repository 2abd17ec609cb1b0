package main

import (
	"context"
	"log/slog"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
)

// ensureTopic creates topic with the given partition count and replication factor when it does
// not exist yet, so that a fresh stack works without an admin tool; replication < 1 takes the
// cluster's default (kafkabus.ClusterReplicationFactor: 3 from three brokers up, else 1). An
// existing topic is left as it is, whatever its partition count, but each way it is less durable
// than the cluster allows (too few replicas, min.insync.replicas below 2) is logged as a warning.
// partitions < 1 turns this off. It asks the brokers in order until one answers.
func ensureTopic(ctx context.Context, logger *slog.Logger, brokers []string, topic string, partitions, replication int) error {
	if partitions < 1 {
		return nil
	}
	r, err := kafkabus.InspectTopic(ctx, brokers, topic)
	if err != nil {
		return err
	}
	if r.Exists {
		for _, w := range r.Warnings() {
			logger.WarnContext(ctx, w, "topic", topic, "replicas", r.Replicas, "brokers", r.Brokers, "min_insync_replicas", r.MinISR)
		}
		logger.DebugContext(ctx, "topic present", "topic", topic, "replicas", r.Replicas, "min_insync_replicas", r.MinISR)
		return nil
	}
	if replication < 1 {
		replication = kafkabus.ClusterReplicationFactor(r.Brokers)
	}
	spec := kafkabus.TopicSpec{Partitions: partitions, ReplicationFactor: replication}
	if err := kafkabus.CreateTopicWith(ctx, brokers, topic, spec); err != nil {
		return err
	}
	logger.InfoContext(ctx, "topic created", "topic", topic, "partitions", partitions, "replication_factor", replication, "brokers", r.Brokers)
	return nil
}
