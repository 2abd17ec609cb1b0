package consumer_test

import (
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
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
	t.Cleanup(c.Close) // after the reader's close (cleanups run last first)
	addr := c.ListenAddrs()[0]
	db := storetest.NewDB(t)
	msgs := kafkatest.Encode(t, testEvents(600, "commitfault"))
	kafkatest.Produce(t, addr, topic, msgs)

	// kafka-go tries a commit 3 times per CommitMessages call: 60 refusals fail ~20 calls in a row.
	h := c.Fault(kfake.Fault{Keys: []kmsg.Key{kmsg.OffsetCommit}, Err: kerr.CoordinatorLoadInProgress, Count: 60})
	r := newChecked(t, addr, topic, "g", db)
	run := consumertest.Start(t, t.Context(), r, store.New(db), consumer.Config{BatchSize: 50, BatchWait: 20 * time.Millisecond,
		Inflight: 4, Backoff: consumer.Backoff{Base: 10 * time.Millisecond, Max: 50 * time.Millisecond}})
	testkit.WaitFor(t, 60*time.Second, "every message committed", func() bool {
		if ended, err := run.Ended(); ended {
			t.Fatalf("consumer.Run ended during the commit outage: %v", err)
		}
		_, n := r.stats()
		return n == len(msgs)
	})
	run.Stop(t)
	commits, _ := r.stats()
	if n := countRows(t, db, "booking_events"); n != 600 || h.Hits() != 60 {
		t.Errorf("booking_events = %d (want 600), refused commits %d (want 60)", n, h.Hits())
	}
	t.Logf("%d commit calls, %d refused requests", commits, h.Hits())
}
