package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/segmentio/kafka-go"
)

// ClusterReplicationFactor is the replication factor a topic gets when none is asked for: 3 on a
// cluster of at least three brokers (one node may die and min.insync.replicas=2 still holds), else
// the broker count, at least 1 (a single dev broker cannot hold more than one replica).
func ClusterReplicationFactor(brokers int) int {
	return max(1, min(brokers, 3))
}

// minClusterISR is the min.insync.replicas below which a replicated topic warns: with acks=all
// and min ISR 1, a write acknowledged by the leader alone is lost if that leader dies.
const minClusterISR = 2

// TopicReplication is what the cluster says about a topic's durability.
type TopicReplication struct {
	Topic   string
	Brokers int  // brokers in the cluster's metadata
	Exists  bool // false: the rest is zero
	// Replicas is the fewest replicas any partition has (the topic's replication factor).
	Replicas int
	// MinISR is the topic's effective min.insync.replicas; 0 when it could not be read.
	MinISR int
	// ClusterMinISR is the brokers' min.insync.replicas, what a topic created without its own
	// gets (read from one broker); 0 when it could not be read.
	ClusterMinISR int
}

// ErrUnsafeReplication means a topic would be created with fewer replicas than the cluster's
// min.insync.replicas. Kafka (4.x) then acknowledges an acks=all write once every replica the
// partition has holds it, so an acknowledged event is on fewer nodes than the cluster promises.
// It is a configuration error: start-up does not retry it.
var ErrUnsafeReplication = errors.New("replication factor below the cluster's min.insync.replicas")

// CheckReplication refuses to create the topic with replication replicas per partition when that
// is below the cluster's min.insync.replicas, unless allow (--allow-unsafe-replication).
func (r TopicReplication) CheckReplication(replication int, allow bool) error {
	if allow || r.ClusterMinISR == 0 || replication >= r.ClusterMinISR {
		return nil
	}
	return fmt.Errorf("%w: topic %s with --replication-factor %d on a cluster with min.insync.replicas=%d: acknowledged (acks=all) writes would be on %d node(s) only, and lost with it; use --replication-factor %d or more, or --allow-unsafe-replication",
		ErrUnsafeReplication, r.Topic, replication, r.ClusterMinISR, replication, r.ClusterMinISR)
}

// AckedReplicas is how many nodes an acknowledged (acks=all) write of the topic is on at least:
// its replicas, or its min.insync.replicas when that is lower. 0 when unknown.
func (r TopicReplication) AckedReplicas() int {
	if !r.Exists || r.MinISR == 0 {
		return 0
	}
	return min(r.Replicas, r.MinISR)
}

// Warnings says, in words for a log line, why the topic is less durable than the cluster allows:
// fewer replicas than the cluster could give it (its broker count, up to 3); on a cluster of three
// or more brokers, min.insync.replicas below 2 on a replicated topic; or fewer replicas than its
// min.insync.replicas, which leaves acknowledged writes on fewer nodes than that. None for a topic
// that does not exist.
func (r TopicReplication) Warnings() []string {
	if !r.Exists {
		return nil
	}
	var w []string
	if want := ClusterReplicationFactor(r.Brokers); r.Replicas < want {
		w = append(w, fmt.Sprintf("topic %s has %d replica(s) per partition on a cluster of %d brokers (want %d): one broker's loss loses or stops a partition; recreate it with --replication-factor %d and replay",
			r.Topic, r.Replicas, r.Brokers, want, want))
	}
	if r.Brokers >= 3 && r.Replicas >= minClusterISR && r.MinISR > 0 && r.MinISR < minClusterISR {
		w = append(w, fmt.Sprintf("topic %s has min.insync.replicas=%d on a cluster of %d brokers: an acks=all write held by the leader alone is lost with it; set it to %d (kafka-configs --alter --add-config min.insync.replicas=%d)",
			r.Topic, r.MinISR, r.Brokers, minClusterISR, minClusterISR))
	}
	if r.MinISR > r.Replicas {
		// Kafka 4 takes the smaller of the two: the writes succeed, each on every replica there is.
		w = append(w, fmt.Sprintf("topic %s has %d replica(s) per partition, below its min.insync.replicas=%d: acknowledged writes are on %d node(s) only, and lost with it",
			r.Topic, r.Replicas, r.MinISR, r.Replicas))
	}
	return w
}

// InspectTopic asks the cluster (once, a client of its own) how many brokers it has and, when topic
// exists, its replicas per partition and effective min.insync.replicas.
func InspectTopic(ctx context.Context, brokers []string, topic string) (TopicReplication, error) {
	r := TopicReplication{Topic: topic}
	if len(brokers) == 0 {
		return r, fmt.Errorf("inspect topic %s: %w", topic, ErrNoBrokers)
	}
	tr := &kafka.Transport{DialTimeout: dialTimeout, ClientID: DefaultClientID}
	defer tr.CloseIdleConnections()
	rctx, cancel := context.WithTimeout(ctx, writeCallTimeout)
	defer cancel()
	c := &kafka.Client{Addr: kafka.TCP(brokers...), Transport: tr}
	md, err := c.Metadata(rctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return r, fmt.Errorf("metadata of %s: %w", topic, err)
	}
	r.Brokers = len(md.Brokers)
	if len(md.Brokers) > 0 {
		r.ClusterMinISR = brokerMinISR(rctx, c, md.Brokers[0].ID)
	}
	for _, t := range md.Topics {
		if t.Name != topic || errors.Is(t.Error, kafka.UnknownTopicOrPartition) || len(t.Partitions) == 0 {
			continue
		}
		if t.Error != nil {
			return r, fmt.Errorf("metadata of %s: %w", topic, t.Error)
		}
		r.Exists = true
		r.Replicas = len(t.Partitions[0].Replicas)
		for _, p := range t.Partitions {
			r.Replicas = min(r.Replicas, len(p.Replicas))
		}
	}
	if !r.Exists {
		return r, nil
	}
	cfg, err := c.DescribeConfigs(rctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeTopic, ResourceName: topic, ConfigNames: []string{"min.insync.replicas"}}}})
	if err != nil {
		return r, fmt.Errorf("configs of %s: %w", topic, err)
	}
	for _, res := range cfg.Resources {
		if res.Error != nil {
			return r, fmt.Errorf("configs of %s: %w", topic, res.Error)
		}
		for _, e := range res.ConfigEntries {
			if e.ConfigName == "min.insync.replicas" {
				r.MinISR, _ = strconv.Atoi(e.ConfigValue)
			}
		}
	}
	return r, nil
}

// brokerMinISR is broker id's min.insync.replicas, 0 when it cannot be read (the check it feeds is
// then skipped: unknown is not unsafe).
func brokerMinISR(ctx context.Context, c *kafka.Client, id int) int {
	cfg, err := c.DescribeConfigs(ctx, &kafka.DescribeConfigsRequest{Resources: []kafka.DescribeConfigRequestResource{{
		ResourceType: kafka.ResourceTypeBroker, ResourceName: strconv.Itoa(id), ConfigNames: []string{"min.insync.replicas"}}}})
	if err != nil {
		return 0
	}
	for _, res := range cfg.Resources {
		for _, e := range res.ConfigEntries {
			if res.Error == nil && e.ConfigName == "min.insync.replicas" {
				n, _ := strconv.Atoi(e.ConfigValue)
				return n
			}
		}
	}
	return 0
}
