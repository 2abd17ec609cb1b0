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

// verifyProjection is lifetimes --verify: every listing where the served booking_lifetimes (the
// projection) and the definition booking_lifetimes_from_events disagree, one line each, then a count; an error (exit 1) if there is any.
func verifyProjection(ctx context.Context, s *store.Store, w io.Writer) error {
	diffs, err := s.VerifyProjection(ctx)
	if err != nil {
		return err
	}
	for _, d := range diffs {
		fmt.Fprintln(w, d)
	}
	if len(diffs) > 0 {
		fmt.Fprintf(w, "%d listings differ\n", len(diffs))
		return fmt.Errorf("%w: %d listings (run lifetimes --rebuild)", errProjectionDiffers, len(diffs))
	}
	fmt.Fprintln(w, "booking_lifetimes (listing_lifetimes) equals booking_lifetimes_from_events for every listing")
	return nil
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
