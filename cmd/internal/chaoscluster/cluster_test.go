//go:build cluster

package chaoscluster_test

import (
	"context"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// env is what every scenario shares: the cluster, the database, the topic and group, the
// simulated site with the crawler's state, and the consumer processes.
type env struct {
	c            *kafkatest.Cluster
	cs           *consumers
	site         crawler.Site
	clock        func() time.Time
	state        crawler.StateDir
	topic, group string
}

func TestClusterChaos(t *testing.T) {
	c := kafkatest.NewCluster(t)
	root := repoRoot(t)
	db, dbURL := storetest.NewDBURL(t)
	e := &env{c: c, topic: kafkatest.Name(t, "cluster"), group: kafkatest.Name(t, "group"), state: crawler.StateDir{Dir: t.TempDir()}}
	if err := kafkabus.CreateTopicWith(t.Context(), c.Brokers, e.topic, kafkabus.TopicSpec{Partitions: partitions}); err != nil {
		t.Fatal(err)
	}
	c.WaitFor(t, e.topic, "every replica in sync", time.Minute, kafkatest.FullISR)
	e.site, e.clock = fastSim(t, root)
	e.cs = &consumers{t: t, bin: buildConsumer(t, root), dbURL: dbURL, topic: e.topic, group: e.group, brokers: c.Brokers}
	for range 3 {
		e.cs.start()
	}
	defer e.cs.stopAll(t)

	for _, sc := range []struct {
		name  string
		fault func(t *testing.T, e *env, sample func())
	}{
		{"LeaderKill", leaderKill},
		{"ControllerKill", controllerKill},
		{"RollingRestart", rollingRestart},
		{"PausedNode", pausedNode},
		{"ConsumerKills", consumerKills},
	} {
		t.Run(sc.name, func(t *testing.T) { e.scenario(t, db, sc.fault) })
	}
	t.Logf("consumer processes that exited on their own over all scenarios: %d", e.cs.exits)
}

// scenario runs fault while the crawler publishes, brings every node back, and checks the promises.
func (e *env) scenario(t *testing.T, db *pgxpool.Pool, fault func(t *testing.T, e *env, sample func())) {
	before := countQuery(t, db, "select count(*) from booking_events")
	cr := startCrawl(t, e.c.Brokers, e.topic, e.site, e.clock, e.state)
	testkit.WaitFor(t, 2*time.Minute, "events flowing before the fault", func() bool {
		e.cs.keepAlive(t)
		return cr.pub.Stats().Published >= 20 && countQuery(t, db, "select count(*) from booking_events") > before
	})
	samples, checked := 0, 0
	sample := func() {
		e.cs.keepAlive(t)
		if n := checkCommittedStored(t, db, e.c.Brokers, e.group, e.topic); n > 0 {
			samples++
			checked += n
		}
	}
	start := time.Now()
	fault(t, e, sample)
	e.c.Up(t)
	e.c.WaitFor(t, e.topic, "every replica back in sync", 3*time.Minute, kafkatest.FullISR)
	e.c.WaitFor(t, "__consumer_offsets", "__consumer_offsets back in sync", 3*time.Minute, kafkatest.FullISR)
	sample()
	recovered := time.Since(start)

	st := cr.stop(t)
	stopped := time.Now()
	ids := cr.idList()
	lost := int(st.Failed + st.Dropped)
	if logged := cr.lossesLogged(t); logged != lost {
		t.Errorf("%d events counted lost (%s) but %d logged with their event_id", lost, summary(st), logged)
	}
	stored := func() int {
		return countQuery(t, db, "select count(*) from booking_events where event_id = any($1)", ids)
	}
	testkit.WaitForf(t, 5*time.Minute, func() string { return "every delivered event stored" }, func() bool {
		e.cs.keepAlive(t)
		return stored() >= len(ids)-lost
	})
	testkit.WaitFor(t, 3*time.Minute, "the group's lag back to 0", func() bool {
		e.cs.keepAlive(t)
		return lagZero(t.Context(), e.c.Brokers, e.group, e.topic)
	})
	drained := time.Since(stopped)
	got := stored()
	if got > len(ids) || got < len(ids)-lost {
		t.Errorf("%d of %d events stored with %d lost (%s)", got, len(ids), lost, summary(st))
	}
	if d := countQuery(t, db, "select count(*) - count(distinct event_id) from booking_events"); d != 0 {
		t.Errorf("%d duplicate event ids stored", d)
	}
	sample()
	diffs, err := store.New(db).VerifyProjection(context.WithoutCancel(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs[:min(len(diffs), 10)] {
		t.Errorf("projection != view: %s", d)
	}
	t.Logf("%d events handed to the publisher (%s), %d stored exactly once; %d lost and %d logged; fault to all in sync %v; crawler stop to lag 0 %v; %d offset samples checked %d messages; projection == view (%d diffs); consumer exits so far %d",
		len(ids), summary(st), got, lost, cr.lossesLogged(t), recovered.Round(time.Second), drained.Round(time.Second), samples, checked, len(diffs), e.cs.exits)
}

// waitLeader waits until partition of the topic is led by a node other than old, and returns
// how long that took since from.
func (e *env) waitLeader(t *testing.T, partition, old int, from time.Time) time.Duration {
	e.c.WaitFor(t, e.topic, "a new leader", 2*time.Minute, func(ps []kafka.Partition) bool {
		n := kafkatest.LeaderOf(ps, partition)
		return n > 0 && n != old
	})
	return time.Since(from)
}

func leaderKill(t *testing.T, e *env, sample func()) {
	part, node, err := e.c.LeaderNotController(t.Context(), e.topic)
	if err != nil || node == 0 {
		t.Fatalf("no partition led by a node other than the controller %d: %v", e.c.Controller(), err)
	}
	ctl := e.c.Controller()
	killed := time.Now()
	e.c.Signal(t, node, syscall.SIGKILL)
	sample()
	d := e.waitLeader(t, part, node, killed)
	t.Logf("SIGKILL node %d (leader of partition %d; controller %d): new leader after %v", node, part, ctl, d.Round(100*time.Millisecond))
	sample()
}

func controllerKill(t *testing.T, e *env, sample func()) {
	ctl := e.c.Controller()
	if ctl == 0 {
		t.Fatal("no active controller found")
	}
	killed := time.Now()
	e.c.Signal(t, ctl, syscall.SIGKILL)
	testkit.WaitFor(t, 2*time.Minute, "a new active controller", func() bool {
		n := e.c.Controller()
		return n != 0 && n != ctl
	})
	t.Logf("SIGKILL active controller %d: node %d active after %v", ctl, e.c.Controller(), time.Since(killed).Round(100*time.Millisecond))
	sample()
}

func rollingRestart(t *testing.T, e *env, sample func()) {
	for n := 1; n <= len(e.c.Brokers); n++ {
		began := time.Now()
		e.c.StopNode(t, n)
		sample()
		e.c.Up(t)
		e.c.WaitFor(t, e.topic, "node back in sync", 3*time.Minute, kafkatest.FullISR)
		t.Logf("node %d stopped (SIGTERM), started and back in sync in %v", n, time.Since(began).Round(100*time.Millisecond))
		sample()
	}
}

func pausedNode(t *testing.T, e *env, sample func()) {
	part, node, err := e.c.LeaderNotController(t.Context(), e.topic)
	if err != nil || node == 0 {
		t.Fatalf("no partition led by a node other than the controller: %v", err)
	}
	paused := time.Now()
	e.c.Signal(t, node, syscall.SIGSTOP)
	t.Cleanup(func() { _ = syscall.Kill(e.c.Pid(node), syscall.SIGCONT) })
	// Past the broker session timeout: the controller fences the node and moves its leadership.
	d := e.waitLeader(t, part, node, paused)
	sample()
	e.c.Signal(t, node, syscall.SIGCONT)
	t.Logf("SIGSTOP node %d (leader of partition %d): fenced, new leader after %v; SIGCONT after %v", node, part,
		d.Round(100*time.Millisecond), time.Since(paused).Round(100*time.Millisecond))
}

func consumerKills(t *testing.T, e *env, sample func()) {
	kills := testkit.EnvInt(t, "CLUSTER_CONSUMER_KILLS", 9)
	every := testkit.EnvDuration(t, "CLUSTER_CONSUMER_KILL_EVERY", 20*time.Second)
	for k := 1; k <= kills; k++ {
		next := time.Now().Add(every)
		for time.Now().Before(next) { // the kill schedule, sampling the offsets meanwhile
			sample()
			time.Sleep(time.Until(next) / 2)
		}
		i := rand.N(len(e.cs.procs))
		p := e.cs.procs[i]
		_ = p.Cmd.Process.Signal(syscall.SIGKILL)
		_ = p.Wait(t, time.Minute)
		e.cs.procs = append(e.cs.procs[:i:i], e.cs.procs[i+1:]...)
		e.cs.start()
		sample()
	}
	t.Logf("%d consumer processes SIGKILLed, one every %v, each replaced at once", kills, every)
}
