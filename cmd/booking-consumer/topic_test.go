package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
)

func TestEnsureTopicCreatesOnceAndKeepsExisting(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Name(t, "ensure")
	t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), addr, topic) })
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	for range 2 { // the second call finds it and leaves it alone
		if err := ensureTopic(t.Context(), logger, []string{addr}, topic, 3, 0, topicPolicy{}); err != nil {
			t.Fatal(err)
		}
	}
	// The broker answers CreateTopics before its metadata has the topic: wait for it, as the
	// consumer's start-up does (read at once, a cold broker said Unknown Topic Or Partition).
	parts, err := kafkabus.WaitForTopic(t.Context(), []string{addr}, topic, nil)
	if err != nil || len(parts) != 3 {
		t.Fatalf("topic %s: %d partitions, err %v; want 3", topic, len(parts), err)
	}
	// The default replication factor on the single dev broker is 1, and a topic as durable as the
	// cluster allows draws no warning.
	r, err := kafkabus.InspectTopic(t.Context(), []string{addr}, topic)
	if err != nil || !r.Exists || r.Brokers != 1 || r.Replicas != 1 {
		t.Fatalf("InspectTopic = %+v, %v; want 1 broker, 1 replica", r, err)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("a fully replicated topic logged a warning:\n%s", logs.String())
	}
}

// A replication factor the cluster cannot give is the cluster's answer, not something to wait for.
func TestEnsureTopicRefusesMoreReplicasThanBrokers(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Name(t, "rf")
	t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), addr, topic) })
	err := ensureTopic(t.Context(), slog.New(slog.DiscardHandler), []string{addr}, topic, 3, 3, topicPolicy{})
	if err == nil || kafkabus.Reachable(err) {
		t.Fatalf("ensureTopic with 3 replicas on one broker = %v, want an error start-up does not retry", err)
	}
	t.Logf("error: %v", err)
}

// An existing topic less durable than the cluster allows is logged at start-up and reported for
// booking_consumer_topic_acked_replicas. On one broker that is a topic asking for more in-sync
// replicas than it has (Kafka then acknowledges writes held by its one replica); the
// cluster's own cases (one replica on three brokers, min ISR 1) are in topic_cluster_test.go.
func TestEnsureTopicWarnsOnAnExistingTopic(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Name(t, "warn")
	t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), addr, topic) })
	if err := kafkabus.CreateTopicWith(t.Context(), []string{addr}, topic, kafkabus.TopicSpec{Partitions: 1, ReplicationFactor: 1,
		Configs: map[string]string{"min.insync.replicas": "2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := kafkabus.WaitForTopic(t.Context(), []string{addr}, topic, nil); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	var seen kafkabus.TopicReplication
	if err := ensureTopic(t.Context(), slog.New(slog.NewTextHandler(&logs, nil)), []string{addr}, topic, 3, 0,
		topicPolicy{observed: func(r kafkabus.TopicReplication) { seen = r }}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "min_insync_replicas=2") ||
		!strings.Contains(logs.String(), "acknowledged writes are on 1 node(s) only") {
		t.Fatalf("no warning that acknowledged writes are on 1 node only (min.insync.replicas=2 on 1 replica):\n%s", logs.String())
	}
	if seen.AckedReplicas() != 1 {
		t.Errorf("the gauge would get %d acknowledged replicas (%+v), want 1", seen.AckedReplicas(), seen)
	}
	t.Logf("warned: %s", strings.TrimSpace(logs.String()))
}
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
	defer srv.Close()
	if _, _, err := runCLI(t, t.Context(), nil, "healthcheck", "--url", srv.URL); err != nil {
		t.Fatalf("healthy server: %v", err)
	}
	status = http.StatusServiceUnavailable
	if _, _, err := runCLI(t, t.Context(), nil, "healthcheck", "--url", srv.URL); err == nil {
		t.Fatal("503 passed the healthcheck")
	}
}
