package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrRejected means PostgreSQL refused the data itself (a data exception, class 22, or an
// integrity violation, class 23): retrying the same row can never succeed, so the consumer
// dead-letters it. Every other error is treated as transient.
var ErrRejected = errors.New("rejected by the database")

// interpret maps PostgreSQL errors onto store's vocabulary: the one place that inspects
// pgconn.PgError codes.
func interpret(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) &&
		(pgerrcode.IsDataException(pgErr.Code) || pgerrcode.IsIntegrityConstraintViolation(pgErr.Code)) {
		return fmt.Errorf("%w: %w", ErrRejected, err)
	}
	return err
}

// IsTransient reports whether err may go away on retry: connection failures (class 08, refused
// dials, resets), serialization failures (40001) and deadlocks (40P01), server shutdown or start-up
// (57P01, 57P02, 57P03), too many connections (53300), a closed pool and timeouts, including a
// context deadline. Rejected data is never transient; unknown errors are not either, so the
// caller's default (retry) stays its own decision.
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
