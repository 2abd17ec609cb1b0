package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
)

// seeded is a database with main_test.go's seed: the environment naming it and a connection to it.
func seeded(t *testing.T) (env map[string]string, conn *pgx.Conn) {
	t.Helper()
	dbURL := seed(t)
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return map[string]string{"DATABASE_URL": dbURL}, conn
}

// TestLifetimesVerifyAndRebuild: --verify is clean after ingest, reports a tampered projection
// row and exits non-zero; --rebuild repairs it; the two flags together are a usage error.
func TestLifetimesVerifyAndRebuild(t *testing.T) {
	t.Parallel()
	env, conn := seeded(t)

	out, _, err := runCLI(t, t.Context(), env, "lifetimes", "--verify")
	if err != nil || !strings.Contains(out, "equals booking_lifetimes_from_events for every listing") {
		t.Fatalf("--verify after ingest = %q, %v", out, err)
	}

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

// TestLifetimesVerifyChecksTheHourlyRollup: --verify also compares the dashboard's hourly rollup
// (its "N events stored" and events-per-hour chart) with booking_events, names the hour that
// differs and exits non-zero.
func TestLifetimesVerifyChecksTheHourlyRollup(t *testing.T) {
	t.Parallel()
	env, conn := seeded(t)
	if out, _, err := runCLI(t, t.Context(), env, "lifetimes", "--verify"); err != nil || !strings.Contains(out, "booking_events_hourly equals booking_events") {
		t.Fatalf("--verify after ingest = %q, %v", out, err)
	}
	if _, err := conn.Exec(t.Context(), `insert into booking_events_hourly (hour, event_type, events, last_ingested_at)
		values ('2099-01-01 03:00Z', 'listing_opened', 5, now())`); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, t.Context(), env, "lifetimes", "--verify")
	if !errors.Is(err, errRollupDiffers) || !strings.Contains(out, "2099-01-01 03:00Z listing_opened: booking_events_hourly counts 5, booking_events holds 0") {
		t.Fatalf("--verify of a tampered rollup = %q, %v", out, err)
	}
}

// TestMigrateBuildsTheProjection: migrate builds listing_lifetimes from the events already stored
// when it does not exist (a database from before the projection), rebuilds it when the view
// definitions it was built from changed (another hash), and leaves it alone otherwise.
func TestMigrateBuildsTheProjection(t *testing.T) {
	t.Parallel()
	env, conn := seeded(t)
	tableOID := func() (oid uint32) {
		t.Helper()
		if err := conn.QueryRow(t.Context(), "select coalesce(to_regclass('listing_lifetimes')::oid, 0)").Scan(&oid); err != nil {
			t.Fatal(err)
		}
		return oid
	}

	for _, tc := range []struct{ name, sql string }{
		{"FirstBuild", "drop table listing_lifetimes cascade; update listing_lifetimes_state set view_hash = ''"},
		{"DefinitionChanged", "update listing_lifetimes set status = 'tampered'; update listing_lifetimes_state set view_hash = 'an older view'"},
	} {
		if _, err := conn.Exec(t.Context(), tc.sql); err != nil {
			t.Fatal(err)
		}
		before := tableOID()
		if _, stderr, err := runCLI(t, t.Context(), env, "migrate"); err != nil {
			t.Fatalf("%s: migrate: %v\n%s", tc.name, err, stderr)
		}
		if after := tableOID(); after == 0 || after == before {
			t.Fatalf("%s: listing_lifetimes oid %d -> %d: not rebuilt", tc.name, before, after)
		}
		if out, _, err := runCLI(t, t.Context(), env, "lifetimes", "--verify"); err != nil {
			t.Fatalf("%s: --verify after migrate = %q, %v", tc.name, out, err)
		}
		if out, _, err := runCLI(t, t.Context(), env, "lifetimes"); err != nil || !strings.Contains(out, "4 listings") {
			t.Fatalf("%s: lifetimes after migrate = %q, %v", tc.name, out, err)
		}
	}
	before := tableOID()
	if _, stderr, err := runCLI(t, t.Context(), env, "migrate"); err != nil {
		t.Fatalf("migrate again: %v\n%s", err, stderr)
	}
	if after := tableOID(); after != before {
		t.Fatalf("migrate with unchanged definitions rebuilt listing_lifetimes (oid %d -> %d)", before, after)
	}
}
