package store

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/golfcrawler/golf-crawler/events"
)

var (
	//go:embed queries/dead_matching.sql
	deadMatchingSQL string
	//go:embed queries/dead_list.sql
	deadListTemplate string
	//go:embed queries/dead_select.sql
	deadSelectTemplate string
	// deadListSQL and deadSelectSQL are dead_list.sql and dead_select.sql with the one filter of
	// a DeadFilter (dead_matching.sql) filled in.
	deadListSQL   = withDeadMatching(deadListTemplate)
	deadSelectSQL = withDeadMatching(deadSelectTemplate)
	//go:embed queries/dead_insert_event.sql
	deadInsertEventTemplate string
	// deadInsertEventSQL is dead_insert_event.sql with its column placeholders filled (eventrow.go).
	deadInsertEventSQL = expandColumns(deadInsertEventTemplate)
	//go:embed queries/dead_remove.sql
	deadRemoveSQL string
	//go:embed queries/dead_keep.sql
	deadKeepSQL string
)

// ErrNoDeadLetter means no booking_events_dead row has the asked id.
var ErrNoDeadLetter = errors.New("no such dead letter")

// DeadLetter is one booking_events_dead row: a Kafka message that could not become an event.
type DeadLetter struct {
	ID            int64
	Topic         string
	Partition     int
	Offset        int64
	Key, Value    []byte // the message's raw bytes, as received
	Error         string // why it was dead-lettered, the latest reason
	FirstFailedAt time.Time
	LastFailedAt  time.Time
	Attempts      int
	// Headers are the message's Kafka headers as received; HeadersKept is false for a dead letter
	// recorded before they were kept (migration 009), whose Headers are unknown, not empty.
	Headers     []events.Header
	HeadersKept bool
}

// DeadFilter selects dead letters. Zero values mean no filter.
type DeadFilter struct {
	ID     int64      // only this row
	Since  *time.Time // last failure at or after Since
	Reason string     // the error contains this text, case-insensitively
	Limit  int        // at most this many rows (DeadLetters only; 0: all)
}

func (f DeadFilter) args() []any { return []any{f.ID, f.Since, f.Reason} }

// withDeadMatching fills the DeadFilter query (dead_matching.sql, parameters $1..$3 from
// DeadFilter.args) into query at {{matching}}.
func withDeadMatching(query string) string {
	return strings.Replace(query, "{{matching}}", strings.TrimSpace(deadMatchingSQL), 1)
}

// DeadLetters returns the dead letters matching f, newest failure first.
func (s *Store) DeadLetters(ctx context.Context, f DeadFilter) ([]DeadLetter, error) {
	var limit *int
	if f.Limit > 0 {
		limit = &f.Limit
	}
	return listDeadLetters(ctx, s.pool, f, limit)
}

// listDeadLetters runs the dead list query (dead_list.sql) on q: f's filters, at most *limit rows
// (nil: all).
func listDeadLetters(ctx context.Context, q querier, f DeadFilter, limit *int) ([]DeadLetter, error) {
	rows, err := q.Query(ctx, deadListSQL, append(f.args(), limit)...)
	if err != nil {
		return nil, fmt.Errorf("list dead letters: %w", interpret(err))
	}
	out, err := pgx.CollectRows(rows, scanDeadLetter)
	if err != nil {
		return nil, fmt.Errorf("list dead letters: %w", interpret(err))
	}
	return out, nil
}

// DeadLetterByID returns one dead letter, or ErrNoDeadLetter.
func (s *Store) DeadLetterByID(ctx context.Context, id int64) (DeadLetter, error) {
	ds, err := s.DeadLetters(ctx, DeadFilter{ID: id})
	if err != nil {
		return DeadLetter{}, err
	}
	if len(ds) == 0 {
		return DeadLetter{}, fmt.Errorf("dead letter %d: %w", id, ErrNoDeadLetter)
	}
	return ds[0], nil
}

func scanDeadLetter(row pgx.CollectableRow) (DeadLetter, error) {
	var d DeadLetter
	var part int32
	var headers []byte
	err := row.Scan(&d.ID, &d.Topic, &part, &d.Offset, &d.Key, &d.Value, &d.Error,
		&d.FirstFailedAt, &d.LastFailedAt, &d.Attempts, &headers)
	d.Partition = int(part)
	if err == nil {
		d.Headers, d.HeadersKept, err = decodeHeaders(headers)
	}
	return d, err
}

// RetryOutcome is what RetryDead did (or, in a dry run, would do) with one dead letter.
type RetryOutcome struct {
	ID       int64
	EventID  uuid.UUID // the decoded event's id when Stored
	Stored   bool      // the event is in booking_events now; the dead letter is removed
	New      bool      // Stored by this retry (false: it was already stored)
	Reason   string    // still invalid: today's reason; the dead letter stays with attempts+1
	Previous string    // the reason it had
}

// RetryResult sums a RetryDead.
type RetryResult struct {
	Redriven      int // stored (new or already there) and removed from booking_events_dead
	Inserted      int // of which new rows in booking_events
	AlreadyStored int // of which the event was already stored (a redelivery or another retry)
	StillBad      int // still invalid: kept with the new reason and attempts+1
}

// retryChunk is how many dead letters one RetryDead transaction handles.
const retryChunk = 500

// retryConflicts bounds the retries of one chunk after a deadlock or serialization failure (a
// consumer or another retry touching the same rows).
const retryConflicts = 5

// RetryDead re-drives the dead letters matching f (f.Limit is ignored) with today's
// events.Decode, in chunks of retryChunk rows, each in ONE transaction: a message that decodes
// is inserted idempotently (ON CONFLICT (event_id) DO NOTHING, at its original Kafka position)
// and its dead letter deleted; one that does not, or that PostgreSQL rejects, keeps its row with
// the new reason and attempts+1. A crash or an error leaves every chunk either done or untouched,
// so running it again is always safe; a second run over fixed rows finds nothing to do.
//
// Events are inserted in event_id order and dead letters touched in Kafka-position order after
// them, the consumer's own order, so a retry concurrent with the consumer storing the same events
// waits instead of deadlocking (and a detected deadlock is retried). dryRun does the same work
// and rolls every chunk back. each, if not nil, sees every outcome.
func (s *Store) RetryDead(ctx context.Context, f DeadFilter, dryRun bool, each func(RetryOutcome)) (RetryResult, error) {
	var total RetryResult
	var after int64
	for {
		rows, err := s.pool.Query(ctx, deadSelectSQL, append(f.args(), after, retryChunk)...)
		if err != nil {
			return total, fmt.Errorf("retry dead letters: %w", interpret(err))
		}
		chunk, err := pgx.CollectRows(rows, scanDeadLetter)
		if err != nil {
			return total, fmt.Errorf("retry dead letters: %w", interpret(err))
		}
		if len(chunk) == 0 {
			return total, nil
		}
		after = chunk[len(chunk)-1].ID
		var outs []RetryOutcome
		for attempt := 1; ; attempt++ {
			outs, err = s.retryChunk(ctx, chunk, dryRun)
			if err == nil || attempt == retryConflicts || !isConflict(err) || ctx.Err() != nil {
				break
			}
		}
		if err != nil {
			return total, fmt.Errorf("retry dead letters %d..%d: %w", chunk[0].ID, after, err)
		}
		for _, o := range outs {
			switch {
			case o.Stored && o.New:
				total.Redriven++
				total.Inserted++
			case o.Stored:
				total.Redriven++
				total.AlreadyStored++
			case o.Reason != "":
				total.StillBad++
			default:
				continue // removed meanwhile by another retry
			}
			if each != nil {
				each(o)
			}
		}
	}
}

func (s *Store) retryChunk(ctx context.Context, chunk []DeadLetter, dryRun bool) ([]RetryOutcome, error) {
	type valid struct {
		d DeadLetter
		e events.Event
		i int // index in outs
	}
	outs := make([]RetryOutcome, len(chunk))
	var ok []valid
	for i, d := range chunk {
		outs[i] = RetryOutcome{ID: d.ID, Previous: d.Error}
		e, err := events.Decode(d.Value)
		if err == nil {
			err = events.CheckCloudEvents(d.Headers, e)
		}
		if err != nil {
			outs[i].Reason = deadReason(err)
			continue
		}
		ok = append(ok, valid{d, e, i})
	}
	slices.SortStableFunc(ok, func(a, b valid) int { return bytes.Compare(a.e.EventID[:], b.e.EventID[:]) })

	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, interpret(err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit it is a no-op
	for _, v := range ok {
		var inserted int64
		err := pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
			tag, err := sp.Exec(ctx, deadInsertEventSQL, rowArgs(newEventRow(v.e, v.d.Value, v.d.Topic, v.d.Partition, v.d.Offset)))
			inserted = tag.RowsAffected()
			return err
		})
		switch {
		case err == nil:
			outs[v.i].Stored, outs[v.i].New, outs[v.i].EventID = true, inserted == 1, v.e.EventID
		case isRowRejection(err):
			outs[v.i].Reason = deadReason(err)
		default:
			return nil, fmt.Errorf("store event %s: %w", v.e.EventID, interpret(err))
		}
	}
	order := make([]int, len(chunk))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		x, y := chunk[a], chunk[b]
		return cmp.Or(strings.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition), cmp.Compare(x.Offset, y.Offset))
	})
	for _, i := range order {
		var tag pgconn.CommandTag
		if outs[i].Stored {
			tag, err = tx.Exec(ctx, deadRemoveSQL, chunk[i].ID)
		} else {
			tag, err = tx.Exec(ctx, deadKeepSQL, chunk[i].ID, outs[i].Reason)
		}
		if err != nil {
			return nil, fmt.Errorf("update dead letter %d: %w", chunk[i].ID, interpret(err))
		}
		if tag.RowsAffected() == 0 { // another retry removed it meanwhile
			outs[i] = RetryOutcome{ID: chunk[i].ID}
		}
	}
	if dryRun {
		return outs, nil // rolled back by the deferred Rollback
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, interpret(err)
	}
	return outs, nil
}

// isRowRejection reports whether PostgreSQL refused this row itself: a data exception (22), an
// integrity violation (23) or a program limit such as an index row too large (54). Retrying the
// same row can never succeed, so the dead letter stays.
func isRowRejection(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgerrcode.IsDataException(pgErr.Code) ||
		pgerrcode.IsIntegrityConstraintViolation(pgErr.Code) || pgerrcode.IsProgramLimitExceeded(pgErr.Code))
}

// isConflict reports a deadlock or serialization failure: the chunk is worth redoing.
func isConflict(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) &&
		(pgErr.Code == pgerrcode.DeadlockDetected || pgErr.Code == pgerrcode.SerializationFailure)
}

// deadReason makes an error storable as booking_events_dead.error (valid UTF-8, no NUL).
func deadReason(err error) string {
	return strings.ReplaceAll(strings.ToValidUTF8(err.Error(), "\uFFFD"), "\x00", "\\0")
}
