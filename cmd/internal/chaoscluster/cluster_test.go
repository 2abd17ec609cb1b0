//go:build cluster

package chaoscluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// env is what every scenario shares: the cluster, the database, the topic and group, the
// simulated site with the crawler's state, the consumer processes and the notifier.
type env struct {
	c            *kafkatest.Cluster
	db           *pgxpool.Pool
	cs           *consumers
	al           *alerts
	site         *site.Site
	clock        func() time.Time
	state        crawler.StateDir
	topic, group string
	offsets      offsetWatch
}

func TestClusterChaos(t *testing.T) {
	c := kafkatest.NewCluster(t)
	root := testkit.ModuleRoot(t)
	db, dbURL := storetest.NewDBURL(t)
	e := &env{c: c, db: db, topic: kafkatest.Name(t, "cluster"), group: kafkatest.Name(t, "group"),
		state: crawler.StateDir{Dir: t.TempDir()}, offsets: offsetWatch{}}
	if err := kafkabus.CreateTopicWith(t.Context(), c.Brokers, e.topic, kafkabus.TopicSpec{Partitions: partitions}); err != nil {
		t.Fatal(err)
	}
	c.WaitFor(t, e.topic, "every replica in sync", time.Minute, kafkatest.FullISR)
	e.site, e.clock = fastSim(t, root)
	bin := buildConsumer(t, root)
	e.cs = &consumers{t: t, bin: bin, dbURL: dbURL, topic: e.topic, group: e.group, brokers: c.Brokers}
	for range 3 {
		e.cs.start()
	}
	defer e.cs.stopAll(t)
	e.al = startAlerts(t, bin, dbURL, c.Brokers, e.topic, kafkatest.Name(t, "notify"))
	defer func() { e.al.proc.Stop(t, time.Minute) }()

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
		t.Run(sc.name, func(t *testing.T) { e.scenario(t, sc.fault) })
	}
	t.Logf("consumer processes that exited on their own over all scenarios: %d; the notifier: %d", e.cs.exits, e.al.exits)
}

// keepAlive restarts any consumer or notifier process that exited on its own.
func (e *env) keepAlive(t *testing.T) {
	e.cs.keepAlive(t)
	e.al.keepAlive(t)
}

// scenario runs fault while the crawler publishes, brings every node back, and checks the promises.
func (e *env) scenario(t *testing.T, fault func(t *testing.T, e *env, sample func())) {
	before := countQuery(t, e.db, "select count(*) from booking_events")
	cr := startCrawl(t, e.c.Brokers, e.topic, e.site, e.clock, e.state)
	testkit.WaitFor(t, 2*time.Minute, "events flowing before the fault", func() bool {
		e.keepAlive(t)
		return cr.pub.Stats().Published >= 20 && countQuery(t, e.db, "select count(*) from booking_events") > before
	})
	var smp sampled
	sample := func() {
		e.keepAlive(t)
		smp.add(checkCommittedStored(t, e.db, e.c.Brokers, e.group, e.topic, e.offsets))
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
	ids := cr.idList(t)
	lost := int(st.Failed + st.Queued)
	if logged := cr.lossesLogged(t); logged != lost {
		t.Errorf("%d events counted lost (%s) but %d logged with their event_id", lost, summary(st), logged)
	}
	got := e.drained(t, ids, lost, st)
	drained := time.Since(stopped)
	sample()
	diffs := e.verifyProjection(t)
	alerted := e.al.check(t, e.db, ids, func() { e.cs.keepAlive(t) })
	t.Logf("%d events handed to the publisher (%s), %d stored exactly once; %d lost and %d logged; fault to all in sync %v; crawler stop to lag 0 %v; %d offset samples checked %d messages, committed offsets never went back; projection == view (%d diffs); consumer exits so far %d; alerts: %s",
		len(ids), summary(st), got, lost, cr.lossesLogged(t), recovered.Round(time.Second), drained.Round(time.Second), smp.samples, smp.messages, diffs, e.cs.exits, alerted)
}

// drained waits until every delivered event is stored and the group's lag is 0, checks that each
// is stored once, and returns how many of ids are stored.
func (e *env) drained(t *testing.T, ids []uuid.UUID, lost int, st kafkabus.PublisherStats) int {
	stored := func() int {
		return countQuery(t, e.db, "select count(*) from booking_events where event_id = any($1)", ids)
	}
	testkit.WaitFor(t, 5*time.Minute, "every delivered event stored", func() bool {
		e.keepAlive(t)
		return stored() >= len(ids)-lost
	})
	testkit.WaitForf(t, 3*time.Minute, func() string {
		return "the group's lag back to 0: " + lagReport(t.Context(), e.c.Brokers, e.group, e.topic)
	}, func() bool {
		e.keepAlive(t)
		return lagZero(t.Context(), e.c.Brokers, e.group, e.topic)
	})
	got := stored()
	if got > len(ids) || got < len(ids)-lost {
		t.Errorf("%d of %d events stored with %d lost (%s)", got, len(ids), lost, summary(st))
	}
	if d := countQuery(t, e.db, "select count(*) - count(distinct event_id) from booking_events"); d != 0 {
		t.Errorf("%d duplicate event ids stored", d)
	}
	return got
}

// verifyProjection checks listing_lifetimes against the booking_lifetimes view; it returns the
// number of differences.
func (e *env) verifyProjection(t *testing.T) int {
	diffs, err := store.New(e.db).VerifyProjection(context.WithoutCancel(t.Context()))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs[:min(len(diffs), 10)] {
		t.Errorf("projection != view: %s", d)
	}
	return len(diffs)
}
