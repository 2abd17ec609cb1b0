package replay

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
)

// maxWholeBatchFailures is how many batches in a row may fail entirely (broker unreachable,
// topic refused) before Run stops instead of failing the rest of the file batch by batch, each
// after SyncWriter's ~4 attempts.
const maxWholeBatchFailures = 3

// run is the state of one Run call.
type run struct {
	opts      Options
	deps      Deps
	lines     *lineReader
	start     time.Time
	rep       Report
	prog      *progress
	batchSize int
	lim       *limiter

	batch      []events.Event
	batchLines []int
	wholeFails int

	last map[uuid.UUID]int // the last line of each id (a seekable input), else nil

	ids  []uuid.UUID        // dry run: distinct selected ids not yet asked about
	seen map[uuid.UUID]bool // dry run: every distinct selected id
}

// errStop ends the loop without an error of its own (interrupted, or given up).
var errStop = errors.New("stop")

func (r *run) loop(ctx context.Context) error {
	err := r.read(ctx)
	if !r.rep.Interrupted && r.wholeFails < maxWholeBatchFailures {
		// What was read before the end, a read error or Max is still published.
		if ferr := r.flush(ctx); ferr != nil && !errors.Is(ferr, errStop) && err == nil {
			err = ferr
		}
	}
	if errors.Is(err, errStop) {
		err = nil
	}
	switch {
	case r.rep.Interrupted:
		r.deps.Logger.WarnContext(ctx, "replay interrupted", "last_line", r.rep.LastLine,
			"last_event_id", r.rep.LastEventID, "published", r.rep.Published, "unsent", r.rep.Unsent)
		if err == nil {
			err = fmt.Errorf("replay: %w: interrupted after line %d (%d published): %w",
				ErrNotPublished, r.rep.LastLine, r.rep.Published, context.Cause(ctx))
		}
	case r.wholeFails >= maxWholeBatchFailures && err == nil:
		err = fmt.Errorf("replay: %w: gave up after %d batches in a row failed entirely (%d published, last acknowledged line %d)",
			ErrNotPublished, r.wholeFails, r.rep.Published, r.rep.LastLine)
	}
	return err
}

// read consumes the input line by line, flushing full batches.
func (r *run) read(ctx context.Context) error {
	if r.opts.DryRun {
		r.seen = map[uuid.UUID]bool{}
	}
	for {
		if ctx.Err() != nil {
			r.interrupt()
			return errStop
		}
		if r.opts.Max > 0 && r.rep.Selected >= r.opts.Max {
			return nil
		}
		line, n, err := r.lines.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			return fmt.Errorf("replay: read line %d: %w", n, err)
		}
		r.rep.Read++
		r.prog.maybe(r.status())
		if err != nil {
			r.invalid(n, err)
			continue
		}
		if len(line) == 0 {
			r.rep.Blank++
			continue
		}
		e, err := events.Decode(line)
		if err != nil {
			r.invalid(n, err)
			continue
		}
		r.rep.Valid++
		if r.last != nil && r.last[e.EventID] != n {
			r.rep.Superseded++
			continue
		}
		if (!r.opts.Since.IsZero() && e.OccurredAt.Before(r.opts.Since)) ||
			(!r.opts.Until.IsZero() && !e.OccurredAt.Before(r.opts.Until)) {
			r.rep.Skipped++
			continue
		}
		r.rep.Selected++
		if r.opts.DryRun {
			if err := r.dryRun(ctx, e, n); err != nil {
				return err
			}
			continue
		}
		r.batch, r.batchLines = append(r.batch, e), append(r.batchLines, n)
		if len(r.batch) >= r.batchSize {
			if err := r.flush(ctx); err != nil {
				return err
			}
		}
	}
}

// scanLast reads a seekable input once to find the last line of every id and the ids whose lines
// differ, then rewinds it. Another input (stdin) is left alone: its lines are published as read.
func (r *run) scanLast(in io.Reader) error {
	rs, ok := in.(io.ReadSeeker)
	if !ok {
		return nil
	}
	start, err := rs.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil // a pipe or a terminal
	}
	type seen struct {
		line int
		sum  uint64
		two  bool
	}
	ids := map[uuid.UUID]*seen{}
	lr := newLineReader(rs)
	for {
		line, n, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			continue // counted on the second read
		}
		e, derr := events.Decode(line)
		if derr != nil {
			continue
		}
		h := fnv.New64a()
		h.Write(line)
		sum := h.Sum64()
		if s := ids[e.EventID]; s != nil {
			s.line, s.two = n, s.two || s.sum != sum
			continue
		}
		ids[e.EventID] = &seen{line: n, sum: sum}
	}
	if _, err := rs.Seek(start, io.SeekStart); err != nil {
		return fmt.Errorf("replay: rewind the input: %w", err)
	}
	r.last = make(map[uuid.UUID]int, len(ids))
	for id, s := range ids {
		r.last[id] = s.line
		if s.two {
			r.rep.TwoContentIDs++
			if len(r.rep.TwoContents) < maxListed {
				r.rep.TwoContents = append(r.rep.TwoContents, id)
			}
			r.deps.Logger.Warn("event_id with two contents in the file: its last line is published", "event_id", id, "line", s.line)
		}
	}
	slices.SortFunc(r.rep.TwoContents, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	r.rep.LastWins = true
	return nil
}

func (r *run) invalid(n int, err error) {
	r.rep.Invalid++
	if len(r.rep.InvalidLines) < maxListed {
		r.rep.InvalidLines = append(r.rep.InvalidLines, LineError{Line: n, Err: err})
	}
	r.deps.Logger.Warn("invalid line skipped", "line", n, "err", err)
}

func (r *run) interrupt() {
	r.rep.Interrupted = true
	r.rep.Unsent += len(r.batch)
	r.batch, r.batchLines = r.batch[:0], r.batchLines[:0]
}

// dryRun records one selected event; the store is asked about ids in chunks.
func (r *run) dryRun(ctx context.Context, e events.Event, n int) error {
	r.rep.LastLine, r.rep.LastEventID = n, e.EventID
	if r.seen[e.EventID] {
		r.rep.DuplicateIDs++
		return nil
	}
	r.seen[e.EventID] = true
	if r.deps.Store == nil {
		return nil
	}
	r.ids = append(r.ids, e.EventID)
	if len(r.ids) >= existingChunk {
		return r.checkStored(ctx)
	}
	return nil
}

func (r *run) checkStored(ctx context.Context) error {
	if len(r.ids) == 0 {
		return nil
	}
	have, err := r.deps.Store.ExistingIDs(ctx, r.ids)
	if err != nil {
		if ctx.Err() != nil {
			r.interrupt()
			return errStop
		}
		return fmt.Errorf("replay dry run: %w", err)
	}
	r.rep.StoreChecked = true
	r.rep.AlreadyStored += have
	r.rep.New += len(r.ids) - have
	r.ids = r.ids[:0]
	return nil
}

// flush publishes the pending batch (dry run: asks the store about the pending ids). It returns
// errStop when the run must end: interrupted while waiting for the rate limiter, or too many
// batches in a row failed entirely.
func (r *run) flush(ctx context.Context) error {
	if r.opts.DryRun {
		return r.checkStored(ctx)
	}
	if len(r.batch) == 0 {
		return nil
	}
	if r.lim != nil {
		if err := r.lim.wait(ctx, len(r.batch)); err != nil {
			r.interrupt()
			return errStop
		}
	}
	// Once sent, a batch gets its acknowledgements even if ctx ends meanwhile: stopping halfway
	// would leave its outcome unknown.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.opts.AckTimeout)
	err := r.deps.Writer.WriteEvents(wctx, r.batch)
	cancel()
	failed := map[uuid.UUID]error{}
	var werr *kafkabus.WriteEventsError
	switch {
	case err == nil:
	case errors.As(err, &werr):
		for _, f := range werr.Failed {
			failed[f.EventID] = f.Err
		}
	default:
		for _, e := range r.batch {
			failed[e.EventID] = err
		}
	}
	for i, e := range r.batch {
		ferr, bad := failed[e.EventID]
		if !bad {
			r.rep.Published++
			r.rep.LastLine, r.rep.LastEventID = r.batchLines[i], e.EventID
			continue
		}
		r.rep.Failed++
		if len(r.rep.FailedEvents) < maxListed {
			r.rep.FailedEvents = append(r.rep.FailedEvents, kafkabus.EventError{EventID: e.EventID, ListingKey: e.ListingKey, Err: ferr})
		}
		r.deps.Logger.ErrorContext(ctx, "event not published", "event_id", e.EventID, "line", r.batchLines[i], "err", ferr)
	}
	whole := len(failed) > 0 && len(failed) >= len(r.batch)
	r.batch, r.batchLines = r.batch[:0], r.batchLines[:0]
	r.prog.maybe(r.status())
	if !whole {
		r.wholeFails = 0
		return nil
	}
	r.wholeFails++
	if r.wholeFails >= maxWholeBatchFailures {
		r.deps.Logger.ErrorContext(ctx, "giving up: batches keep failing entirely", "batches", r.wholeFails, "err", err)
		return errStop
	}
	return nil
}

// status is what the progress display shows.
func (r *run) status() status {
	done := r.rep.Published
	if r.opts.DryRun {
		done = r.rep.Selected
	}
	return status{read: r.rep.Read, done: done, failed: r.rep.Failed, invalid: r.rep.Invalid,
		bytes: r.lines.bytes, dry: r.opts.DryRun}
}
