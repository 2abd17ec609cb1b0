// Package consumertest starts the consumer loop (consumer.Run) in tests: one group reader
// configured as production configures it, one background run with test-sized batches and backoff,
// and metrics the test can read. Only tests import it.
package consumertest

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
)

// NewReader is the production group reader (kafkabus.NewGroupReader) for topic and group, with
// a queue of 1000 and its logs into the test's output; it is closed when the test ends (Close).
func NewReader(tb testing.TB, addr, topic, group string) *kafkabus.GroupReader {
	tb.Helper()
	r, err := kafkabus.NewGroupReader(kafkabus.GroupReaderOptions{
		Brokers: []string{addr}, Group: group, Topic: topic, QueueCapacity: 1000,
		Logger: testkit.Logger(tb, slog.LevelWarn),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { Close(tb, r) })
	return r
}

// Close closes r, failing the test if that takes more than 10 s (a leave-group that hangs). A
// close error is not what the tests check. Closing twice is harmless.
func Close(tb testing.TB, r interface{ Close() error }) {
	done := make(chan struct{})
	go func() { _ = r.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		tb.Error("reader.Close took more than 10s")
	}
}

// Counters is a consumer.Metrics the test reads.
type Counters struct {
	Consumed, Inserted, Duplicates, Dead, Retries, Batches atomic.Int64
}

// Batch counts a stored batch.
func (c *Counters) Batch(size int, r store.Result, _ time.Duration) {
	c.Consumed.Add(int64(size))
	c.Inserted.Add(int64(r.Inserted))
	c.Duplicates.Add(int64(r.Duplicates))
	c.Dead.Add(int64(r.DeadLettered))
	c.Batches.Add(1)
}

// Retry counts a retried insert.
func (c *Counters) Retry() { c.Retries.Add(1) }

// Lag is ignored.
func (c *Counters) Lag(string, int, int64) {}

// Reader is what consumer.Run reads from (*kafkabus.GroupReader, or a test's wrapper of one).
type Reader interface {
	FetchMessage(ctx context.Context) (kafka.Message, error)
	CommitMessages(ctx context.Context, msgs ...kafka.Message) error
}

// Sink is what consumer.Run writes into (*store.Store, or a test's wrapper of one).
type Sink interface {
	Ingest(ctx context.Context, batch []store.Message) (store.Result, error)
}

// Running is consumer.Run in the background.
type Running struct {
	Metrics  *Counters // the run's metrics, unless the Config named its own
	cancel   context.CancelFunc
	done     chan error
	returned bool
	err      error
}

// Start runs consumer.Run(ctx, r, s, cfg) in the background until Stop (or the end of the test).
// Zero fields of cfg take test values: BatchWait 50 ms, backoff 20 ms to 200 ms, a Warn logger
// into the test's output, and Counters as the metrics.
func Start(tb testing.TB, ctx context.Context, r Reader, s Sink, cfg consumer.Config) *Running {
	tb.Helper()
	ctx, cancel := context.WithCancel(ctx)
	c := &Running{cancel: cancel, done: make(chan error, 1)}
	if cfg.BatchWait == 0 {
		cfg.BatchWait = 50 * time.Millisecond
	}
	if cfg.Backoff == (consumer.Backoff{}) {
		cfg.Backoff = consumer.Backoff{Base: 20 * time.Millisecond, Max: 200 * time.Millisecond}
	}
	if cfg.Logger == nil {
		cfg.Logger = testkit.Logger(tb, slog.LevelWarn)
	}
	if cfg.Metrics == nil {
		c.Metrics = &Counters{}
		cfg.Metrics = c.Metrics
	}
	go func() { c.done <- consumer.Run(ctx, r, s, cfg) }()
	tb.Cleanup(func() { c.Stop(tb) })
	return c
}

// Production is cfg with consumer.Run's own defaults in the fields Start would give test values
// (BatchWait, Backoff) and a logger that discards, unless cfg sets them: for a benchmark that
// measures the loop as production runs it.
func Production(cfg consumer.Config) consumer.Config {
	if cfg.BatchWait == 0 {
		cfg.BatchWait = consumer.DefaultBatchWait
	}
	if cfg.Backoff == (consumer.Backoff{}) {
		cfg.Backoff = consumer.Backoff{Base: consumer.DefaultBackoffBase, Max: consumer.DefaultBackoffMax}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return cfg
}

// Wait returns what consumer.Run returned, failing the test if it has not returned within
// timeout. Later calls return the same result at once.
func (c *Running) Wait(tb testing.TB, timeout time.Duration) error {
	tb.Helper()
	if !c.returned {
		c.err = testkit.Recv(tb, c.done, timeout, "consumer.Run")
		c.returned = true
	}
	return c.err
}

// Ended reports, without waiting, whether consumer.Run has returned, and what it returned.
func (c *Running) Ended() (bool, error) {
	if !c.returned {
		select {
		case c.err = <-c.done:
			c.returned = true
		default:
		}
	}
	return c.returned, c.err
}

// Stop cancels the run and wants consumer.Run to return nil within 15 s.
func (c *Running) Stop(tb testing.TB) {
	tb.Helper()
	c.cancel()
	if err := c.Wait(tb, 15*time.Second); err != nil {
		tb.Errorf("consumer.Run: %v", err)
		c.err = nil // said once
	}
}
