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
	topic := strictTopic(t, c)
	log, logs := newLogger()
	cfg := kafkabus.PublisherConfig{Brokers: c.Brokers, Topic: topic, Logger: log}
	pub := kafkatest.NewSpooled(t, cfg)
	sw := kafkabus.NewSyncWriter(cfg)
	defer sw.Close()
	cr := startSteadyCrawler(pub)

	victim, part := leaderNotController(t, c, topic)
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
	waitOutage(t, c, topic, victim, part, killed)
	waitLog(t, logs, "Not Enough Replicas", time.Minute)

	c.Up(t)
	c.WaitFor(t, topic, "every replica back in sync", 2*time.Minute, kafkatest.FullISR)
	t.Logf("node %d back and in sync %v after the SIGKILL", victim, time.Since(killed).Round(time.Millisecond))
	if err := <-replayDone; err != nil {
		t.Fatalf("replay batch written during the outage: %v", err)
	}
	published := cr.stop()
	closeWithin(t, pub, 4*time.Minute)
	st := pub.Stats()
	if st.Failed != 0 || st.Queued != 0 || st.Published != int64(len(published)) {
		t.Fatalf("publisher stats %+v for %d published, want all sent, none failed or left", st, len(published))
	}
	copies := checkAllInTopic(t, c.Brokers[0], topic, append(published, replayed...))
	t.Logf("%d published + %d replayed events during a leader change and NOT_ENOUGH_REPLICAS: all in the topic (%d copies incl. retry duplicates), stats %+v",
		len(published), len(replayed), copies, st)
}

// strictTopic creates a 3-partition topic with min.insync.replicas=3: with one node down, every
// acks=all write is refused with NOT_ENOUGH_REPLICAS.
func strictTopic(t *testing.T, c *kafkatest.Cluster) string {
	topic := kafkatest.Name(t, "cl")
	if err := kafkabus.CreateTopicWith(t.Context(), c.Brokers, topic, kafkabus.TopicSpec{Partitions: 3,
		Configs: map[string]string{"min.insync.replicas": "3"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), c.Brokers[0], topic) })
	c.WaitFor(t, topic, "every replica in sync", time.Minute, kafkatest.FullISR)
	r, err := kafkabus.InspectTopic(t.Context(), c.Brokers, topic)
	if err != nil || r.Replicas != 3 || r.Brokers != 3 || r.MinISR != 3 {
		t.Fatalf("InspectTopic = %+v, %v; want 3 replicas on 3 brokers, min ISR 3", r, err)
	}
	return topic
}

// steadyCrawler is the crawler: a batch of 5 events spooled every 100 ms whatever the cluster does.
type steadyCrawler struct {
	mu        sync.Mutex
	published []events.Event
	quit      chan struct{}
	done      chan struct{}
}

func startSteadyCrawler(pub *kafkatest.Spooled) *steadyCrawler {
	cr := &steadyCrawler{quit: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(cr.done)
		for {
			select {
			case <-cr.quit:
				return
			case <-time.After(100 * time.Millisecond):
			}
			evs := testEvents(5, 5)
			pub.PublishAll(evs)
			cr.mu.Lock()
			cr.published = append(cr.published, evs...)
			cr.mu.Unlock()
		}
	}()
	return cr
}

// stop ends the crawler and returns every event it handed to the publisher.
func (cr *steadyCrawler) stop() []events.Event {
	close(cr.quit)
	<-cr.done
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return append([]events.Event(nil), cr.published...)
}

// leaderNotController is a node that leads a partition of topic and is not the active controller.
func leaderNotController(t *testing.T, c *kafkatest.Cluster, topic string) (node, partition int) {
	ctl := c.Controller()
	ps, err := c.Partitions(t.Context(), topic)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if n := c.Node(brokerAddr(p.Leader)); n != ctl && n != 0 {
			t.Logf("controller node %d; SIGKILL node %d, leader of partition %d", ctl, n, p.ID)
			return n, p.ID
		}
	}
	t.Fatalf("no partition led by a node other than the controller %d: %v", ctl, ps)
	return 0, 0
}

// waitOutage waits for part's new leader and for every ISR to shrink to 2 after victim's SIGKILL.
func waitOutage(t *testing.T, c *kafkatest.Cluster, topic string, victim, part int, killed time.Time) {
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
}

// checkAllInTopic fails unless every event of all is in the topic; it returns the copies read.
func checkAllInTopic(t *testing.T, addr, topic string, all []events.Event) int {
	seen := map[string]int{}
	for p := range 3 {
		for _, m := range readPartition(t, addr, topic, p) {
			e, err := events.Decode(m.Value)
			if err != nil {
				t.Fatal(err)
			}
			seen[e.EventID.String()]++
		}
	}
	for _, e := range all {
		if seen[e.EventID.String()] == 0 {
			t.Fatalf("event %s acknowledged but not in the topic", e.EventID)
		}
	}
	return sum(seen)
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
