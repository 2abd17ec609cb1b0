package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/store"
)

// ensureProjection builds listing_lifetimes on migrate when it is missing or its definitions
// changed (store.EnsureProjection: the first build over existing events, and after every edit of
// the views).
func ensureProjection(ctx context.Context, pool *pgxpool.Pool) error {
	_, err := store.New(pool).EnsureProjection(ctx)
	return err
}

func rebuildAttrs(st store.RebuildStats) []any {
	return []any{"listings", st.Listings, "caught_up", st.CaughtUp, "first_build", st.FirstTime,
		"build", st.Build.String(), "swap", st.Swap.String(), "took", st.Total.String()}
}

// errProjectionDiffers makes lifetimes --verify exit non-zero.
var errProjectionDiffers = errors.New("booking_lifetimes (the listing_lifetimes projection) differs from booking_lifetimes_from_events")

// errRollupDiffers makes lifetimes --verify exit non-zero when the dashboard's rollup is off.
var errRollupDiffers = errors.New("booking_events_hourly (the dashboard's totals and chart) differs from booking_events")

// verifyProjection is lifetimes --verify: every listing where the served booking_lifetimes (the
// projection) and the definition booking_lifetimes_from_events disagree, one line each, then a
// count; then every hour and type where the dashboard's hourly rollup and booking_events disagree;
// an error (exit 1) if there is any.
func verifyProjection(ctx context.Context, s *store.Store, w io.Writer) error {
	diffs, err := s.VerifyProjection(ctx)
	if err != nil {
		return err
	}
	for _, d := range diffs {
		fmt.Fprintln(w, d)
	}
	var failed error
	if len(diffs) > 0 {
		fmt.Fprintf(w, "%d listings differ\n", len(diffs))
		failed = fmt.Errorf("%w: %d listings (run lifetimes --rebuild)", errProjectionDiffers, len(diffs))
	} else {
		fmt.Fprintln(w, "booking_lifetimes (listing_lifetimes) equals booking_lifetimes_from_events for every listing")
	}
	hours, err := s.VerifyHourly(ctx)
	if err != nil {
		return errors.Join(failed, err)
	}
	for _, d := range hours {
		fmt.Fprintln(w, d)
	}
	if len(hours) > 0 {
		fmt.Fprintf(w, "%d hours differ\n", len(hours))
		// Only a write with the triggers disabled (a restore) can get here; the recount is the
		// last two statements of migrations/008_booking_events_hourly_every_write.sql.
		return errors.Join(failed, fmt.Errorf("%w: %d hours (recount it as migration 008 does)", errRollupDiffers, len(hours)))
	}
	fmt.Fprintln(w, "booking_events_hourly equals booking_events for every hour")
	return failed
}

// rebuildProjection is lifetimes --rebuild.
func rebuildProjection(ctx context.Context, s *store.Store, w io.Writer, logger *slog.Logger) error {
	st, err := s.RebuildProjection(ctx)
	if err != nil {
		return err
	}
	logger.InfoContext(ctx, "listing_lifetimes projection rebuilt", rebuildAttrs(st)...)
	_, err = fmt.Fprintf(w, "rebuilt listing_lifetimes: %d listings in %v (build %v, final swap %v, %d listings caught up)\n",
		st.Listings, st.Total.Round(1e6), st.Build.Round(1e6), st.Swap.Round(1e6), st.CaughtUp)
	return err
}
