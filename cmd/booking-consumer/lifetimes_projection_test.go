package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
)

// TestLifetimesVerifyAndRebuild: --verify is clean after ingest, reports a tampered projection
// row and exits non-zero; --rebuild repairs it; the two flags together are a usage error.
func TestLifetimesVerifyAndRebuild(t *testing.T) {
	t.Parallel()
	dbURL := seed(t)
	env := map[string]string{"DATABASE_URL": dbURL}

	out, _, err := runCLI(t, t.Context(), env, "lifetimes", "--verify")
	if err != nil || !strings.Contains(out, "equals booking_lifetimes for every listing") {
		t.Fatalf("--verify after ingest = %q, %v", out, err)
	}

	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.WithoutCancel(t.Context()))
	if _, err := conn.Exec(t.Context(), "update listing_lifetimes set last_price_krw = 1 where course_name = 'Alpha CC' and tee_time = '07:00'"); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCLI(t, t.Context(), env, "lifetimes", "--verify")
	if !errors.Is(err, errProjectionDiffers) || !strings.Contains(out, "last_price_krw view=150000 projection=1") || !strings.Contains(out, "1 listings differ") {
		t.Fatalf("--verify of a tampered projection = %q, %v", out, err)
	}

	out, _, err = runCLI(t, t.Context(), env, "lifetimes", "--rebuild")
	if err != nil || !strings.Contains(out, "rebuilt listing_lifetimes: 4 listings") {
		t.Fatalf("--rebuild = %q, %v", out, err)
	}
	if out, _, err := runCLI(t, t.Context(), env, "lifetimes", "--verify"); err != nil {
		t.Fatalf("--verify after --rebuild = %q, %v", out, err)
	}
	if _, _, err := runCLI(t, t.Context(), env, "lifetimes", "--verify", "--rebuild"); !errors.Is(err, cli.ErrUsage) {
		t.Fatalf("--verify --rebuild: %v, want a usage error", err)
	}
}
