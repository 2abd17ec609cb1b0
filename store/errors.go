package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/golfcrawler/golf-crawler/events"
)

// ErrRejected means PostgreSQL refused one row's data itself: a data exception (class 22), an
// integrity violation (class 23) or a program limit such as an index entry too large for a btree
// (class 54, e.g. 54000 for a 4 KB listing_key). Retrying the same row can never succeed, so the
// row is dead-lettered (Decide: DeadLetter).
var ErrRejected = errors.New("rejected by the database")

// interpret maps PostgreSQL errors onto store's vocabulary: the one place that inspects
// pgconn.PgError codes for meaning (Decide reads them only to name a reason).
func interpret(err error) error {
	if err == nil || errors.Is(err, ErrRejected) {
		return err
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) &&
		(pgerrcode.IsDataException(pgErr.Code) || pgerrcode.IsIntegrityConstraintViolation(pgErr.Code) ||
			pgerrcode.IsProgramLimitExceeded(pgErr.Code)) {
		return fmt.Errorf("%w: %w", ErrRejected, err)
	}
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.OutOfMemory && strings.Contains(pgErr.Message, "shared memory") {
		// PostgreSQL says "out of shared memory" when the lock table, which every session
		// shares, has no slot left: not the batch's fault, and not memory to add.
		return fmt.Errorf("the lock table is full (another transaction holds many locks; see max_locks_per_transaction): %w", err)
	}
	return err
}

// IsTransient reports whether err may go away on retry: connection failures (class 08, refused
// dials, resets), serialization failures (40001) and deadlocks (40P01), server shutdown or start-up
// (57P01, 57P02, 57P03), too many connections (53300), a closed pool and timeouts, including a
// context deadline. Rejected data is never transient; unknown errors are not either. It is one
// input of Decide.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, ErrRejected) {
		return false
	}
	// pgxpool returns puddle's ErrClosedPool ("closed pool"), a module this one does not import.
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "closed pool") {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case pgerrcode.SerializationFailure, pgerrcode.DeadlockDetected, pgerrcode.AdminShutdown,
			pgerrcode.CrashShutdown, pgerrcode.CannotConnectNow, pgerrcode.TooManyConnections,
			pgerrcode.LockNotAvailable, pgerrcode.QueryCanceled:
			return true
		}
		return pgerrcode.IsConnectionException(pgErr.Code)
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true
	}
	return errors.Is(err, net.ErrClosed) || errors.Is(err, pgconn.ErrConnClosed)
}

// Fate is what becomes of a message, a row or a batch after an error. The table is in the
// package documentation; Decide is the only place that chooses.
type Fate int

const (
	// FateDone: no error; the batch is stored and its offsets may be committed.
	FateDone Fate = iota
	// FateDeadLetter: the message or row can never be stored (malformed, or PostgreSQL rejected the
	// row's data): record it in booking_events_dead and store the rest of the batch.
	FateDeadLetter
	// FateRetry: the error may go away (the database is down, a deadlock, a timeout): back off and
	// try the same batch again, committing nothing past it.
	FateRetry
	// FateAlarmedRetry: the error is neither transient nor the data's fault (a missing column,
	// permission denied, an error nobody classified): retry like Retry, because dead-lettering
	// would drain good events, but loudly: ERROR log on every attempt, and after a bounded number
	// of attempts the stuck gauge and a 503 from /healthz.
	FateAlarmedRetry
	// FateStop: the consumer is shutting down; commit nothing past this batch, it is redelivered.
	FateStop
)

func (f Fate) String() string {
	switch f {
	case FateDone:
		return "done"
	case FateDeadLetter:
		return "dead-letter"
	case FateRetry:
		return "retry"
	case FateAlarmedRetry:
		return "alarmed-retry"
	case FateStop:
		return "stop"
	}
	return fmt.Sprintf("Fate(%d)", int(f))
}

// Decision is Decide's answer: the fate, and a short stable reason for logs and metric labels
// ("sqlstate 42703", "malformed", "transient", ...). Reason never carries data from the message.
type Decision struct {
	Fate   Fate
	Reason string
}

// Decide chooses the fate of a failed message, row or batch (see the package documentation's
// table). ctx is the consumer's run context: once it is done, every failure means Stop.
func Decide(ctx context.Context, err error) Decision {
	switch {
	case err == nil:
		return Decision{FateDone, "ok"}
	case ctx.Err() != nil:
		return Decision{FateStop, "shutting down"}
	case errors.Is(err, events.ErrMalformed):
		return Decision{FateDeadLetter, "malformed"}
	case errors.Is(err, ErrRejected):
		return Decision{FateDeadLetter, "rejected " + sqlstate(err)}
	case IsTransient(err):
		return Decision{FateRetry, "transient"}
	}
	if code := sqlstate(err); code != "" {
		return Decision{FateAlarmedRetry, "sqlstate " + code}
	}
	return Decision{FateAlarmedRetry, "unclassified"}
}

// sqlstate returns the SQLSTATE of a PostgreSQL error in err's chain, or "".
func sqlstate(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}
