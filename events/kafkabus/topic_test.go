package kafkabus_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
)

func TestWaitForTopic(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	brokers := []string{addr}

	t.Run("Missing", func(t *testing.T) {
		t.Parallel()
		topic := kafkatest.Name(t, "missing")
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		waited := 0
		_, err := kafkabus.WaitForTopic(ctx, brokers, topic, func() { waited++ })
		if err == nil || !strings.Contains(err.Error(), topic) {
			t.Fatalf("WaitForTopic(missing) = %v, want an error naming %s", err, topic)
		}
		if waited != 1 {
			t.Errorf("waiting called %d times, want once", waited)
		}
	})

	t.Run("CreatedWhileWaiting", func(t *testing.T) {
		t.Parallel()
		topic := kafkatest.Name(t, "later")
		t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), addr, topic) })
		waiting := make(chan struct{})
		go func() {
			<-waiting
			time.Sleep(300 * time.Millisecond)
			if err := kafkabus.CreateTopic(t.Context(), addr, topic, 3); err != nil {
				t.Errorf("create %s: %v", topic, err)
			}
		}()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		start := time.Now()
		parts, err := kafkabus.WaitForTopic(ctx, brokers, topic, func() { close(waiting) })
		if err != nil || len(parts) != 3 {
			t.Fatalf("WaitForTopic = %v, %v; want 3 partitions", parts, err)
		}
		t.Logf("topic ready %v after the wait began", time.Since(start))
	})
}

func TestTopicReplicationWarnings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                      string
		brokers, replicas, minISR int
		exists                    bool
		want                      []string // one substring per warning, in order
	}{
		{"single broker", 1, 1, 1, true, nil},
		{"missing topic", 3, 0, 0, false, nil},
		{"cluster, full", 3, 3, 2, true, nil},
		{"five brokers, three replicas", 5, 3, 2, true, nil},
		{"cluster, one replica", 3, 1, 1, true, []string{"1 replica(s) per partition on a cluster of 3 brokers (want 3)"}},
		{"two brokers, one replica", 2, 1, 1, true, []string{"(want 2)"}},
		{"cluster, min ISR 1", 3, 3, 1, true, []string{"min.insync.replicas=1 on a cluster of 3"}},
		{"min ISR unknown", 3, 3, 0, true, nil},
		// Kafka acknowledges an acks=all write once every replica a partition has holds it when
		// it has fewer than min.insync.replicas: the write is on that many nodes only.
		{"min ISR above replicas", 1, 1, 2, true, []string{"acknowledged writes are on 1 node(s) only"}},
		{"cluster, one replica, min ISR 2", 3, 1, 2, true, []string{"(want 3)", "below its min.insync.replicas=2: acknowledged writes are on 1 node(s) only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := kafkabus.TopicReplication{Topic: "t", Brokers: tc.brokers, Exists: tc.exists, Replicas: tc.replicas, MinISR: tc.minISR}
			got := r.Warnings()
			if len(got) != len(tc.want) {
				t.Fatalf("Warnings() = %q, want %d warning(s) %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d = %q, want it to say %q", i, got[i], w)
				}
			}
		})
	}
}

// At creation a replication factor below the cluster's min.insync.replicas is refused unless
// allowed: Kafka would acknowledge acks=all writes held by fewer nodes than the cluster promises.
func TestCheckReplication(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name               string
		clusterMinISR, rf  int
		allow, wantRefusal bool
	}{
		{"single broker", 1, 1, false, false},
		{"cluster, RF 3", 2, 3, false, false},
		{"cluster, RF 2", 2, 2, false, false},
		{"cluster, RF 1", 2, 1, false, true},
		{"cluster, RF 1 allowed", 2, 1, true, false},
		{"min ISR unknown", 0, 1, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := kafkabus.TopicReplication{Topic: "t", Brokers: 3, ClusterMinISR: tc.clusterMinISR}
			err := r.CheckReplication(tc.rf, tc.allow)
			if (err != nil) != tc.wantRefusal {
				t.Fatalf("CheckReplication(%d, %v) = %v, want refusal %v", tc.rf, tc.allow, err, tc.wantRefusal)
			}
			if err != nil && (!errors.Is(err, kafkabus.ErrUnsafeReplication) || kafkabus.Reachable(err) ||
				!strings.Contains(err.Error(), "--allow-unsafe-replication") || !strings.Contains(err.Error(), "min.insync.replicas=2")) {
				t.Errorf("refusal %q: want ErrUnsafeReplication, not retried, naming min.insync.replicas=2 and --allow-unsafe-replication", err)
			}
		})
	}
}

func TestClusterReplicationFactor(t *testing.T) {
	t.Parallel()
	for brokers, want := range map[int]int{0: 1, 1: 1, 2: 2, 3: 3, 5: 3} {
		if got := kafkabus.ClusterReplicationFactor(brokers); got != want {
			t.Errorf("ClusterReplicationFactor(%d) = %d, want %d", brokers, got, want)
		}
	}
}

func TestInspectTopic(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 2)
	r, err := kafkabus.InspectTopic(t.Context(), []string{addr}, topic)
	if err != nil || !r.Exists || r.Brokers != 1 || r.Replicas != 1 || r.MinISR != 1 || r.ClusterMinISR != 1 {
		t.Fatalf("InspectTopic(%s) = %+v, %v; want it to exist with 1 broker, 1 replica, min ISR 1 (the cluster's 1)", topic, r, err)
	}
	missing, err := kafkabus.InspectTopic(t.Context(), []string{addr}, kafkatest.Name(t, "missing"))
	if err != nil || missing.Exists || missing.Brokers != 1 || missing.ClusterMinISR != 1 {
		t.Fatalf("InspectTopic(missing) = %+v, %v; want not existing, 1 broker, the cluster's min ISR 1", missing, err)
	}
}
