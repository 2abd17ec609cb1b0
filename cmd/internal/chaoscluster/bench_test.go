//go:build cluster

package chaoscluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// BenchmarkClusterDrain (compose/dev/bench-cluster): a backlog of BENCH_CLUSTER_EVENTS (1M) on a
// 3-partition topic of the three-node cluster, drained by one booking-consumer run process into a
// fresh database, then by three in one group into another, with a fourth joining at a third of the
// backlog and one leaving (SIGTERM) at two thirds: both rebalances happen mid-drain. Rates are
// rows over the span of ingested_at (first to last batch: process start-up and group join not
// counted); a rebalance's pause is the longest gap between batches in the 30 s after it (the
// join's window ends at the leave).
func BenchmarkClusterDrain(b *testing.B) {
	n := testkit.EnvInt(b, "BENCH_CLUSTER_EVENTS", 1_000_000)
	c := kafkatest.NewCluster(b)
	root := testkit.ModuleRoot(b)
	bin := buildConsumer(b, root)
	topic := kafkatest.Name(b, "drain")
	if err := kafkabus.CreateTopicWith(b.Context(), c.Brokers, topic, kafkabus.TopicSpec{Partitions: partitions}); err != nil {
		b.Fatal(err)
	}
	c.WaitFor(b, topic, "every replica in sync", time.Minute, kafkatest.FullISR)
	t0 := time.Now()
	produceAll(b, c.Brokers, topic, kafkatest.Encode(b, eventstest.CrawlEvents(0, n, "drain")))
	b.Logf("%d events produced (RF 3, acks=all) in %v", n, time.Since(t0).Round(time.Second))
	for b.Loop() {
		one, oneGap := drain(b, c, bin, topic, n, 1, false)
		three, pauses := drain(b, c, bin, topic, n, 3, true)
		b.Logf("1 process: %.0f events/s (longest gap between batches %v); 3 processes: %.0f events/s, %.2fx; pause after a member joined %v, after one left %v",
			one, oneGap[0], three, three/one, pauses[0], pauses[1])
		b.ReportMetric(float64(n), "events")
		b.ReportMetric(one, "one_events/s")
		b.ReportMetric(three, "three_events/s")
		b.ReportMetric(three/one, "three/one")
		b.ReportMetric(pauses[0].Seconds(), "join_pause_s")
		b.ReportMetric(pauses[1].Seconds(), "leave_pause_s")
	}
}

// drain runs procs consumer processes of a new group over topic into a fresh database until it
// holds n rows; with rebalance, a fourth process joins at n/3 and one is stopped at 2n/3. It
// returns the rate and the pauses after the join and the leave (only the whole run's longest gap,
// twice, without rebalance).
func drain(b *testing.B, c *kafkatest.Cluster, bin, topic string, n, procs int, rebalance bool) (float64, [2]time.Duration) {
	db, dbURL := storetest.NewDBURL(b)
	cs := &consumers{t: b, bin: bin, dbURL: dbURL, topic: topic, group: kafkatest.Name(b, fmt.Sprintf("drain%d", procs)), brokers: c.Brokers}
	defer cs.stopAll(b)
	for range procs {
		cs.start()
	}
	var at [2]time.Time
	if rebalance {
		waitRows(b, cs, db, n/3)
		at[0] = time.Now()
		cs.start()
		waitRows(b, cs, db, 2*n/3)
		at[1] = time.Now()
		cs.procs[0].Stop(b, time.Minute)
		cs.procs = cs.procs[1:]
	}
	waitRows(b, cs, db, n)
	var first, last time.Time
	ctx := context.WithoutCancel(b.Context())
	if err := db.QueryRow(ctx, "select min(ingested_at), max(ingested_at) from booking_events").Scan(&first, &last); err != nil {
		b.Fatal(err)
	}
	rate := float64(n) / last.Sub(first).Seconds()
	if !rebalance {
		g := longestGap(b, db, first, last)
		return rate, [2]time.Duration{g, g}
	}
	joinEnd := at[0].Add(30 * time.Second)
	if at[1].Before(joinEnd) { // the join's window ends at the leave
		joinEnd = at[1]
	}
	return rate, [2]time.Duration{longestGap(b, db, at[0], joinEnd), longestGap(b, db, at[1], at[1].Add(30*time.Second))}
}

// produceAll writes msgs with acks=all through every broker of the cluster (kafkatest.Produce
// bootstraps from one).
func produceAll(b *testing.B, brokers []string, topic string, msgs []kafka.Message) {
	tr := &kafka.Transport{DialTimeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(brokers...), Topic: topic, Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, BatchSize: 2000, BatchBytes: 1_000_000, Transport: tr}
	defer w.Close()
	ctx, cancel := context.WithTimeout(b.Context(), 20*time.Minute)
	defer cancel()
	for start := 0; start < len(msgs); start += 10_000 {
		if err := w.WriteMessages(ctx, msgs[start:min(start+10_000, len(msgs))]...); err != nil {
			b.Fatalf("produce %d messages: %.300v", len(msgs), err)
		}
	}
}

func waitRows(b *testing.B, cs *consumers, db *pgxpool.Pool, want int) {
	testkit.WaitFor(b, 20*time.Minute, fmt.Sprintf("%d rows stored", want), func() bool {
		cs.keepAlive(b)
		return countQuery(b, db, "select count(*) from booking_events") >= want
	})
}

// longestGap is the longest time between two consecutive batch transactions (ingested_at is the
// transaction's start) among those that began in (from, to].
func longestGap(b *testing.B, db *pgxpool.Pool, from, to time.Time) time.Duration {
	var us int64
	err := db.QueryRow(context.WithoutCancel(b.Context()), `
		select coalesce(max(extract(epoch from gap) * 1e6), 0)::bigint from (
			select ts, ts - lag(ts) over (order by ts) as gap from (select distinct ingested_at as ts from booking_events) d
		) g where ts > $1 and ts <= $2`, from, to).Scan(&us)
	if err != nil {
		b.Fatal(err)
	}
	return (time.Duration(us) * time.Microsecond).Round(10 * time.Millisecond)
}
