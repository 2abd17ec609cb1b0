//go:build cluster

package chaoscluster_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// BenchmarkClusterNodeDown (compose/dev/bench-cluster): with all three nodes up, then with node 3
// stopped (SIGTERM; its partitions led elsewhere, min ISR 2 still met): the p99 of the call the
// crawl waits for, a spool append with its fsync (2,000 one-event batches, one a millisecond; the
// metric keeps its name publish_p99_us), the acknowledgement p99 of one-event acks=all writes (the
// SyncWriter of crawler replay, 200 of them) and the wall time of a crawl of the simulated site
// from an empty state until the publisher has every event acknowledged (median of 3).
func BenchmarkClusterNodeDown(b *testing.B) {
	c := kafkatest.NewCluster(b)
	root := testkit.ModuleRoot(b)
	topic := kafkatest.Name(b, "down")
	if err := kafkabus.CreateTopicWith(b.Context(), c.Brokers, topic, kafkabus.TopicSpec{Partitions: partitions}); err != nil {
		b.Fatal(err)
	}
	c.WaitFor(b, topic, "every replica in sync", time.Minute, kafkatest.FullISR)
	site, clock := fastSim(b, root)
	for b.Loop() {
		up := measureNode(b, c.Brokers, topic, site, clock)
		c.StopNode(b, 3)
		c.WaitFor(b, topic, "no leader on node 3", 2*time.Minute, func(ps []kafka.Partition) bool {
			for _, p := range ps {
				if p.Leader.ID == 3 || p.Leader.ID <= 0 {
					return false
				}
			}
			return true
		})
		down := measureNode(b, c.Brokers, topic, site, clock)
		c.Up(b)
		c.WaitFor(b, topic, "node 3 back in sync", 3*time.Minute, kafkatest.FullISR)
		b.Logf("all up: Publish p99 %v, ack p50 %v p99 %v, crawl %v; node 3 down: Publish p99 %v, ack p50 %v p99 %v, crawl %v",
			up.publishP99, up.ackP50, up.ackP99, up.crawl, down.publishP99, down.ackP50, down.ackP99, down.crawl)
		b.ReportMetric(float64(up.publishP99.Microseconds()), "up_publish_p99_us")
		b.ReportMetric(float64(down.publishP99.Microseconds()), "down_publish_p99_us")
		b.ReportMetric(ms(up.ackP99), "up_ack_p99_ms")
		b.ReportMetric(ms(down.ackP99), "down_ack_p99_ms")
		b.ReportMetric(up.crawl.Seconds(), "up_crawl_s")
		b.ReportMetric(down.crawl.Seconds(), "down_crawl_s")
		b.ReportMetric(down.crawl.Seconds()/up.crawl.Seconds(), "down/up_crawl")
	}
}

type nodeNumbers struct {
	publishP99, ackP50, ackP99, crawl time.Duration
}

func measureNode(b *testing.B, brokers []string, topic string, st *site.Site, clock func() time.Time) nodeNumbers {
	ctx := context.WithoutCancel(b.Context())
	var out nodeNumbers
	pub := kafkatest.NewSpooled(b, kafkabus.PublisherConfig{Brokers: brokers, Topic: topic})
	calls := make([]time.Duration, 0, 2000)
	for _, e := range eventstest.CrawlEvents(0, 2000, "pub") {
		t := time.Now()
		pub.Publish(e) // one spool batch, fsynced: what a site crawl's emit waits for
		calls = append(calls, time.Since(t))
		time.Sleep(time.Millisecond)
	}
	closePub(b, pub)
	out.publishP99 = pct(calls, 0.99)

	sw := kafkabus.NewSyncWriter(kafkabus.PublisherConfig{Brokers: brokers, Topic: topic})
	defer sw.Close()
	acks := make([]time.Duration, 0, 200)
	for _, e := range eventstest.CrawlEvents(0, 200, "ack") {
		t := time.Now()
		if err := sw.WriteEvents(ctx, []events.Event{e}); err != nil {
			b.Fatalf("acks=all write: %v", err)
		}
		acks = append(acks, time.Since(t))
	}
	out.ackP50, out.ackP99 = pct(acks, 0.5), pct(acks, 0.99)

	crawls := make([]time.Duration, 0, 3)
	for range 3 {
		crawls = append(crawls, crawlOnce(b, brokers, topic, st, clock))
	}
	out.crawl = pct(crawls, 0.5)
	return out
}

// crawlOnce crawls site from an empty state (every listing is new) with a new publisher and
// returns the time until the publisher has every event acknowledged.
func crawlOnce(b *testing.B, brokers []string, topic string, st *site.Site, clock func() time.Time) time.Duration {
	runner := &crawler.Runner{Sites: []*site.Site{st}, State: crawler.StateDir{Dir: b.TempDir()},
		Logger: slog.New(slog.DiscardHandler), Now: clock}
	pub := kafkatest.SpoolRunner(b, runner, kafkabus.PublisherConfig{Brokers: brokers, Topic: topic})
	t := time.Now()
	if _, err := runner.Run(b.Context()); err != nil {
		b.Fatalf("crawl: %v", err)
	}
	closePub(b, pub)
	d := time.Since(t)
	if st := pub.Stats(); st.Failed+st.Queued > 0 || st.Published == 0 {
		b.Fatalf("crawl publisher stats %+v", st)
	}
	return d
}

func closePub(b *testing.B, pub *kafkatest.Spooled) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b.Context()), 2*time.Minute)
	defer cancel()
	if err := pub.Close(ctx); err != nil {
		b.Fatalf("publisher Close: %v", err)
	}
}

func pct(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))].Round(10 * time.Microsecond)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
