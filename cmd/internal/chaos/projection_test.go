//go:build chaos

package chaos_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/store"
)

// checkProjection fails the test unless booking_lifetimes (served from the listing_lifetimes
// projection) says exactly what its definition booking_lifetimes_from_events says for every
// listing (store.VerifyProjection), whatever the scenario did to the consumer, the broker or the
// database.
func checkProjection(t testing.TB, db *pgxpool.Pool) {
	t.Helper()
	var diffs []store.ProjectionDiff
	if err := retryDB(t, func(ctx context.Context) error {
		var err error
		diffs, err = store.New(db).VerifyProjection(ctx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs[:min(len(diffs), 20)] {
		t.Errorf("projection != definition: %s", d)
	}
	if len(diffs) > 0 {
		t.Errorf("%d listings differ between booking_lifetimes (listing_lifetimes) and booking_lifetimes_from_events", len(diffs))
	}
}
