//go:build cluster

package kafkabus_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
)

// On the three-node cluster (compose/dev/chaos-cluster runs this with -tags cluster): a topic
// created with the default replication factor gets 3 replicas; SIGKILL of a partition leader that
// is not the active controller (a leader change) and then NOT_ENOUGH_REPLICAS (the topic asks for
// min.insync.replicas=3, so with that node down every acks=all write is refused) are retried by
// the publisher and by the SyncWriter of `crawler replay` until the node is back: nothing fails,
// nothing is dropped, every event is in the topic.
func TestClusterLeaderChangeAndNotEnoughReplicasAreRetried(t *testing.T) {
	c := kafkatest.NewCluster(t)
	ctx := t.Context()
	topic := kafkatest.Name(t, "cl")
	if err := kafkabus.CreateTopicWith(ctx, c.Brokers, topic, kafkabus.TopicSpec{Partitions: 3,
		Configs: map[string]string{"min.insync.replicas": "3"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), c.Brokers[0], topic) })
	c.WaitFor(t, topic, "every replica in sync", time.Minute, kafkatest.FullISR)
	r, err := kafkabus.InspectTopic(ctx, c.Brokers, topic)
	if err != nil || r.Replicas != 3 || r.Brokers != 3 || r.MinISR != 3 {
		t.Fatalf("InspectTopic = %+v, %v; want 3 replicas on 3 brokers, min ISR 3", r, err)
	}

	log, logs := newLogger()
	cfg := kafkabus.PublisherConfig{Brokers: c.Brokers, Topic: topic, RetryWindow: 4 * time.Minute, Logger: log}
	pub := kafkabus.NewPublisher(cfg)
	sw := kafkabus.NewSyncWriter(cfg)
	defer sw.Close()

	var mu sync.Mutex
	var published []events.Event
	stop := make(chan struct{})
	done := make(chan struct{})
	// The crawler: 50 events a second whatever the cluster does, so that an outage of up to 200 s
	// fits the publisher's queue (10,000): a full queue drops, which is counted but not this test.
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			evs := testEvents(5, 5)
			for _, e := range evs {
				pub.Publish(e)
			}
			mu.Lock()
			published = append(published, evs...)
			mu.Unlock()
		}
	}()

	ctl := c.Controller()
	victim, part := 0, -1
	ps, err := c.Partitions(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if n := c.Node(brokerAddr(p.Leader)); n != ctl && n != 0 {
			victim, part = n, p.ID
			break
		}
	}
	if victim == 0 {
		t.Fatalf("no partition led by a node other than the controller %d: %v", ctl, ps)
	}
	t.Logf("controller node %d; SIGKILL node %d, leader of partition %d", ctl, victim, part)
	killed := time.Now()
	c.Signal(t, victim, syscall.SIGKILL)

	// crawler replay during the outage: one batch, the replay's default ack timeout (30 s) doubled
	// for the node's restart on a loaded machine.
	replayed := testEvents(300, 30)
	replayDone := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		replayDone <- sw.WriteEvents(wctx, replayed)
	}()

	c.WaitFor(t, topic, "a new leader for partition "+strconv.Itoa(part), time.Minute, func(ps []kafka.Partition) bool {
		for _, p := range ps {
			if p.ID == part {
				return p.Leader.ID != victim && p.Leader.ID > 0
			}
		}
		return false
	})
	t.Logf("partition %d has a new leader %v after the SIGKILL", part, time.Since(killed).Round(time.Millisecond))
	c.WaitFor(t, topic, "the ISR shrinking to 2", time.Minute, func(ps []kafka.Partition) bool {
		for _, p := range ps {
			if len(p.Isr) > 2 {
				return false
			}
		}
		return true
	})
	t.Logf("ISR shrank to 2 %v after the SIGKILL: writes now get NOT_ENOUGH_REPLICAS", time.Since(killed).Round(time.Millisecond))
	waitLog(t, logs, "Not Enough Replicas", time.Minute)

	c.Up(t)
	c.WaitFor(t, topic, "every replica back in sync", 2*time.Minute, kafkatest.FullISR)
	t.Logf("node %d back and in sync %v after the SIGKILL", victim, time.Since(killed).Round(time.Millisecond))
	if err := <-replayDone; err != nil {
		t.Fatalf("replay batch written during the outage: %v", err)
	}
	close(stop)
	<-done
	closeWithin(t, pub, 4*time.Minute)
	st := pub.(stats).Stats()
	mu.Lock()
	n := len(published)
	mu.Unlock()
	if st.Failed != 0 || st.Dropped != 0 || st.Published != int64(n) {
		t.Fatalf("publisher stats %+v for %d published, want all sent, none failed or dropped", st, n)
	}
	seen := map[string]int{}
	for p := range 3 {
		for _, m := range readPartition(t, c.Brokers[0], topic, p) {
			e, err := events.Decode(m.Value)
			if err != nil {
				t.Fatal(err)
			}
			seen[e.EventID.String()]++
		}
	}
	mu.Lock()
	all := append(append([]events.Event(nil), published...), replayed...)
	mu.Unlock()
	for _, e := range all {
		if seen[e.EventID.String()] == 0 {
			t.Fatalf("event %s acknowledged but not in the topic", e.EventID)
		}
	}
	t.Logf("%d published + %d replayed events during a leader change and NOT_ENOUGH_REPLICAS: all in the topic (%d copies incl. retry duplicates), stats %+v",
		n, len(replayed), sum(seen), st)
}

func brokerAddr(b kafka.Broker) string { return net.JoinHostPort(b.Host, strconv.Itoa(b.Port)) }

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func waitLog(t *testing.T, logs *logBuffer, want string, timeout time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !strings.Contains(logs.String(), want); {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the publisher's log within %v", want, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
