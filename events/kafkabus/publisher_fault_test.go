package kafkabus_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// Faults a real broker cannot stage on demand, on kfake (an in-process, in-memory broker).

const faultTopic = "booking-events"

func newCluster(t *testing.T, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(3, faultTopic)}, opts...)...)
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	return c
}

// readIDs returns how often each event id is stored in the cluster's topic.
func readIDs(t *testing.T, addr string) map[string]int {
	t.Helper()
	seen := map[string]int{}
	for part := range 3 {
		for _, m := range readPartition(t, addr, faultTopic, part) {
			e, err := events.Decode(m.Value)
			if err != nil {
				t.Fatal(err)
			}
			seen[e.EventID.String()]++
		}
	}
	return seen
}

// assertDelivered fails t unless every event of evs is stored in the cluster at addr (duplicates
// allowed).
func assertDelivered(t *testing.T, addr string, evs []events.Event) {
	t.Helper()
	seen := readIDs(t, addr)
	for _, e := range evs {
		if seen[e.EventID.String()] == 0 {
			t.Fatalf("event %s missing", e.EventID)
		}
	}
}

// retryingPublisher is the crawler's publisher (a spool sent by a SpoolPublisher) to the broker at
// addr, logging into a buffer nobody reads.
func retryingPublisher(t *testing.T, addr string) *kafkatest.Spooled {
	log, _ := newLogger()
	return kafkatest.NewSpooled(t, kafkabus.PublisherConfig{Brokers: []string{addr}, Logger: log})
}

func closeWithin(t *testing.T, p interface{ Close(context.Context) error }, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// TestPublisherBrokerRestart: the broker dies and comes back on the same port; every event spooled
// during the outage is delivered.
func TestPublisherBrokerRestart(t *testing.T) {
	t.Parallel()
	c1 := newCluster(t)
	addr := c1.ListenAddrs()[0]
	_, portS, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(portS)

	p := retryingPublisher(t, addr)
	evs := testEvents(500, 50)
	publishAll(p, evs[:200])
	testkit.WaitFor(t, 10*time.Second, "first 200 published", func() bool { return statsOf(t, p).Published == 200 })

	c1.Close()
	outage := time.Now()
	maxLat := publishAll(p, evs[200:])
	time.Sleep(time.Second)
	var c2 *kfake.Cluster
	testkit.WaitFor(t, 5*time.Second, "kfake restarted on port "+portS, func() bool {
		var err error
		c2, err = kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, faultTopic), kfake.Ports(port))
		return err == nil
	})
	defer c2.Close()
	testkit.WaitFor(t, 20*time.Second, "all 500 published", func() bool { return statsOf(t, p).Published >= 500 })
	t.Logf("restart: max spool append during outage %v, delivered %v after the outage began", maxLat, time.Since(outage))
	closeWithin(t, p, 5*time.Second)
	if s := statsOf(t, p); s.Failed != 0 || s.Queued != 0 {
		t.Fatalf("stats %+v", s)
	}
	assertDelivered(t, addr, evs[200:]) // the events published during the outage
}

// TestPublisherProduceOutage: every Produce request drops its connection for a while, then the
// broker recovers; everything is delivered (duplicates allowed).
func TestPublisherProduceOutage(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	defer c.Close()
	var failing atomic.Bool
	var refused atomic.Int64
	failing.Store(true)
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		if failing.Load() {
			refused.Add(1)
			return nil, errors.New("injected: connection dropped"), true
		}
		return nil, nil, false
	})
	addr := c.ListenAddrs()[0]
	p := retryingPublisher(t, addr)
	evs := testEvents(300, 30)
	publishAll(p, evs)
	testkit.WaitFor(t, 10*time.Second, "3 refused produce requests", func() bool { return refused.Load() >= 3 })
	failing.Store(false)
	testkit.WaitFor(t, 20*time.Second, "all 300 published", func() bool { return statsOf(t, p).Published == 300 })
	closeWithin(t, p, 5*time.Second)
	t.Logf("outage: %d produce requests dropped, stats %+v", refused.Load(), statsOf(t, p))
	assertDelivered(t, addr, evs)
}

// TestPublisherNotLeader: NOT_LEADER_FOR_PARTITION answers are retried; nothing is lost.
func TestPublisherNotLeader(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	defer c.Close()
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Err: kerr.NotLeaderForPartition, Count: 4})
	addr := c.ListenAddrs()[0]
	p := retryingPublisher(t, addr)
	evs := testEvents(100, 20)
	publishAll(p, evs)
	testkit.WaitFor(t, 20*time.Second, "all 100 published", func() bool { return statsOf(t, p).Published == 100 })
	closeWithin(t, p, 5*time.Second)
	if h.Hits() != 4 {
		t.Fatalf("fault hit %d times, want 4", h.Hits())
	}
	if s := statsOf(t, p); s != (kafkabus.PublisherStats{Published: 100}) {
		t.Fatalf("stats %+v", s)
	}
	assertDelivered(t, addr, evs)
}

// TestPublisherRejected: a permanent error fails the events at once (counted and logged with their
// ids) instead of retrying them forever; the spool moves on.
func TestPublisherRejected(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	defer c.Close()
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Err: kerr.TopicAuthorizationFailed, Count: -1})
	log, logs := newLogger()
	p := kafkatest.NewSpooled(t, kafkabus.PublisherConfig{Brokers: c.ListenAddrs(), Logger: log})
	evs := testEvents(50, 10)
	publishAll(p, evs)
	testkit.WaitFor(t, 10*time.Second, "50 failed", func() bool { return statsOf(t, p).Failed == 50 })
	closeWithin(t, p, 5*time.Second)
	if r := checkLossLogged(t, logs, evs); r[kafkabus.ReasonRejected] != 50 {
		t.Fatalf("reasons %v", r)
	}
}

// TestSyncWriterRetries: the replay writer retries transient errors and reports permanent ones
// per event.
func TestSyncWriterRetries(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	defer c.Close()
	w := kafkabus.NewSyncWriter(kafkabus.PublisherConfig{Brokers: c.ListenAddrs()})
	defer w.Close()
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Err: kerr.NotLeaderForPartition, Count: 2})
	if err := w.WriteEvents(t.Context(), testEvents(60, 6)); err != nil {
		t.Fatalf("transient faults not retried: %v", err)
	}
	if h.Hits() != 2 {
		t.Fatalf("fault hit %d times", h.Hits())
	}
	c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.Produce}, Err: kerr.TopicAuthorizationFailed, Count: -1})
	err := w.WriteEvents(t.Context(), testEvents(10, 2))
	var werr *kafkabus.WriteEventsError
	if !errors.As(err, &werr) || len(werr.Failed) != 10 || werr.Total != 10 {
		t.Fatalf("err %v, want all 10 failed", err)
	}
}
