package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
)

// topicPolicy is what ensureTopic may create and whom it tells what it found.
type topicPolicy struct {
	// allowUnsafe (--allow-unsafe-replication) lets it create a topic with fewer replicas than
	// the cluster's min.insync.replicas.
	allowUnsafe bool
	// observed, if set, gets the topic as found at start-up or after creating it (the
	// booking_consumer_topic_acked_replicas gauge).
	observed func(kafkabus.TopicReplication)
}

// ensureTopic creates topic with the given partition count and replication factor when it does
// not exist yet, so that a fresh stack works without an admin tool; replication < 1 takes the
// cluster's default (kafkabus.ClusterReplicationFactor: 3 from three brokers up, else 1). A
// replication factor below the cluster's min.insync.replicas is refused unless
// policy.allowUnsafe (Kafka would acknowledge writes held by fewer nodes). An existing topic is
// left as it is, whatever its partition count, but each way it is less durable than the cluster
// allows (too few replicas, min.insync.replicas below 2, fewer replicas than min.insync.replicas)
// is logged as a warning. partitions < 1 turns this off. It asks the brokers in order until one
// answers.
func ensureTopic(ctx context.Context, logger *slog.Logger, brokers []string, topic string, partitions, replication int, policy topicPolicy) error {
	if partitions < 1 {
		return nil
	}
	r, err := kafkabus.InspectTopic(ctx, brokers, topic)
	if err != nil {
		return err
	}
	observe := func(r kafkabus.TopicReplication) {
		if policy.observed != nil {
			policy.observed(r)
		}
	}
	if r.Exists {
		warnTopic(ctx, logger, topic, r)
		observe(r)
		logger.DebugContext(ctx, "topic present", "topic", topic, "replicas", r.Replicas, "min_insync_replicas", r.MinISR)
		return nil
	}
	if replication < 1 {
		replication = kafkabus.ClusterReplicationFactor(r.Brokers)
	}
	if err := r.CheckReplication(replication, policy.allowUnsafe); err != nil {
		return err
	}
	spec := kafkabus.TopicSpec{Partitions: partitions, ReplicationFactor: replication}
	if err := kafkabus.CreateTopicWith(ctx, brokers, topic, spec); err != nil {
		return err
	}
	// The broker that answered may not have known the topic yet (each learns of a new topic from
	// the controller on its own time), and creating an existing topic succeeds: look again, so that
	// a weak topic made elsewhere still draws its warnings.
	for attempt := 0; attempt < 20; attempt++ {
		if r, err = kafkabus.InspectTopic(ctx, brokers, topic); err != nil || r.Exists {
			break
		}
		if !sleepCtx(ctx, 250*time.Millisecond) {
			return ctx.Err()
		}
	}
	if r.Exists {
		warnTopic(ctx, logger, topic, r)
		observe(r)
	}
	logger.InfoContext(ctx, "topic created (or found as another process created it)", "topic", topic, "partitions", partitions,
		"replication_factor", replication, "replicas", r.Replicas, "brokers", r.Brokers)
	return nil
}

// warnTopic logs each way topic is less durable than the cluster allows.
func warnTopic(ctx context.Context, logger *slog.Logger, topic string, r kafkabus.TopicReplication) {
	for _, w := range r.Warnings() {
		logger.WarnContext(ctx, w, "topic", topic, "replicas", r.Replicas, "brokers", r.Brokers, "min_insync_replicas", r.MinISR)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
