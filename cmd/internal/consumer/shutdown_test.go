package consumer

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// On shutdown, a batch stored after one that never was is not committed either.
func TestRunShutdownCommitsNothingPastAnUnstoredBatch(t *testing.T) {
	t.Parallel()
	r := &fakeReader{msgs: msgs(20)}
	cfg := testConfig(t)
	cfg.Inflight = 2
	var mu sync.Mutex
	secondStored := false
	s := &fakeSink{fn: func(_ context.Context, _ int, b []store.Message) (store.Result, error) {
		if b[0].Offset == 0 {
			return store.Result{}, errors.New("connection reset") // the first batch never gets in
		}
		mu.Lock()
		secondStored = true
		mu.Unlock()
		return store.Result{Inserted: len(b)}, nil
	}}
	stop := runAsync(t, t.Context(), r, s, cfg)
	testkit.WaitFor(t, 10*time.Second, "the second batch stored", func() bool { mu.Lock(); defer mu.Unlock(); return secondStored })
	stopCommitsNothing(t, stop, r, "past a batch that was never stored")
}

func TestRunShutdownLetsInFlightInsertFinishAndCommits(t *testing.T) {
	t.Parallel()
	r := &fakeReader{msgs: msgs(10)}
	inFlight := make(chan struct{})
	release := make(chan struct{})
	var insertErr error
	s := &fakeSink{fn: func(ctx context.Context, _ int, b []store.Message) (store.Result, error) {
		close(inFlight)
		<-release
		insertErr = ctx.Err()
		return store.Result{Inserted: len(b)}, nil
	}}
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, r, s, testConfig(t)) }()
	<-inFlight
	// The fetcher reads ahead while the insert runs: it is now waiting for an 11th message.
	testkit.WaitFor(t, 10*time.Second, "the read-ahead fetch", func() bool { _, f, _ := r.state(); return f == 11 })
	cancel()
	time.Sleep(20 * time.Millisecond) // give a wrong implementation the chance to abandon the insert
	close(release)
	if err := testkit.Recv(t, errc, 10*time.Second, "Run"); err != nil {
		t.Fatalf("Run = %v, want nil on shutdown", err)
	}
	if insertErr != nil {
		t.Errorf("insert ctx was cancelled (%v) before the shutdown timeout", insertErr)
	}
	_, fetches, commits := r.state()
	if len(commits) != 1 || len(commits[0]) != 10 {
		t.Errorf("commits = %d, want the in-flight batch of 10 committed once", len(commits))
	}
	if fetches != 11 {
		t.Errorf("fetches = %d, want 11 (10 + the read-ahead one): no fetch after shutdown began", fetches)
	}
}

func TestRunShutdownDuringRetryCommitsNothing(t *testing.T) {
	t.Parallel()
	r := &fakeReader{msgs: msgs(10)}
	failing := make(chan struct{}, 100)
	s := &fakeSink{fn: func(context.Context, int, []store.Message) (store.Result, error) {
		failing <- struct{}{}
		return store.Result{}, errors.New("db down")
	}}
	stop := runAsync(t, t.Context(), r, s, testConfig(t))
	for range 3 {
		testkit.Recv(t, failing, 10*time.Second, "an insert attempt")
	}
	stopCommitsNothing(t, stop, r, "while the database failed")
}

func TestRunShutdownTimeoutCutsAHungInsert(t *testing.T) {
	t.Parallel()
	r := &fakeReader{msgs: msgs(3)}
	inFlight := make(chan struct{})
	s := &fakeSink{fn: func(ctx context.Context, _ int, _ []store.Message) (store.Result, error) {
		close(inFlight)
		<-ctx.Done()
		return store.Result{}, ctx.Err()
	}}
	cfg := testConfig(t)
	cfg.ShutdownTimeout = 50 * time.Millisecond
	stop := runAsync(t, t.Context(), r, s, cfg)
	<-inFlight
	stopCommitsNothing(t, stop, r, "of an insert that never finished")
}

// stopCommitsNothing stops a run (runAsync's stop), which must return nil, and wants r to have
// accepted no commit; why says which batches would have been wrongly committed.
func stopCommitsNothing(t *testing.T, stop func() error, r *fakeReader, why string) {
	t.Helper()
	if err := stop(); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if _, _, commits := r.state(); len(commits) != 0 {
		t.Errorf("committed %d batches %s", len(commits), why)
	}
}
