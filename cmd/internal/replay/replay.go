// Package replay publishes a file of past booking events back to Kafka, for practice and
// recovery: the JSON lines that `booking-consumer export`, `crawler --events-out` and the practice
// set (crawler/practice) write, one events.Encode per line.
//
// Every event keeps its original event_id and key (listing_key), so the consumer's
// ON CONFLICT (event_id) DO NOTHING makes a replay of already stored events a no-op: replaying a
// file twice adds no rows. Unlike the crawler's fire-and-forget publisher, replay writes in batches
// and waits for every batch's acknowledgements from all in-sync replicas (kafkabus.SyncWriter), so
// the final report says exactly which events did not make it. When an id has several lines, the
// last one is published (a file can be read twice; stdin cannot, and is published as read), and
// the report names the ids whose lines differ.
//
// Lines are decoded strictly (events.Decode); an invalid line is counted, reported with its line
// number and skipped, and the rest of the file is replayed. A window on occurred_at (half-open
// [Since, Until)), a maximum count and a rate limit select and pace what is published; a dry run
// reads and validates only, and with a store says how many events are already stored.
package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/internal/retry"
)

// Defaults of Options.
const (
	// DefaultBatchSize is how many events one WriteEvents call sends and waits for: big enough
	// that acks are amortised (1000-message calls measured 310-360k msg/s), small enough that
	// Ctrl-C waits for at most one batch.
	DefaultBatchSize = 500
	// DefaultProgressEvery is how often progress is shown.
	DefaultProgressEvery = time.Second
	// DefaultAckTimeout bounds the wait for one batch's acknowledgements, also after Ctrl-C.
	DefaultAckTimeout = 30 * time.Second
	// existingChunk is how many ids a dry run asks the store about at once.
	existingChunk = 5000
	// maxListed bounds the invalid lines and failed events the Report lists one by one.
	maxListed = 100
)

// ErrNotPublished is the meaning of Run's error when some selected event was not acknowledged:
// it failed, or the run was interrupted before publishing it.
var ErrNotPublished = errors.New("not every event was published")

// Options select and pace what Run publishes. The zero value publishes every valid line as fast
// as the broker acknowledges, in batches of DefaultBatchSize.
type Options struct {
	Since time.Time // publish only events with occurred_at >= Since; zero: no lower bound
	Until time.Time // publish only events with occurred_at < Until; zero: no upper bound
	Max   int       // stop after selecting this many events; ≤ 0: no limit
	// Rate is the most events per second published; ≤ 0: no limit. Batches shrink to a tenth of
	// a second's worth (at least 1), so a limited replay publishes smoothly, and the first batch
	// goes at once (the bucket starts full), so M events take at least (M - batch)/Rate seconds.
	Rate      float64
	BatchSize int  // events per acknowledged write; DefaultBatchSize when ≤ 0
	DryRun    bool // read and validate only; publish nothing
	// ProgressEvery is how often progress is shown; DefaultProgressEvery when ≤ 0.
	ProgressEvery time.Duration
	// AckTimeout bounds one batch's write, including after ctx is cancelled; DefaultAckTimeout when ≤ 0.
	AckTimeout time.Duration
}

// Writer publishes a batch and waits for its acknowledgements; *kafkabus.SyncWriter is one. An
// error that is a *kafkabus.WriteEventsError names the events that failed (the others were
// acknowledged); any other error fails the whole batch.
type Writer interface {
	WriteEvents(ctx context.Context, evs []events.Event) error
}

// Store says how many of ids are already stored; *store.Store is one.
type Store interface {
	ExistingIDs(ctx context.Context, ids []uuid.UUID) (int, error)
}

// Deps are Run's dependencies. Writer is required unless Options.DryRun.
type Deps struct {
	Writer Writer
	Store  Store // optional; a dry run with a Store reports already stored and new
	// Progress receives the progress display (nil: none). Terminal selects a redrawn bar with
	// rate and ETA; otherwise a plain line is written every ProgressEvery.
	Progress io.Writer
	Terminal bool
	// Size is the input's size in bytes when known (a file), for the bar's percentage and ETA;
	// 0: unknown (stdin), progress shows counts and rate only.
	Size   int64
	Logger *slog.Logger     // nil: discard
	Now    func() time.Time // nil: time.Now
	// Sleep waits for the rate limiter; nil: a timer that returns ctx.Err() when ctx ends first.
	Sleep func(ctx context.Context, d time.Duration) error
}

// LineError is one invalid line: its 1-based number and why it was skipped.
type LineError struct {
	Line int
	Err  error
}

// Report is what Run did. Read = Invalid + Blank + Valid; Valid = Skipped + Selected + the rest
// after Max; Selected = Published + Failed + Unsent (all zero but Selected in a dry run).
type Report struct {
	Read     int // lines read, blank ones included
	Blank    int // empty lines, ignored
	Invalid  int // lines that are not a valid event, skipped
	Valid    int // lines that decoded into a valid event
	Skipped  int // valid events outside [Since, Until)
	Selected int // valid events in the window, up to Max: what the run meant to publish
	// Published were acknowledged by the broker; Failed were not (see FailedEvents); Unsent were
	// selected but never sent because the run was interrupted.
	Published, Failed, Unsent int
	// AlreadyStored and New (dry run with a Store only): of the distinct ids selected, how many
	// are in the database and how many would be inserted. DuplicateIDs counts selected lines
	// repeating an earlier line's id.
	AlreadyStored, New, DuplicateIDs int
	StoreChecked                     bool // AlreadyStored and New are meaningful
	// Superseded counts the lines skipped because a later line of the input has the same
	// event_id: the last line of an id is the one published (a seekable input only; see Run).
	// TwoContents names (the first 100 of) the ids whose lines differ, TwoContentIDs counts them:
	// an events file written before the commit rule can hold a transition a failed save never
	// recorded beside the one re-derived under the same id.
	Superseded    int
	TwoContentIDs int
	TwoContents   []uuid.UUID
	LastWins      bool // the input was read twice so that the last line of an id wins

	InvalidLines []LineError           // the first 100 invalid lines
	FailedEvents []kafkabus.EventError // the first 100 events not acknowledged
	// LastLine is the number of the last line whose event was acknowledged (dry run: the last
	// line read), LastEventID that event's id: how far the run got.
	LastLine    int
	LastEventID uuid.UUID
	Interrupted bool // ctx ended before the input did
	DryRun      bool
	Elapsed     time.Duration
}

// Run reads in to its end (or ctx's), publishing the selected events in acknowledged batches, and
// returns what it did. On ctx cancellation it stops cleanly: a batch being written gets its
// acknowledgements (within AckTimeout), nothing more is sent, and Report.LastLine says how far it
// got. The error is nil when every selected event was published (or, in a dry run, when the input
// was read to its end); it wraps ErrNotPublished when some were not, and reports a failure to read
// the input or to query the store. Invalid lines do not make it fail: they are reported.
func Run(ctx context.Context, in io.Reader, opts Options, deps Deps) (Report, error) {
	opts, deps = opts.withDefaults(), deps.withDefaults()
	if !opts.DryRun && deps.Writer == nil {
		return Report{}, errors.New("replay: Deps.Writer is required unless DryRun")
	}
	if !opts.Since.IsZero() && !opts.Until.IsZero() && !opts.Until.After(opts.Since) {
		return Report{}, fmt.Errorf("replay: empty window: until %s is not after since %s",
			opts.Until.Format(time.RFC3339), opts.Since.Format(time.RFC3339))
	}
	r := &run{opts: opts, deps: deps, start: deps.Now()}
	r.rep.DryRun = opts.DryRun
	if err := r.scanLast(in); err != nil {
		return r.rep, err
	}
	r.lines = newLineReader(in)
	r.prog = newProgress(deps, opts, r.start)
	r.batchSize = opts.BatchSize
	if opts.Rate > 0 {
		r.batchSize = max(1, min(opts.BatchSize, int(opts.Rate/10)))
		r.lim = newLimiter(opts.Rate, r.batchSize, deps.Now, deps.Sleep)
	}
	err := r.loop(ctx)
	r.rep.Elapsed = deps.Now().Sub(r.start)
	r.prog.done(r.status())
	if err != nil {
		return r.rep, err
	}
	if opts.DryRun {
		return r.rep, nil
	}
	if n := r.rep.Failed + r.rep.Unsent; n > 0 {
		return r.rep, fmt.Errorf("replay: %w: %d of %d selected events not published (%d failed, %d unsent); last acknowledged line %d",
			ErrNotPublished, n, r.rep.Selected, r.rep.Failed, r.rep.Unsent, r.rep.LastLine)
	}
	return r.rep, nil
}

// withDefaults fills in what was left out: a zero setting, or a negative one (which means nothing),
// takes its default (cmp.Or(max(v, 0), d)).
func (o Options) withDefaults() Options {
	o.BatchSize = cmp.Or(max(o.BatchSize, 0), DefaultBatchSize)
	o.ProgressEvery = cmp.Or(max(o.ProgressEvery, 0), DefaultProgressEvery)
	o.AckTimeout = cmp.Or(max(o.AckTimeout, 0), DefaultAckTimeout)
	return o
}

func (d Deps) withDefaults() Deps {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Sleep == nil {
		d.Sleep = retry.Sleep
	}
	return d
}
