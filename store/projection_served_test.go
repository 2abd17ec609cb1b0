package store_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/views"
)

// servedFrom returns the relations booking_lifetimes reads (its view's dependencies) and its oid.
func servedFrom(t *testing.T, pool *pgxpool.Pool, view string) (string, uint32) {
	t.Helper()
	var from string
	var oid uint32
	if err := pool.QueryRow(t.Context(), `select coalesce(string_agg(distinct d.refobjid::regclass::text, ','), ''), $1::regclass::oid
		from pg_rewrite r join pg_depend d on d.objid = r.oid and d.refobjid <> $1::regclass
		where r.ev_class = $1::regclass and d.classid = 'pg_rewrite'::regclass`, view).Scan(&from, &oid); err != nil {
		t.Fatal(err)
	}
	return from, oid
}

// TestServedViewSurvivesRebuilds: booking_lifetimes reads listing_lifetimes (the projection), its
// alias booking_lifetimes_fast reads booking_lifetimes, and a rebuild swaps the table underneath
// without dropping the view: its oid stays, and a view a user built on it keeps working.
func TestServedViewSurvivesRebuilds(t *testing.T) {
	t.Parallel()
	pool, s, _ := storedOpened(t, 5)
	from, oid := servedFrom(t, pool, "booking_lifetimes")
	if from != "listing_lifetimes" {
		t.Fatalf("booking_lifetimes reads %q, want listing_lifetimes", from)
	}
	if alias, _ := servedFrom(t, pool, "booking_lifetimes_fast"); alias != "booking_lifetimes" {
		t.Fatalf("booking_lifetimes_fast reads %q, want booking_lifetimes", alias)
	}
	if _, err := pool.Exec(t.Context(), "create view my_listings as select listing_key from booking_lifetimes"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.RebuildProjection(t.Context()); err != nil {
			t.Fatalf("rebuild with a user view on booking_lifetimes: %v", err)
		}
	}
	if from, after := servedFrom(t, pool, "booking_lifetimes"); from != "listing_lifetimes" || after != oid {
		t.Fatalf("after the rebuilds booking_lifetimes (oid %d, was %d) reads %q", after, oid, from)
	}
	var n int
	if err := pool.QueryRow(t.Context(), "select count(*) from my_listings").Scan(&n); err != nil || n != 5 {
		t.Fatalf("the user's view after the rebuilds: %d rows, %v; want 5", n, err)
	}
	assertProjectionEqualsView(t, s, pool, 5)
}

// TestUpgradeServesBookingLifetimesFromTheProjection: a database in the older shape
// (booking_lifetimes the definition over booking_lifetimes_stored, booking_lifetimes_fast the
// projection's view, a user's view on booking_lifetimes) is migrated: the projection rebuilds
// (the hash changed), booking_lifetimes now reads listing_lifetimes with the same oid, the user's
// view survives and the old stored layer is gone.
func TestUpgradeServesBookingLifetimesFromTheProjection(t *testing.T) {
	t.Parallel()
	pool, s, _ := storedOpened(t, 5)
	for _, sql := range []string{
		"create view booking_lifetimes_stored as select * from booking_lifetimes_from_events_stored",
		views.ClockLayer("booking_lifetimes", "booking_lifetimes_stored"),
		views.ClockLayer("booking_lifetimes_fast", "listing_lifetimes"),
		"create view my_booked as select listing_key from booking_lifetimes where status = 'booked'",
		"update listing_lifetimes_state set view_hash = 'before the projection served booking_lifetimes'",
	} {
		if _, err := pool.Exec(t.Context(), sql); err != nil {
			t.Fatalf("%.60s: %v", sql, err)
		}
	}
	if from, _ := servedFrom(t, pool, "booking_lifetimes"); from != "booking_lifetimes_stored" {
		t.Fatalf("set-up: booking_lifetimes reads %q", from)
	}
	_, oid := servedFrom(t, pool, "booking_lifetimes")
	st, err := s.EnsureProjection(t.Context())
	if err != nil || st.UpToDate {
		t.Fatalf("EnsureProjection after the upgrade: %+v, %v; want a rebuild", st, err)
	}
	if from, after := servedFrom(t, pool, "booking_lifetimes"); from != "listing_lifetimes" || after != oid {
		t.Fatalf("after the upgrade booking_lifetimes (oid %d, was %d) reads %q", after, oid, from)
	}
	var legacy bool
	if err := pool.QueryRow(t.Context(), "select to_regclass('booking_lifetimes_stored') is not null").Scan(&legacy); err != nil || legacy {
		t.Fatalf("booking_lifetimes_stored still there: %v, %v", legacy, err)
	}
	if _, err := pool.Exec(t.Context(), "select * from my_booked"); err != nil {
		t.Fatalf("the user's view after the upgrade: %v", err)
	}
	assertProjectionEqualsView(t, s, pool, 5)
	if st, err := store.New(pool).EnsureProjection(t.Context()); err != nil || !st.UpToDate {
		t.Fatalf("a second migrate: %+v, %v; want up to date", st, err)
	}
}
