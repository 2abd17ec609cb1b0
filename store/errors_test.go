package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/golfcrawler/golf-crawler/events"
)

func TestInterpretAndIsTransient(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: code}) }
	for _, tc := range []struct {
		name      string
		err       error
		rejected  bool
		transient bool
	}{
		{"InvalidText", pg("22P02"), true, false},
		{"NulInJSON", pg("22P05"), true, false},
		{"CheckViolation", pg("23514"), true, false},
		{"NotNull", pg("23502"), true, false},
		{"Serialization", pg("40001"), false, true},
		{"Deadlock", pg("40P01"), false, true},
		{"AdminShutdown", pg("57P01"), false, true},
		{"CannotConnectNow", pg("57P03"), false, true},
		{"ConnectionFailure", pg("08006"), false, true},
		{"UndefinedTable", pg("42P01"), false, false},
		{"Deadline", context.DeadlineExceeded, false, true},
		{"ClosedPool", errors.New("closed pool"), false, true},
		{"ConnClosed", pgconn.ErrConnClosed, false, true},
		{"Other", errors.New("boom"), false, false},
		{"Nil", nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := interpret(tc.err)
			if errors.Is(got, ErrRejected) != tc.rejected {
				t.Errorf("interpret(%v) rejected = %v, want %v", tc.err, !tc.rejected, tc.rejected)
			}
			if IsTransient(got) != tc.transient {
				t.Errorf("IsTransient(%v) = %v, want %v", got, !tc.transient, tc.transient)
			}
		})
	}
}

// The decision table of the package documentation, row by row.
func TestDecide(t *testing.T) {
	t.Parallel()
	live := t.Context()
	done, cancel := context.WithCancel(t.Context())
	cancel()
	pg := func(code string) error { return interpret(fmt.Errorf("insert: %w", &pgconn.PgError{Code: code})) }
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		err    error
		fate   Fate
		reason string
	}{
		{"Success", live, nil, FateDone, "ok"},
		{"SuccessWhileStopping", done, nil, FateDone, "ok"},
		{"Malformed", live, fmt.Errorf("decode: %w", events.ErrNotJSON), FateDeadLetter, "malformed"},
		{"TooLarge", live, events.ErrTooLarge, FateDeadLetter, "malformed"},
		{"DataException", live, pg("22P05"), FateDeadLetter, "rejected 22P05"},
		{"CheckViolation", live, pg("23514"), FateDeadLetter, "rejected 23514"},
		{"IndexRowTooBig", live, pg("54000"), FateDeadLetter, "rejected 54000"},
		{"ConnectionLost", live, pg("08006"), FateRetry, "transient"},
		{"Deadlock", live, pg("40P01"), FateRetry, "transient"},
		{"AdminShutdown", live, pg("57P01"), FateRetry, "transient"},
		{"Deadline", live, context.DeadlineExceeded, FateRetry, "transient"},
		{"ClosedPool", live, errors.New("closed pool"), FateRetry, "transient"},
		{"UndefinedColumn", live, pg("42703"), FateAlarmedRetry, "sqlstate 42703"},
		{"PermissionDenied", live, pg("42501"), FateAlarmedRetry, "sqlstate 42501"},
		{"UndefinedTable", live, pg("42P01"), FateAlarmedRetry, "sqlstate 42P01"},
		{"DiskFull", live, pg("53100"), FateAlarmedRetry, "sqlstate 53100"},
		{"Unclassified", live, errors.New("boom"), FateAlarmedRetry, "unclassified"},
		{"TransientWhileStopping", done, pg("08006"), FateStop, "shutting down"},
		{"RejectedWhileStopping", done, pg("22P05"), FateStop, "shutting down"},
		{"Cancelled", done, context.Canceled, FateStop, "shutting down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Decide(tc.ctx, tc.err)
			if got != (Decision{tc.fate, tc.reason}) {
				t.Errorf("Decide(%v) = %v %q, want %v %q", tc.err, got.Fate, got.Reason, tc.fate, tc.reason)
			}
		})
	}
}

// A full lock table (53200 "out of shared memory": another transaction holds many locks) stays an
// alarmed retry with its SQLSTATE as the reason, and the error says what it is, so the consumer's
// "insert failed" line and /healthz point at the cause instead of at memory.
func TestInterpretExplainsAFullLockTable(t *testing.T) {
	t.Parallel()
	err := interpret(fmt.Errorf("insert 1000 events: %w", &pgconn.PgError{Severity: "ERROR", Code: "53200",
		Message: "out of shared memory", Hint: "You might need to increase max_locks_per_transaction."}))
	if d := Decide(t.Context(), err); d != (Decision{FateAlarmedRetry, "sqlstate 53200"}) {
		t.Errorf("Decide = %v %q, want alarmed-retry \"sqlstate 53200\"", d.Fate, d.Reason)
	}
	for _, want := range []string{"the lock table is full", "another transaction holds many locks", "max_locks_per_transaction", "SQLSTATE 53200"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "53200" {
		t.Errorf("error %v lost its PgError", err)
	}
}
