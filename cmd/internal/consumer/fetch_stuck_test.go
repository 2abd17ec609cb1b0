package consumer

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// downReader fails every fetch the way kafka-go's group reader does while the group coordinator
// is away, until up is called; then it serves like fakeReader.
type downReader struct {
	*fakeReader
	mu       sync.Mutex
	down     bool
	failures int
}

func (r *downReader) FetchMessage(ctx context.Context) (kafka.Message, error) {
	r.mu.Lock()
	if r.down {
		r.failures++
		r.mu.Unlock()
		return kafka.Message{}, errors.New("consumer group g: [15] Group Coordinator Not Available")
	}
	r.mu.Unlock()
	return r.fakeReader.FetchMessage(ctx)
}

func (r *downReader) failed() int { r.mu.Lock(); defer r.mu.Unlock(); return r.failures }
func (r *downReader) up()         { r.mu.Lock(); r.down = false; r.mu.Unlock() }

// testClock is a Config.Now the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *testClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }
func (c *testClock) fetchStuck(h *Health) bool {
	return strings.Contains(h.String(), "stuck: fetch failed")
}

// Fetch failures mark the consumer stuck once they are both Config.AlarmAfter in a row and
// Config.FetchStuckAfter (a minute by default) old, so that a broker's rolling restart (a few
// failures over seconds) stays healthy while a cluster that lost its quorum (the group
// coordinator gone for minutes) turns /healthz 503, naming the cause. A fetch that succeeds
// clears it.
func TestFetchFailuresMarkTheConsumerStuck(t *testing.T) {
	t.Parallel()
	t.Run("AlarmAfterFailuresAndAMinute", func(t *testing.T) {
		t.Parallel()
		clock := &testClock{now: time.Date(2026, 12, 1, 19, 14, 37, 0, time.UTC)}
		r := &downReader{fakeReader: &fakeReader{msgs: msgs(10)}, down: true}
		s := &fakeSink{fn: func(_ context.Context, _ int, b []store.Message) (store.Result, error) {
			return store.Result{Inserted: len(b)}, nil
		}}
		health, gauge := &Health{}, &stuckCounter{}
		cfg := testConfig(t)
		cfg.AlarmAfter, cfg.Health, cfg.Metrics, cfg.Now = 20, health, gauge, clock.Now
		stop := runAsync(t, t.Context(), r, s, cfg)

		testkit.WaitFor(t, 10*time.Second, "more fetch failures than --alarm-after", func() bool { return r.failed() > 2*cfg.AlarmAfter })
		if clock.fetchStuck(health) {
			t.Fatalf("stuck after %d failed fetches within a second: %q; want healthy until a minute has passed", r.failed(), health)
		}
		clock.Add(DefaultFetchStuckAfter)
		testkit.WaitFor(t, 10*time.Second, "stuck after a minute of failed fetches", func() bool { return clock.fetchStuck(health) })
		if got := health.String(); !strings.Contains(got, "Group Coordinator Not Available") || !strings.Contains(got, "in a row") {
			t.Errorf("/healthz says %q; want the number of failures and the cause", got)
		}
		gauge.mu.Lock()
		if gauge.stuck["fetch"] != 1 {
			t.Errorf("stuck gauge %v, want fetch=1", gauge.stuck)
		}
		gauge.mu.Unlock()

		r.up()
		testkit.WaitFor(t, 10*time.Second, "healthy again once a fetch succeeds", func() bool { return health.String() == "" })
		testkit.WaitFor(t, 10*time.Second, "every message committed", func() bool { return r.committed() == 10 })
		gauge.mu.Lock()
		if gauge.stuck["fetch"] != 0 {
			t.Errorf("stuck gauge %v after recovery, want fetch=0", gauge.stuck)
		}
		gauge.mu.Unlock()
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("AMinuteOfFewerFailures", func(t *testing.T) {
		t.Parallel()
		clock := &testClock{now: time.Date(2026, 12, 1, 19, 14, 37, 0, time.UTC)}
		r := &downReader{fakeReader: &fakeReader{}, down: true}
		health := &Health{}
		cfg := testConfig(t)
		cfg.AlarmAfter, cfg.Health, cfg.Now = 1000, health, clock.Now
		stop := runAsync(t, t.Context(), r, &fakeSink{}, cfg)
		testkit.WaitFor(t, 10*time.Second, "a first failed fetch", func() bool { return r.failed() > 0 })
		clock.Add(10 * DefaultFetchStuckAfter)
		testkit.WaitFor(t, 10*time.Second, "50 more failed fetches", func() bool { return r.failed() > 50 })
		if clock.fetchStuck(health) {
			t.Fatalf("stuck after %d failed fetches (--alarm-after %d): %q", r.failed(), cfg.AlarmAfter, health)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	})
}
