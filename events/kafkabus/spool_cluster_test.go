//go:build cluster

package kafkabus_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/events/spool"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestClusterSpoolRidesOutNotEnoughReplicas: the state of two of three nodes down for a topic with
// min.insync.replicas=2 (every acks=all write refused, NOT_ENOUGH_REPLICAS), made here by one node
// down under min.insync.replicas=3 so that the controller quorum stays: the spool publisher keeps
// every event, says "not enough replicas" (what the crawler's /healthz checks.kafka names), loses
// nothing however long it lasts, and sends everything once the node is back.
func TestClusterSpoolRidesOutNotEnoughReplicas(t *testing.T) {
	c := kafkatest.NewCluster(t)
	topic := strictTopic(t, c)
	log, _ := newLogger()
	sp, err := spool.Open(t.TempDir(), spool.Options{Retain: true, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	pub := kafkabus.NewSpoolPublisher(kafkabus.PublisherConfig{Brokers: c.Brokers, Topic: topic, Logger: log}, sp)
	evs := testEvents(600, 60)
	spoolBatch(t, sp, evs[:200])
	testkit.WaitFor(t, time.Minute, "the first batch sent", func() bool { return sp.Stats().Unsent == 0 })

	victim, _ := leaderNotController(t, c, topic)
	down := time.Now()
	c.Signal(t, victim, syscall.SIGKILL)
	spoolBatch(t, sp, evs[200:400])
	testkit.WaitForf(t, 2*time.Minute, func() string { c, _ := pub.Failing(); return "not enough replicas; cause: " + c },
		func() bool { c, _ := pub.Failing(); return c == "not enough replicas" })
	spoolBatch(t, sp, evs[400:])
	st := sp.Stats()
	t.Logf("node %d down %s: %d unsent, oldest %s ago, cause %q", victim, time.Since(down).Round(time.Second), st.Unsent,
		time.Since(st.OldestUnsent).Round(time.Second), func() string { c, _ := pub.Failing(); return c }())
	if st.Unsent < 200 {
		t.Errorf("%d unsent while every write is refused, want at least 200", st.Unsent)
	}
	c.Up(t)
	c.WaitFor(t, topic, "every replica back in sync", 2*time.Minute, kafkatest.FullISR)
	testkit.WaitFor(t, 2*time.Minute, "the spool sent", func() bool { return sp.Stats().Unsent == 0 })
	closeSpoolWithin(t, pub, time.Minute)
	copies := checkAllInTopic(t, c.Brokers[0], topic, evs)
	t.Logf("600 events through NOT_ENOUGH_REPLICAS: all in the topic (%d copies), failed %d", copies, pub.Stats().Failed)
}

func closeSpoolWithin(t *testing.T, p *kafkabus.SpoolPublisher, d time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	if err := p.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
