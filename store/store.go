// Package store is the booking database behind the booking-consumer: it ingests batches of Kafka
// messages into booking_events exactly once in effect (ON CONFLICT (event_id) DO NOTHING, in one
// transaction per batch, with poison messages dead-lettered in the same transaction), keeps the
// listing_lifetimes projection of the booking_lifetimes view in that same transaction
// (projection.go), and reads back counts, exports and lifetimes (from the projection).
//
// The schema lives in package migrations and the views in package views; store only runs the
// queries in queries/*.sql. PostgreSQL errors are mapped once, by interpret, onto ErrRejected
// (never retry) or left as they are (IsTransient says whether a retry may help).
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

	noProjection      bool // benchmarks only (export_test.go): Ingest without the projection
	noProjectionLocks bool // tests only: the refresh without its per-listing locks
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
