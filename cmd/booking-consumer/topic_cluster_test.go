//go:build cluster

package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// On the three-node cluster: `run` creates its topic with 3 replicas by default, refuses
// --replication-factor 1 (below min.insync.replicas 2) unless --allow-unsafe-replication, and warns at
// start-up about an existing topic with one replica, or with min.insync.replicas=1.
func TestEnsureTopicOnTheCluster(t *testing.T) {
	c := kafkatest.NewCluster(t)
	created := kafkatest.Name(t, "default")
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), c.Brokers[0], created) })
	if err := ensureTopic(t.Context(), logger, c.Brokers, created, 3, 0, topicPolicy{}); err != nil {
		t.Fatal(err)
	}
	c.WaitFor(t, created, "every replica in sync", time.Minute, kafkatest.FullISR)
	// Each broker learns of a new topic from the controller on its own time: ask until the one
	// that answers knows it.
	var r kafkabus.TopicReplication
	var err error
	testkit.WaitFor(t, 30*time.Second, "every broker's metadata showing "+created, func() bool {
		r, err = kafkabus.InspectTopic(t.Context(), c.Brokers, created)
		return err != nil || r.Exists
	})
	if err != nil || r.Replicas != 3 || r.MinISR != 2 {
		t.Fatalf("created topic: %+v, %v; want 3 replicas and the cluster's min ISR 2", r, err)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("the default topic drew a warning:\n%s", logs.String())
	}

	// Below the cluster's min.insync.replicas (2) a replication factor is refused at creation,
	// naming the flag that allows it; allowed, the topic is made and its start-up warning says
	// what an acknowledged write then is: on one node.
	unsafe := kafkatest.Name(t, "rf1")
	t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), c.Brokers[0], unsafe) })
	err = ensureTopic(t.Context(), logger, c.Brokers, unsafe, 3, 1, topicPolicy{})
	if !errors.Is(err, kafkabus.ErrUnsafeReplication) || kafkabus.Reachable(err) || !strings.Contains(err.Error(), "--allow-unsafe-replication") {
		t.Fatalf("--replication-factor 1 on the cluster: %v; want ErrUnsafeReplication naming --allow-unsafe-replication", err)
	}
	if r, err := kafkabus.InspectTopic(t.Context(), c.Brokers, unsafe); err != nil || r.Exists || r.ClusterMinISR != 2 {
		t.Fatalf("after the refusal: %+v, %v; want no topic and the cluster's min ISR 2", r, err)
	}
	t.Logf("refused: %v", err)
	logs.Reset()
	var seen kafkabus.TopicReplication
	if err := ensureTopic(t.Context(), logger, c.Brokers, unsafe, 3, 1,
		topicPolicy{allowUnsafe: true, observed: func(r kafkabus.TopicReplication) { seen = r }}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "acknowledged writes are on 1 node(s) only") || seen.AckedReplicas() != 1 {
		t.Fatalf("allowed RF 1: gauge %d (%+v), logs:\n%s\nwant the warning and 1", seen.AckedReplicas(), seen, logs.String())
	}

	for _, tc := range []struct {
		name string
		spec kafkabus.TopicSpec
		want string
	}{
		{"one replica", kafkabus.TopicSpec{Partitions: 1, ReplicationFactor: 1}, "1 replica(s) per partition on a cluster of 3 brokers"},
		{"min ISR 1", kafkabus.TopicSpec{Partitions: 1, ReplicationFactor: 3, Configs: map[string]string{"min.insync.replicas": "1"}}, "min.insync.replicas=1 on a cluster of 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			topic := kafkatest.Name(t, "weak")
			t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), c.Brokers[0], topic) })
			if err := kafkabus.CreateTopicWith(t.Context(), c.Brokers, topic, tc.spec); err != nil {
				t.Fatal(err)
			}
			if _, err := kafkabus.WaitForTopic(t.Context(), c.Brokers, topic, nil); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			if err := ensureTopic(t.Context(), slog.New(slog.NewTextHandler(&logs, nil)), c.Brokers, topic, 3, 0, topicPolicy{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), tc.want) {
				t.Fatalf("no warning saying %q:\n%s", tc.want, logs.String())
			}
			t.Logf("warned: %s", strings.TrimSpace(logs.String()))
		})
	}
}
