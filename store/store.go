// Package store is the booking database behind the booking-consumer: it ingests batches of Kafka
// messages into booking_events exactly once in effect (ON CONFLICT (event_id) DO NOTHING, in one
// transaction per batch, with poison messages dead-lettered in the same transaction), keeps the
// listing_lifetimes projection of the booking_lifetimes view in that same transaction
// (projection.go), and reads back counts, exports and lifetimes (from the projection).
//
// The schema lives in package migrations and the views in package views; store only runs the
// queries in queries/*.sql. PostgreSQL errors are mapped once, by interpret, onto ErrRejected
// (the row's data is at fault) or left as they are.
//
// # The fate of a failure
//
// One function, Decide, chooses what becomes of a failed message, row or batch; Ingest uses it to
// pin errors on rows and package consumer uses it for whole batches. In order, first match wins:
//
//	error                                                   fate              what happens
//	nil                                                     FateDone          batch stored; offsets committed
//	any error once the run context is done                  FateStop          nothing committed past it; redelivered
//	events.ErrMalformed (decode, validation, > 64 KiB)      FateDeadLetter    message -> booking_events_dead, rest stored
//	ErrRejected: SQLSTATE class 22, 23 or 54 on one row     FateDeadLetter    row -> booking_events_dead (found by savepoints)
//	IsTransient: class 08, 40001, 40P01, 57P0x, 53300,      FateRetry         same batch again, capped backoff, WARN
//	  55P03, 57014, timeouts, closed pool, network errors
//	anything else (42703 missing column, 42501 permission   FateAlarmedRetry  same batch again, capped backoff, ERROR on
//	  denied, 53100 disk full, unclassified errors)                           every attempt; after consumer.Config.AlarmAfter
//	                                                                          attempts the stuck gauge and /healthz 503
//
// A FateDeadLetter error that reaches the loop as a whole batch's error (the store could not pin
// it on a row, e.g. the dead-letter insert itself was rejected) is retried as FateAlarmedRetry.
// Nothing is ever dead-lettered for an error that is not the message's own fault: a broken schema
// or a missing grant pauses the stream loudly instead of draining it into the dead-letter table.
package store

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Store runs the booking queries over a connection pool.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a Store over pool; the pool stays the caller's to close.
func New(pool *pgxpool.Pool) *Store {
	return &Store{pool: pool}
}

var (
	//go:embed queries/count_events.sql
	countEventsSQL string
	//go:embed queries/existing_ids.sql
	existingIDsSQL string
)

// CountEvents returns the number of stored events.
func (s *Store) CountEvents(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, countEventsSQL).Scan(&n); err != nil {
		return 0, fmt.Errorf("count events: %w", interpret(err))
	}
	return n, nil
}

// ExistingIDs returns how many of ids are already stored (each distinct id counted once): what a
// replay dry-run reports as duplicates. Pass ids in chunks of a few thousand.
func (s *Store) ExistingIDs(ctx context.Context, ids []uuid.UUID) (int, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	var n int
	if err := s.pool.QueryRow(ctx, existingIDsSQL, uuidStrings(ids)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count existing ids (%d asked): %w", len(ids), interpret(err))
	}
	return n, nil
}

func uuidStrings(ids []uuid.UUID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = id.String()
	}
	return out
}
