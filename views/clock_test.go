package views_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
	"github.com/golfcrawler/golf-crawler/views"
)

// columnsOf lists rel's columns in their order.
func columnsOf(t *testing.T, pool *pgxpool.Pool, rel string) []string {
	t.Helper()
	rows, err := pool.Query(t.Context(), `select attname from pg_attribute
		where attrelid = $1::regclass and attnum > 0 and not attisdropped order by attnum`, rel)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return cols
}

// withLifetime is stored's columns as the clock layer serves them: lifetime after last_event_at.
func withLifetime(stored []string) []string {
	i := slices.Index(stored, "last_event_at")
	return slices.Insert(slices.Clone(stored), i+1, "lifetime")
}

// TestClockLayerServesEveryStoredColumn: a column added to the stored relation is in the view the
// clock layer makes over it, at the end, with its value, without an edit of lifetimes_clock.sql;
// re-applied over the table grown by another column (as the projection's swap does after the
// definition gained one), the same view keeps its columns and gains the new one.
func TestClockLayerServesEveryStoredColumn(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	a := listing("Alpha", "07:00", 100000)
	ingest(t, store.New(pool), []events.Event{events.Opened(a, "c1", t0), events.Closed(a, "c2", t0.Add(time.Hour), events.Booked)}, 2)

	served := columnsOf(t, pool, "booking_lifetimes")
	if want := withLifetime(columnsOf(t, pool, "listing_lifetimes")); !slices.Equal(served, want) {
		t.Fatalf("booking_lifetimes' columns\n%v\nwant listing_lifetimes' with lifetime\n%v", served, want)
	}

	exec := func(sql string) {
		t.Helper()
		if _, err := pool.Exec(t.Context(), sql); err != nil {
			t.Fatalf("%.80s: %v", sql, err)
		}
	}
	exec(`create table scratch_stored as select *, 18 as scratch_holes from booking_lifetimes_from_events_stored`)
	exec(views.ClockLayer("scratch_served", "scratch_stored"))
	got := columnsOf(t, pool, "scratch_served")
	if want := append(slices.Clone(served), "scratch_holes"); !slices.Equal(got, want) {
		t.Fatalf("over a stored relation with a new column scratch_holes the clock layer serves\n%v\nwant\n%v", got, want)
	}
	var holes int
	var status string
	if err := pool.QueryRow(t.Context(), "select scratch_holes, status from scratch_served").Scan(&holes, &status); err != nil || holes != 18 || status != "booked" {
		t.Fatalf("scratch_served: scratch_holes %d, status %q, %v; want 18, booked", holes, status, err)
	}

	var oid uint32
	if err := pool.QueryRow(t.Context(), "select 'scratch_served'::regclass::oid").Scan(&oid); err != nil {
		t.Fatal(err)
	}
	exec(`alter table scratch_stored add column scratch_tees text default 'blue'`)
	exec(views.ClockLayer("scratch_served", "scratch_stored"))
	got = columnsOf(t, pool, "scratch_served")
	if want := append(slices.Clone(served), "scratch_holes", "scratch_tees"); !slices.Equal(got, want) {
		t.Fatalf("re-applied over the grown table the clock layer serves\n%v\nwant\n%v", got, want)
	}
	var after uint32
	var tees string
	if err := pool.QueryRow(t.Context(), "select 'scratch_served'::regclass::oid, scratch_tees from scratch_served").Scan(&after, &tees); err != nil || after != oid || tees != "blue" {
		t.Fatalf("re-applied: oid %d (was %d), scratch_tees %q, %v; want the same view, blue", after, oid, tees, err)
	}

	// Over a relation without columns the view has, it is PostgreSQL's own error, SQLSTATE and
	// all, through the do block: the swap's fallback (drop and re-create) is chosen by the code.
	_, err := pool.Exec(t.Context(), views.ClockLayer("scratch_served", "booking_lifetimes_from_events_stored"))
	if pgErr := (*pgconn.PgError)(nil); !errors.As(err, &pgErr) || pgErr.Code != "42P16" {
		t.Fatalf("re-applied over a relation without scratch_holes: %v; want SQLSTATE 42P16", err)
	}
}

// TestClockLayerRefusesAStoredRelationWithoutItsInputs: a stored relation without a column the
// clock layer computes from is an error naming it, not a view that silently lacks lifetime.
func TestClockLayerRefusesAStoredRelationWithoutItsInputs(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	if _, err := pool.Exec(t.Context(), `create table scratch_stored as
		select listing_key, play_date, tee_time, status, opened_at, closed_at from booking_lifetimes_from_events_stored`); err != nil {
		t.Fatal(err)
	}
	_, err := pool.Exec(t.Context(), views.ClockLayer("scratch_served", "scratch_stored"))
	if err == nil || !strings.Contains(err.Error(), "scratch_stored lacks one of") {
		t.Fatalf("clock layer over a relation without last_event_at: %v; want an error naming it", err)
	}
}
