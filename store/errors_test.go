package store

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
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
