package storetest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/store"
)

// CountEvents is store.CountEvents on pool (the rows of booking_events); an error fails tb.
func CountEvents(tb testing.TB, pool *pgxpool.Pool) int64 {
	tb.Helper()
	n, err := store.New(pool).CountEvents(context.Background()) // usable in cleanups too
	if err != nil {
		tb.Fatalf("count booking_events: %v", err)
	}
	return n
}
