package consumer_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/consumer"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// The group coordinator refuses offset commits for a long stretch (kfake: a real broker cannot
// refuse commits on demand while it serves fetches). The consumer retries each commit with
// backoff and never ends (it once exited after 5 failed commits in a row); once the
// coordinator answers again every message is committed, each after its rows.
func TestCommitOutageOnTheCoordinatorPausesNeverEnds(t *testing.T) {
	t.Parallel()
	const topic = "booking-events"
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, topic))
	if err != nil {
		t.Fatalf("start kfake: %v", err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]
	db := storetest.NewDB(t)
	msgs := kafkatest.Encode(t, testEvents(600, "commitfault"))
	kafkatest.Produce(t, addr, topic, msgs)

	// kafka-go tries a commit 3 times per CommitMessages call: 60 refusals fail ~20 calls in a row.
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Err: kerr.CoordinatorLoadInProgress, Count: 60})
	kr := kafka.NewReader(kafkabus.GroupReaderConfig(kafkabus.GroupReaderOptions{
		Brokers: []string{addr}, Group: "g", Topic: topic,
	}))
	defer closeReader(t, kr)
	r := &checkedReader{t: t, r: kr, db: db}
	m := &counters{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- consumer.Run(ctx, r, store.New(db), consumer.Config{BatchSize: 50, BatchWait: 20 * time.Millisecond,
			Inflight: 4, Backoff: consumer.Backoff{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond},
			Logger: testkit.Logger(t, slog.LevelInfo), Metrics: m})
	}()
	testkit.WaitFor(t, 60*time.Second, "every message committed", func() bool {
		select {
		case err := <-done:
			t.Fatalf("consumer.Run ended during the commit outage: %v", err)
		default:
		}
		_, n := r.stats()
		return n == len(msgs)
	})
	cancel()
	if err := <-done; err != nil {
		t.Errorf("consumer.Run: %v", err)
	}
	commits, _ := r.stats()
	if n := countRows(t, db, "booking_events"); n != 600 || h.Hits() != 60 {
		t.Errorf("booking_events = %d (want 600), refused commits %d (want 60)", n, h.Hits())
	}
	t.Logf("%d commit calls, %d refused requests", commits, h.Hits())
}
