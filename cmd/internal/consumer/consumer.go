// Package consumer is the booking-consumer's loop: it fetches booking events from a kafka-go group
// Reader in batches, hands each batch to the store in one transaction, and commits the batch's
// offsets only after that transaction committed.
//
// The guarantees, and why they hold:
//
//   - Nothing is lost. kafka-go never redelivers a fetched message to the same Reader, so a batch
//     whose insert failed is retried as it is, forever while the context lives. Up to
//     Config.Inflight batches are in the database at once (in transactions of their own) and one
//     more is read ahead; all of them are held, none is committed before the batches fetched
//     before it. Offsets are committed only after the database commit, batch after batch, in
//     fetch order: a batch stored early waits for the ones before it.
//
//   - Nothing is stored twice. A crash between the database commit and the offset commit replays
//     the batch; the store inserts with ON CONFLICT (event_id) DO NOTHING, so the replay counts
//     as duplicates. The same holds for a batch stored while an earlier one was still retrying.
//
//   - Poison never blocks the stream. Undecodable messages go to the store as dead letters (with
//     the decode error) in the same transaction as the valid ones around them, and a row that
//     PostgreSQL rejects (bad data, an index entry too large) is pinned by the store and
//     dead-lettered alone. What becomes of every failure is decided by store.Decide (the table
//     is in package store's documentation): an error that is neither transient nor a row's
//     fault is retried without committing, loudly (ERROR every attempt, then Health and the
//     booking_consumer_stuck gauge after Config.AlarmAfter attempts), never dead-lettered.
//
//   - Memory is bounded in bytes, not only in messages. A batch closes at Config.BatchSize
//     messages or Config.MaxBatchBytes bytes of keys and values, whichever comes first, and a
//     value over events.MaxEventBytes (64 KiB) is cut to its first DeadValuePrefix (4 KiB) bytes
//     the moment it is fetched (the dead letter records its full length and SHA-256), so no batch
//     holds large values whole. The loop holds at most Inflight+2 batches: those in the database,
//     the one whose offsets are being committed and the one read ahead. With the Reader's own
//     queue (kafka-go's QueueCapacity counts messages, each up to the topic's max.message.bytes,
//     plus one message being read per partition) the consumer's data in memory is at most
//     (Inflight+2) × MaxBatchBytes × ~3 (raw bytes, decoded fields, the batch's COPY stream) +
//     (QueueCapacity + partitions) × max.message.bytes. With the booking-consumer defaults
//     (Inflight 2, 8 MiB, QueueCapacity 8, 1 MiB messages, 3 partitions) that is ~96 MiB +
//     ~11 MiB in the worst case of 64 KiB junk filling every batch; real events (~500 B) and
//     oversize junk both stay far below it.
//
//   - Outages pause, never end, the loop: a failed insert, a failed fetch and a failed offset
//     commit are all retried with capped backoff for as long as the context lives. While a
//     commit retries, the loop takes no new batch (memory stays bounded, and no later batch is
//     committed before it).
//
// Run does not own the Reader: the caller creates it, and closes it (under a deadline) after Run
// returns.
package consumer

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	retrying "github.com/golfcrawler/golf-crawler/internal/retry"
	"github.com/golfcrawler/golf-crawler/store"
)

// Defaults for Config. A batch of 2000 × ~500-byte events is ~1 MB in memory and one
// transaction of ~20-100 ms; 200 ms bounds the extra latency a lone event waits for company.
const (
	// DefaultBatchSize is the most events a transaction may hold while the projection's trigger
	// still takes one lock per listing (it takes its one exclusive lock past 2000 listings, which
	// serialises the batches in flight and every other writer). Against 1000, with PostgreSQL's
	// and the broker's CPU counted, it cost less CPU per event and drained faster, with or without
	// a CPU hog (docs/performance.md, "What was changed, and why").
	DefaultBatchSize = 2000
	// DefaultMaxBatchBytes bounds a batch in bytes: 1000 real events are ~0.5 MB, so only junk
	// (values near the 64 KiB limit) ever closes a batch by size.
	DefaultMaxBatchBytes = 8 << 20
	DefaultBatchWait     = 200 * time.Millisecond
	// DefaultInflight is how many batches are in the database at once. One transaction keeps one
	// PostgreSQL backend busy while the consumer, the broker and the other core wait; two fill a
	// 2-core machine: 1.3-1.5x the events/s of one (BenchmarkConsumerIngest, fresh/fresh1), and
	// three or four were no faster there.
	DefaultInflight        = 2
	DefaultBackoffBase     = 200 * time.Millisecond
	DefaultBackoffMax      = 30 * time.Second
	DefaultShutdownTimeout = 10 * time.Second
	DefaultCommitTimeout   = 10 * time.Second
	// DefaultAlarmAfter is how many failed attempts in a row of one batch's insert (for an error
	// store.Decide calls FateAlarmedRetry) or of one batch's offset commit make the consumer report
	// itself stuck: the booking_consumer_stuck gauge and a 503 from /healthz, so that an
	// orchestrator notices. With the default backoff, 5 attempts take about 3 s.
	DefaultAlarmAfter = 5
	// DefaultFetchStuckAfter is how long fetches must have been failing (besides AlarmAfter times
	// in a row) before the consumer reports itself stuck: longer than a broker's restart, whose
	// few failed fetches are normal, short enough that a cluster without a group coordinator is
	// noticed within minutes (the crawlers' spools keep their events meanwhile).
	DefaultFetchStuckAfter = time.Minute
	// infoEvery rate-limits the Info-level progress line; every batch is logged at Debug.
	infoEvery = 10 * time.Second
)

// reader is the part of a Kafka group reader the loop uses (production: *kafkabus.GroupReader).
type reader interface {
	FetchMessage(ctx context.Context) (kafka.Message, error)
	CommitMessages(ctx context.Context, msgs ...kafka.Message) error
}

// sink is the part of *store.Store the loop uses.
type sink interface {
	Ingest(ctx context.Context, batch []store.Message) (store.Result, error)
}

// Backoff is the capped exponential backoff between retries of a failed batch (retry.Backoff:
// attempt n waits a random duration in [d/2, d] with d = min(Max, Base·2^(n-1)), so 200 ms,
// 400 ms, … 30 s). Zero fields take DefaultBackoffBase and DefaultBackoffMax.
type Backoff = retrying.Backoff

// Config tunes Run. The zero value works: every zero field takes its default.
type Config struct {
	BatchSize int // max messages per transaction; DefaultBatchSize if zero
	// MaxBatchBytes closes a batch once its keys and values (values over events.MaxEventBytes
	// counted as their DeadValuePrefix) reach it, whatever its count; DefaultMaxBatchBytes if zero.
	MaxBatchBytes int
	BatchWait     time.Duration // how long to keep filling a batch after its first message; DefaultBatchWait if zero
	Inflight      int           // batches in the database at once, each in its own transaction; DefaultInflight if zero
	Backoff       Backoff
	// ShutdownTimeout bounds the in-flight insert and its offset commit once ctx is cancelled.
	ShutdownTimeout time.Duration
	// CommitTimeout bounds one CommitMessages call (it blocks while the coordinator is away).
	CommitTimeout time.Duration
	// AlarmAfter is how many failed attempts in a row of an alarmed insert or of an offset commit
	// mark the consumer stuck (Health, the stuck gauge); DefaultAlarmAfter if zero.
	AlarmAfter int
	// FetchStuckAfter is how long fetches must have been failing, AlarmAfter times in a row or
	// more, to mark the consumer stuck; DefaultFetchStuckAfter if zero.
	FetchStuckAfter time.Duration
	// Health receives the stuck reasons while a batch is stuck; none if nil.
	Health  *Health
	Logger  *slog.Logger     // slog.Default() if nil
	Metrics Metrics          // none if nil
	Now     func() time.Time // time.Now if nil
}

// withDefaults fills in what was left out: a zero setting, or a negative one (which means nothing),
// takes its default (cmp.Or(max(v, 0), d)).
func (c Config) withDefaults() Config {
	c.BatchSize = cmp.Or(max(c.BatchSize, 0), DefaultBatchSize)
	c.BatchWait = cmp.Or(max(c.BatchWait, 0), DefaultBatchWait)
	c.MaxBatchBytes = cmp.Or(max(c.MaxBatchBytes, 0), DefaultMaxBatchBytes)
	c.Inflight = cmp.Or(max(c.Inflight, 0), DefaultInflight)
	c.Backoff.Base = cmp.Or(max(c.Backoff.Base, 0), DefaultBackoffBase)
	c.Backoff.Max = cmp.Or(max(c.Backoff.Max, 0), DefaultBackoffMax)
	if c.Backoff.Max < c.Backoff.Base {
		c.Backoff.Max = c.Backoff.Base
	}
	c.ShutdownTimeout = cmp.Or(max(c.ShutdownTimeout, 0), DefaultShutdownTimeout)
	c.CommitTimeout = cmp.Or(max(c.CommitTimeout, 0), DefaultCommitTimeout)
	c.AlarmAfter = cmp.Or(max(c.AlarmAfter, 0), DefaultAlarmAfter)
	c.FetchStuckAfter = cmp.Or(max(c.FetchStuckAfter, 0), DefaultFetchStuckAfter)
	if c.Health == nil {
		c.Health = &Health{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Metrics == nil {
		c.Metrics = nopMetrics{}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// outcome is what the loop does with a batch after the store answered.
type outcome int

const (
	commit outcome = iota // the transaction committed: commit the offsets, fetch the next batch
	retry                 // back off and insert the same batch again; commit nothing
	alarm                 // retry, loudly: ERROR every attempt, stuck after Config.AlarmAfter
	stop                  // shutting down: commit nothing; the batch is redelivered after restart
)

func (o outcome) String() string {
	return [...]string{"commit", "retry", "alarm", "stop"}[o]
}

// classify maps store.Decide's fate of a whole batch's error onto what the loop does (the table
// is in package store's documentation). Duplicates and dead letters are part of a successful
// (nil) answer. Every error is retried while ctx lives: a database that is down, or a schema
// that is broken, must pause the stream, not drain it into the dead-letter table. An error the
// store could not pin on a row (FateDeadLetter for a whole batch) is a bug or a broken dead-letter
// table: alarmed.
func classify(ctx context.Context, err error) (outcome, string) {
	d := store.Decide(ctx, err)
	switch d.Fate {
	case store.FateDone:
		return commit, d.Reason
	case store.FateStop:
		return stop, d.Reason
	case store.FateRetry:
		return retry, d.Reason
	default: // FateAlarmedRetry, and FateDeadLetter for a whole batch
		return alarm, d.Reason
	}
}

// Run consumes until ctx is cancelled (then it returns nil) or the reader is closed (io.EOF, then
// it returns the error). Other fetch errors (broker unreachable, coordinator moving) are retried
// with backoff: a Kafka outage pauses the loop.
//
// On cancellation it starts no new fetch and no new insert. Inserts in flight get ShutdownTimeout
// to finish, and their offsets are committed in fetch order up to the first batch that did not
// finish; that batch, those after it and the one read ahead are left uncommitted, to be
// redelivered to whoever owns their partitions next (rows a later batch did store then count as
// duplicates).
func Run(ctx context.Context, r reader, s sink, cfg Config) error {
	l := &loop{r: r, s: s, cfg: cfg.withDefaults()}
	l.started(ctx)
	defer l.stopped()

	// rctx ends with ctx or when Run returns: fetching stops, inserts stop retrying. The statements
	// themselves and the offset commits run under ictx, which outlives rctx by ShutdownTimeout, so
	// that a batch in the database can finish on SIGTERM; when Run returns, ictx ends at once.
	rctx, endRun := context.WithCancel(ctx)
	ictx, cutInserts := shutdownContext(rctx, l.cfg.ShutdownTimeout)
	batches := make(chan fetched) // unbuffered: the fetcher holds at most one batch it cannot hand over
	go l.fetchAhead(rctx, batches)
	var inserts sync.WaitGroup
	defer func() {
		endRun()
		for range batches { // wait for the fetcher; a batch it read ahead stays uncommitted
		}
		cutInserts()
		inserts.Wait()
	}()

	var queue []*flight // batches in the database, in fetch order
	// accept starts inserting a batch from the fetcher, or says that Run must end: the fetcher
	// stopped (ctx ended) or the reader was closed (err).
	accept := func(b fetched, ok bool) (end bool, err error) {
		switch {
		case !ok || ctx.Err() != nil:
			return true, nil // fetched but not inserted: left uncommitted for the next owner
		case b.err != nil:
			return true, fmt.Errorf("fetch: %w", b.err)
		}
		f := &flight{fetched: b, done: make(chan stored, 1)}
		queue = append(queue, f)
		inserts.Go(func() { f.done <- l.insert(rctx, ictx, f.store) })
		return false, nil
	}
	for {
		var next <-chan fetched
		if len(queue) < l.cfg.Inflight {
			next = batches
		}
		var head <-chan stored
		if len(queue) > 0 {
			head = queue[0].done
		}
		select {
		case <-ctx.Done():
			return l.finish(ictx, queue)
		case b, ok := <-next:
			if end, err := accept(b, ok); end {
				if err != nil {
					return err
				}
				return l.finish(ictx, queue)
			}
		case res := <-head:
			f := queue[0]
			queue = queue[1:]
			if res.stopped {
				return l.finish(ictx, nil)
			}
			// Refill the freed slot before the offset commit's round trip to the coordinator, so
			// that the database does not wait for Kafka.
			end, err := acceptReady(batches, accept)
			if err != nil {
				return err
			}
			l.commit(ctx, ictx, f.kafka, res)
			if end {
				return l.finish(ictx, queue)
			}
		}
	}
}

// started logs the start and stamps the periodic progress line's clock.
func (l *loop) started(ctx context.Context) {
	l.lastInfo = l.cfg.Now()
	l.cfg.Logger.InfoContext(ctx, "consumer started", "batch_size", l.cfg.BatchSize,
		"batch_wait", l.cfg.BatchWait.String(), "inflight", l.cfg.Inflight)
}

// stopped logs the totals when Run returns.
func (l *loop) stopped() {
	l.cfg.Logger.Info("consumer stopped",
		"batches", l.total.batches, "consumed", l.total.consumed, "inserted", l.total.inserted,
		"duplicates", l.total.duplicates, "dead_lettered", l.total.deadLettered)
}

// flight is a batch handed to an insert goroutine; done receives its one answer.
type flight struct {
	fetched
	done chan stored
}

// stored is how an insert ended: the store's result, or stopped (shutdown before it succeeded).
type stored struct {
	res      store.Result
	latency  time.Duration
	attempts int
	stopped  bool
}

// finish is the shutdown path: it waits for the batches in flight, in fetch order, and commits
// each one that was stored until the first that was not.
func (l *loop) finish(ictx context.Context, queue []*flight) error {
	ended, cancel := context.WithCancel(ictx)
	cancel()
	committing := true
	for _, f := range queue {
		res := <-f.done
		if res.stopped || !committing {
			if committing {
				l.cfg.Logger.Info("shutting down with batches uncommitted; they will be redelivered",
					"from_topic", f.kafka[0].Topic, "from_partition", f.kafka[0].Partition,
					"from_offset", f.kafka[0].Offset)
			}
			committing = false
			continue
		}
		l.commit(ended, ictx, f.kafka, res) // one attempt each: no retries on the way out
	}
	return nil
}

type loop struct {
	r   reader
	s   sink
	cfg Config

	lastInfo time.Time
	total    struct{ batches, consumed, inserted, duplicates, deadLettered int64 }
}

// insert stores one batch, retrying until it succeeds or ctx ends; statements run under ictx. It
// runs on a goroutine of its own, up to Inflight at once, so it must not touch l.total or
// l.lastInfo.
func (l *loop) insert(ctx, ictx context.Context, sbatch []store.Message) stored {
	start := l.cfg.Now()
	var stuck *stuckMark
	defer func() { stuck.clear() }()
	for attempt := 1; ; attempt++ {
		res, err := l.s.Ingest(ictx, sbatch)
		out, reason := classify(ctx, err)
		switch out {
		case commit:
			return stored{res: res, latency: l.cfg.Now().Sub(start), attempts: attempt}
		case stop:
			l.cfg.Logger.InfoContext(ctx, "shutting down with batch uncommitted; it will be redelivered",
				"size", len(sbatch), "err", err)
			return stored{stopped: true}
		case retry, alarm:
			d := l.cfg.Backoff.Delay(attempt)
			lvl := slog.LevelWarn
			if out == alarm {
				lvl = slog.LevelError
				if attempt >= l.cfg.AlarmAfter && stuck == nil {
					stuck = l.markStuck(batchName(sbatch), reason,
						fmt.Sprintf("stuck: insert of batch %s failed %d times: %s: %v", batchName(sbatch), attempt, reason, err))
				}
			}
			l.cfg.Logger.Log(ctx, lvl, "insert failed; retrying the same batch",
				"attempt", attempt, "backoff", d.String(), "size", len(sbatch), "fate", out.String(),
				"reason", reason, "stuck", stuck != nil, "err", err)
			l.cfg.Metrics.Retry()
			if !sleep(ctx, d) {
				l.cfg.Logger.InfoContext(ctx, "shutting down during backoff; batch uncommitted", "size", len(sbatch))
				return stored{stopped: true}
			}
		}
	}
}

// batchName names a batch by its first message's position, for logs and Health.
func batchName(b []store.Message) string {
	if len(b) == 0 {
		return "(empty)"
	}
	return fmt.Sprintf("%s/%d@%d", b[0].Topic, b[0].Partition, b[0].Offset)
}

// shutdownContext returns a context that ignores ctx's cancellation for grace more time.
func shutdownContext(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopAfter := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(grace, cancel)
		context.AfterFunc(c, func() { t.Stop() })
	})
	return c, func() { stopAfter(); cancel() }
}

// sleep waits d or until ctx ends; it reports whether the full wait elapsed.
func sleep(ctx context.Context, d time.Duration) bool { return retrying.Sleep(ctx, d) == nil }
