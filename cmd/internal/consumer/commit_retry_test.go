package consumer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// A Kafka outage pauses the consumer, never ends it: offset commits that keep
// failing are retried with backoff while nothing else moves, memory stays bounded (no fetch past
// the batches in flight and the one read ahead), and once the coordinator answers again every
// batch is committed, in fetch order.
func TestRunRetriesCommitsWhileTheyFail(t *testing.T) {
	t.Parallel()
	for _, inflight := range []int{1, 4} {
		t.Run(fmt.Sprint("inflight=", inflight), func(t *testing.T) {
			t.Parallel()
			const failures = 25 // far more than the old limit of 5 in a row
			r := &fakeReader{msgs: msgs(100)}
			var mu sync.Mutex
			failed := 0
			r.onCommit = func() {
				mu.Lock()
				defer mu.Unlock()
				r.mu.Lock()
				defer r.mu.Unlock()
				if failed < failures {
					failed++
					r.commitErr = errors.New("coordinator gone")
				} else {
					r.commitErr = nil
				}
			}
			s := &fakeSink{fn: func(_ context.Context, _ int, b []store.Message) (store.Result, error) {
				return store.Result{Inserted: len(b)}, nil
			}}
			cfg := testConfig(t)
			cfg.Inflight = inflight
			health := &Health{}
			cfg.Health = health
			sawStuck := false
			cfg.Metrics = &stuckCounter{onStuck: func(reason string, delta int) {
				if delta > 0 && strings.Contains(health.String(), "offset commit failed") {
					sawStuck = true
				}
			}}
			stop := runAsync(t, t.Context(), r, s, cfg)
			testkit.WaitFor(t, 10*time.Second, "all 100 messages committed", func() bool { return r.committed() == 100 })
			if next, _, _ := r.state(); next > 100 {
				t.Fatalf("fetched %d", next)
			}
			if err := stop(); err != nil {
				t.Fatalf("Run = %v after %d failed commits; want nil: the loop must outlive them", err, failures)
			}
			_, _, commits := r.state()
			for i, c := range commits {
				if got, want := fmt.Sprint(offsetsOf(c)), fmt.Sprint(offsetsOf(r.msgs[i*10:i*10+10])); got != want {
					t.Errorf("commit %d = %s, want %s (fetch order, each batch once)", i, got, want)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if failed != failures || !sawStuck || health.String() != "" {
				t.Errorf("failed commits %d (want %d), reported stuck %v (want true), health now %q (want healthy)",
					failed, failures, sawStuck, health.String())
			}
		})
	}
}

// While commits fail, nothing is fetched past the batches in the database and the one read ahead.
func TestRunCommitRetriesHoldMemoryBounded(t *testing.T) {
	t.Parallel()
	r := &fakeReader{msgs: msgs(200), commitErr: errors.New("coordinator gone")}
	var calls sync.WaitGroup
	calls.Add(1)
	var once sync.Once
	r.onCommit = func() {
		_, _, _ = r.state()
		once.Do(calls.Done)
	}
	s := &fakeSink{fn: func(_ context.Context, _ int, b []store.Message) (store.Result, error) {
		return store.Result{Inserted: len(b)}, nil
	}}
	cfg := testConfig(t)
	stop := runAsync(t, t.Context(), r, s, cfg)
	calls.Wait()
	time.Sleep(200 * time.Millisecond) // many retries at 1-4 ms
	next, _, commits := r.state()
	// The batch being committed, Inflight in the database, one read ahead, and the fetch of the
	// next message that is then waiting to be handed over.
	if limit := (cfg.Inflight+2)*cfg.BatchSize + 1; next > limit || len(commits) != 0 {
		t.Errorf("while commits fail: fetched %d messages (limit %d), %d commits accepted", next, limit, len(commits))
	}
	if err := stop(); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
}

// stuckCounter is a Metrics with the StuckMetrics extension.
type stuckCounter struct {
	nopMetrics
	onStuck func(reason string, delta int)
	mu      sync.Mutex
	stuck   map[string]int
	commits int
}

func (c *stuckCounter) Stuck(reason string, delta int) {
	c.mu.Lock()
	if c.stuck == nil {
		c.stuck = map[string]int{}
	}
	c.stuck[reason] += delta
	f := c.onStuck
	c.mu.Unlock()
	if f != nil {
		f(reason, delta)
	}
}

func (c *stuckCounter) CommitFailed() { c.mu.Lock(); c.commits++; c.mu.Unlock() }
