package consumer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// fakeReader serves msgs, then blocks; it records commits and fetches.
type fakeReader struct {
	mu        sync.Mutex
	msgs      []kafka.Message
	next      int
	fetches   int
	commits   [][]kafka.Message
	commitErr error
	onCommit  func() // if set, called (without the lock) before each commit
}

func (r *fakeReader) FetchMessage(ctx context.Context) (kafka.Message, error) {
	r.mu.Lock()
	r.fetches++
	if r.next < len(r.msgs) {
		m := r.msgs[r.next]
		r.next++
		r.mu.Unlock()
		return m, nil
	}
	r.mu.Unlock()
	<-ctx.Done()
	return kafka.Message{}, ctx.Err()
}

func (r *fakeReader) CommitMessages(_ context.Context, msgs ...kafka.Message) error {
	if r.onCommit != nil {
		r.onCommit()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.commitErr != nil {
		return r.commitErr
	}
	r.commits = append(r.commits, append([]kafka.Message(nil), msgs...))
	return nil
}

func (r *fakeReader) state() (next, fetches int, commits [][]kafka.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next, r.fetches, append([][]kafka.Message(nil), r.commits...)
}

// committed is how many messages were committed, in all commits.
func (r *fakeReader) committed() int {
	_, _, commits := r.state()
	n := 0
	for _, c := range commits {
		n += len(c)
	}
	return n
}

// fakeSink calls fn for each Ingest.
type fakeSink struct {
	fn func(ctx context.Context, call int, batch []store.Message) (store.Result, error)
	mu sync.Mutex
	n  int
}

func (s *fakeSink) Ingest(ctx context.Context, batch []store.Message) (store.Result, error) {
	s.mu.Lock()
	s.n++
	n := s.n
	s.mu.Unlock()
	return s.fn(ctx, n, batch)
}

func msgs(n int) []kafka.Message {
	out := make([]kafka.Message, n)
	for i := range out {
		out[i] = kafka.Message{Topic: "t", Partition: i % 2, Offset: int64(i / 2), Value: []byte(`{}`), HighWaterMark: int64(n/2 + 1)}
	}
	return out
}

func testConfig(t *testing.T) Config {
	return Config{
		BatchSize: 10, BatchWait: 20 * time.Millisecond, Inflight: 2,
		Backoff:         Backoff{Base: time.Millisecond, Max: 4 * time.Millisecond},
		ShutdownTimeout: 2 * time.Second,
		Logger:          slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

// runAsync starts Run and returns a func that cancels it and waits (bounded) for its error.
func runAsync(t *testing.T, ctx context.Context, r reader, s sink, cfg Config) (stop func() error) {
	ctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- Run(ctx, r, s, cfg) }()
	return func() error {
		cancel()
		return testkit.Recv(t, errc, 10*time.Second, "Run, after the cancellation,")
	}
}

func TestRunRetriesSameBatchWithoutCommittingOrFetching(t *testing.T) {
	t.Parallel()
	for _, inflight := range []int{1, 2, 3} {
		t.Run(fmt.Sprint("inflight=", inflight), func(t *testing.T) {
			t.Parallel()
			r := &fakeReader{msgs: msgs(25)}
			cfg := testConfig(t)
			cfg.Inflight = inflight
			first := fmt.Sprint(offsets(store.Message{Partition: 0, Offset: 0}))
			var seen [][]int64
			failures := 0
			var mu sync.Mutex
			s := &fakeSink{fn: func(_ context.Context, _ int, b []store.Message) (store.Result, error) {
				mu.Lock()
				defer mu.Unlock()
				for _, m := range b {
					if m.Err == nil {
						t.Errorf("message %d: `{}` decoded without error", m.Offset)
					}
				}
				seen = append(seen, offsets(b...))
				if fmt.Sprint(offsets(b[0])) == first && failures < 4 { // the first batch fails four times
					failures++
					_, fetches, commits := r.state()
					// The batches in the database plus one read ahead, and the fetch waiting for
					// the 26th message.
					if limit := (inflight+1)*cfg.BatchSize + 1; len(commits) != 0 || fetches > limit {
						t.Errorf("during retries: %d commits, %d fetches; want 0 commits and at most %d fetches", len(commits), fetches, limit)
					}
					return store.Result{}, errors.New("connection reset")
				}
				return store.Result{DeadLettered: len(b)}, nil
			}}
			stop := runAsync(t, t.Context(), r, s, cfg)
			testkit.WaitFor(t, 10*time.Second, "three batches committed", func() bool { _, _, c := r.state(); return len(c) == 3 })
			if err := stop(); err != nil {
				t.Fatalf("Run: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) != 7 {
				t.Fatalf("Ingest calls = %d, want 4 failures + 3 batches", len(seen))
			}
			var firstBatch []string
			for _, o := range seen {
				if fmt.Sprint(o[:1]) == first {
					firstBatch = append(firstBatch, fmt.Sprint(o))
				}
			}
			if len(firstBatch) != 5 || len(slices.Compact(slices.Clone(firstBatch))) != 1 {
				t.Errorf("the first batch was tried as %v; want the same batch 5 times", firstBatch)
			}
			_, _, commits := r.state()
			if total := r.committed(); total != 25 || len(commits[0]) != 10 || len(commits[2]) != 5 {
				t.Errorf("committed %d messages in batches of %d/%d/%d; want 25 in 10/10/5", total, len(commits[0]), len(commits[1]), len(commits[2]))
			}
			for i, c := range commits {
				if got, want := fmt.Sprint(offsetsOf(c[:1])), fmt.Sprint(offsetsOf(r.msgs[i*10:i*10+1])); got != want {
					t.Errorf("commit %d starts at %s, want %s: commits must follow fetch order", i, got, want)
				}
			}
		})
	}
}

// offsets lists the (partition, offset) of store messages as partition*1000+offset.
func offsets(ms ...store.Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = int64(m.Partition)*1000 + m.Offset
	}
	return out
}

// offsetsOf is offsets for Kafka messages.
func offsetsOf(ms []kafka.Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = int64(m.Partition)*1000 + m.Offset
	}
	return out
}

// A batch stored while the one fetched before it is still in the database waits for it: offsets
// are committed in fetch order, never past a batch that is not stored.
func TestRunCommitsInFetchOrder(t *testing.T) {
	t.Parallel()
	r := &fakeReader{msgs: msgs(20)}
	cfg := testConfig(t)
	cfg.Inflight = 2
	secondStored := make(chan struct{})
	s := &fakeSink{fn: func(_ context.Context, _ int, b []store.Message) (store.Result, error) {
		if b[0].Offset == 0 { // the first batch: hold it until the second is stored
			select {
			case <-secondStored:
			case <-time.After(10 * time.Second):
				t.Error("the second batch was not inserted while the first was in the database")
			}
			time.Sleep(20 * time.Millisecond) // give a wrong implementation the time to commit the second
			if _, _, commits := r.state(); len(commits) != 0 {
				t.Errorf("%d commits while the first batch was not stored", len(commits))
			}
		} else {
			defer close(secondStored)
		}
		return store.Result{Inserted: len(b)}, nil
	}}
	stop := runAsync(t, t.Context(), r, s, cfg)
	testkit.WaitFor(t, 10*time.Second, "two batches committed", func() bool { _, _, c := r.state(); return len(c) == 2 })
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	_, _, commits := r.state()
	if got, want := fmt.Sprint(offsetsOf(commits[0]), offsetsOf(commits[1])), fmt.Sprint(offsetsOf(r.msgs[:10]), offsetsOf(r.msgs[10:])); got != want {
		t.Errorf("commits %s, want %s", got, want)
	}
}

// While a batch's offsets are being committed, the next batch is already in the database: the
// round trip to the group coordinator does not leave PostgreSQL idle.
func TestRunInsertsTheNextBatchWhileCommitting(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.Inflight = 1
	secondInserting := make(chan struct{})
	var once sync.Once
	r := &fakeReader{msgs: msgs(20)}
	r.onCommit = func() {
		once.Do(func() {
			select {
			case <-secondInserting:
			case <-time.After(5 * time.Second):
				t.Error("the second batch was not inserted during the first batch's offset commit")
			}
		})
	}
	s := &fakeSink{fn: func(_ context.Context, call int, b []store.Message) (store.Result, error) {
		switch call {
		case 1: // let the fetcher read the second batch ahead and wait with it
			testkit.WaitFor(t, 10*time.Second, "the read-ahead", func() bool { _, f, _ := r.state(); return f >= 20 })
			time.Sleep(20 * time.Millisecond)
		case 2:
			close(secondInserting)
		}
		return store.Result{Inserted: len(b)}, nil
	}}
	stop := runAsync(t, t.Context(), r, s, cfg)
	testkit.WaitFor(t, 10*time.Second, "two batches committed", func() bool { _, _, c := r.state(); return len(c) == 2 })
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestRunReturnsWhenTheReaderIsClosed(t *testing.T) {
	t.Parallel()
	s := &fakeSink{fn: func(context.Context, int, []store.Message) (store.Result, error) { return store.Result{}, nil }}
	err := Run(t.Context(), eofReader{}, s, testConfig(t))
	if !errors.Is(err, io.EOF) {
		t.Fatalf("Run = %v, want io.EOF wrapped", err)
	}
}

// flakyReader fails its first fails fetches the way kafka-go does while the broker is down, then
// serves like fakeReader.
type flakyReader struct {
	*fakeReader
	mu    sync.Mutex
	fails int
}

func (r *flakyReader) FetchMessage(ctx context.Context) (kafka.Message, error) {
	r.mu.Lock()
	if r.fails > 0 {
		r.fails--
		r.mu.Unlock()
		return kafka.Message{}, errors.New("dial tcp 127.0.0.1:19092: connect: connection refused")
	}
	r.mu.Unlock()
	return r.fakeReader.FetchMessage(ctx)
}

func TestRunRetriesFetchWhileTheBrokerIsDown(t *testing.T) {
	t.Parallel()
	r := &flakyReader{fakeReader: &fakeReader{msgs: msgs(20)}, fails: 5}
	s := &fakeSink{fn: func(_ context.Context, _ int, b []store.Message) (store.Result, error) {
		return store.Result{DeadLettered: len(b)}, nil
	}}
	stop := runAsync(t, t.Context(), r, s, testConfig(t))
	testkit.WaitFor(t, 10*time.Second, "both batches committed after the outage", func() bool { _, _, c := r.state(); return len(c) == 2 })
	if err := stop(); err != nil {
		t.Fatalf("Run = %v after a fetch outage, want nil (the loop must outlive it)", err)
	}
}

type eofReader struct{}

func (eofReader) FetchMessage(context.Context) (kafka.Message, error)    { return kafka.Message{}, io.EOF }
func (eofReader) CommitMessages(context.Context, ...kafka.Message) error { return nil }

// A batch closes at MaxBatchBytes whatever its count, and a value over the event limit is held
// only as its first DeadValuePrefix bytes from the moment it is fetched.
func TestRunBoundsBatchesInBytes(t *testing.T) {
	t.Parallel()
	var in []kafka.Message
	for i := range 40 {
		size := 20 << 10
		if i%10 == 9 {
			size = 900 << 10 // oversize junk
		}
		in = append(in, kafka.Message{Topic: "t", Partition: 0, Offset: int64(i), Value: make([]byte, size)})
	}
	r := &fakeReader{msgs: in}
	var mu sync.Mutex
	var sizes []int
	s := &fakeSink{fn: func(_ context.Context, _ int, b []store.Message) (store.Result, error) {
		n := 0
		for _, m := range b {
			n += len(m.Key) + len(m.Value)
			if m.Offset%10 == 9 && (len(m.Value) != DeadValuePrefix || !errors.Is(m.Err, events.ErrTooLarge) ||
				!strings.Contains(m.Err.Error(), "921600 bytes")) {
				t.Errorf("oversize message %d reached the store with %d bytes and error %v", m.Offset, len(m.Value), m.Err)
			}
		}
		mu.Lock()
		sizes = append(sizes, n)
		mu.Unlock()
		return store.Result{DeadLettered: len(b)}, nil
	}}
	cfg := testConfig(t)
	cfg.BatchSize, cfg.MaxBatchBytes = 1000, 64<<10
	stop := runAsync(t, t.Context(), r, s, cfg)
	testkit.WaitFor(t, 10*time.Second, "every message committed", func() bool { return r.committed() == 40 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, n := range sizes {
		// A batch closes once it reaches the bound, so it exceeds it by less than one message.
		if n >= cfg.MaxBatchBytes+events.MaxEventBytes {
			t.Errorf("a batch of %d bytes; want < %d (batch sizes %v)", n, cfg.MaxBatchBytes+events.MaxEventBytes, sizes)
		}
	}
	if len(sizes) < 10 {
		t.Errorf("%d batches for 40 messages of 20 KB under a 64 KiB bound; want >= 10 (sizes %v)", len(sizes), sizes)
	}
	_, _, commits := r.state()
	for _, c := range commits {
		for _, m := range c {
			if m.Offset%10 == 9 && len(m.Value) > DeadValuePrefix {
				t.Fatalf("the loop kept oversize message %d's %d-byte value for its commit", m.Offset, len(m.Value))
			}
		}
	}
}
