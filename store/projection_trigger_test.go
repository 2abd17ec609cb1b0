package store_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// psql runs the real psql binary against pool's database with sql on -c (and stdin, if any).
func psql(t *testing.T, pool *pgxpool.Pool, stdin []byte, sql string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", pool.Config().ConnString(), "-c", sql)
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("psql -c %.80q: %v\n%s", sql, err, out)
	}
	return string(out)
}

// countServed counts the rows of booking_lifetimes (the served view) of source.
func countServed(t *testing.T, pool *pgxpool.Pool, source, status string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), "select count(*) from booking_lifetimes where source = $1 and status = $2",
		source, status).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// psqlListings is how many listings the psql tests write in one statement: over the threshold
// above which a write takes the rebuild's exclusive lock instead of one advisory lock a listing
// (50,000 of those in one transaction fail with "out of shared memory").
const psqlListings = 100_000

// TestPsqlInsertSelectAndCopyShowAtOnce: an INSERT ... SELECT of 100k listings' opens and a
// COPY of their closes, each one statement through the real psql, are in booking_lifetimes as
// soon as psql returns, and the projection equals the definition.
func TestPsqlInsertSelectAndCopyShowAtOnce(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	start := time.Now()
	psql(t, pool, nil, fmt.Sprintf(`insert into booking_events (event_id, event_type, source, listing_key, course_name,
		play_date, tee_time, price_krw, occurred_at, crawl_id, payload)
		select md5('psql-open-' || i)::uuid, 'listing_opened', 'psql', 'psql|C' || i || '||2099-05-10|07:00', 'C' || i,
		       '2099-05-10', '07:00', 100000, '2026-05-01 06:00+00', 'psql', '{}'
		from generate_series(1, %d) i`, psqlListings))
	t.Logf("psql INSERT ... SELECT of %d listings: %v", psqlListings, time.Since(start))
	if n := countServed(t, pool, "psql", "open"); n != psqlListings {
		t.Fatalf("after psql INSERT ... SELECT: %d open listings in booking_lifetimes, want %d", n, psqlListings)
	}

	var csv bytes.Buffer
	for i := 1; i <= psqlListings; i++ {
		fmt.Fprintf(&csv, "%s,listing_closed,psql,psql|C%d||2099-05-10|07:00,C%d,2099-05-10,07:00,90000,booked,2026-05-01 07:00+00,psql,{}\n",
			uuidOf(fmt.Sprint("psql-close-", i)), i, i)
	}
	start = time.Now()
	psql(t, pool, csv.Bytes(), `\copy booking_events (event_id, event_type, source, listing_key, course_name, play_date, tee_time, price_krw, close_reason, occurred_at, crawl_id, payload) from stdin with (format csv)`)
	t.Logf("psql COPY of their %d closes: %v", psqlListings, time.Since(start))
	if n := countServed(t, pool, "psql", "booked"); n != psqlListings {
		t.Fatalf("after psql COPY: %d booked listings in booking_lifetimes, want %d", n, psqlListings)
	}
	assertProjectionEqualsView(t, store.New(pool), pool, psqlListings)
}

// uuidOf is a deterministic UUID for name (md5, as the SQL above).
func uuidOf(name string) string {
	return uuid.UUID(md5.Sum([]byte(name))).String()
}

// TestUpdateDeleteTruncateKeepTheProjection: an UPDATE of events (a price, a close turned into a
// change), a DELETE of a listing's last event and of all of another's, and finally a TRUNCATE,
// each through plain SQL, leave booking_lifetimes equal to the definition.
func TestUpdateDeleteTruncateKeepTheProjection(t *testing.T) {
	t.Parallel()
	pool, s, _ := storedOpened(t, 6)
	var closes []store.Message
	for i := range 3 {
		closes = append(closes, message(t, events.Closed(listing(i), "c2", t0.Add(time.Hour), events.Booked), 100+i))
	}
	mustIngest(t, s, closes)
	for _, step := range []struct{ name, sql string }{
		{"update a price", "update booking_events set price_krw = 1 where listing_key = '" + listing(4).Key() + "'"},
		{"update a close into a change", "update booking_events set event_type = 'listing_changed', close_reason = null where listing_key = '" +
			listing(1).Key() + "' and event_type = 'listing_closed'"},
		{"delete a last event", "delete from booking_events where listing_key = '" + listing(2).Key() + "' and event_type = 'listing_closed'"},
		{"delete a listing", "delete from booking_events where listing_key = '" + listing(5).Key() + "'"},
	} {
		if _, err := pool.Exec(t.Context(), step.sql); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		diffs, err := s.VerifyProjection(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range diffs {
			t.Errorf("after %s: %s", step.name, d)
		}
	}
	assertProjectionEqualsView(t, s, pool, 5)
	if _, err := pool.Exec(t.Context(), "truncate booking_events"); err != nil {
		t.Fatal(err)
	}
	assertProjectionEqualsView(t, s, pool, 0)
}

// TestDeadRetryKeepsTheProjection: dead letters re-driven by RetryDead (booking-consumer dead
// retry) are in booking_lifetimes at once.
func TestDeadRetryKeepsTheProjection(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	s := store.New(pool)
	for i := range 4 {
		deadRow(t, pool, "dead", int64(i), encode(t, events.Opened(listing(i), "crawl-1", t0)), "malformed event: fixed since")
	}
	if res, err := s.RetryDead(t.Context(), store.DeadFilter{}, false, nil); err != nil || res.Inserted != 4 {
		t.Fatalf("RetryDead: %+v, %v", res, err)
	}
	assertProjectionEqualsView(t, s, pool, 4)
}

// TestTwoTransactionsMeetingDeadlock: two multi-statement transactions each insert an event of
// one listing, then one of the other's. Each waits for the other's listing lock: PostgreSQL
// detects the deadlock and aborts one with 40P01, which store.Decide calls transient (the
// consumer retries such a batch; a psql user retries the transaction). The other commits; the
// retried one then commits too, and the projection equals the definition.
func TestTwoTransactionsMeetingDeadlock(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	ctx := t.Context()
	insert := func(tx pgx.Tx, i int, typ string) error {
		_, err := tx.Exec(ctx, `insert into booking_events (event_id, event_type, source, listing_key, course_name,
			play_date, tee_time, occurred_at, crawl_id, payload, close_reason)
			values (gen_random_uuid(), $1, 'tx', $2, 'C', '2099-05-10', '07:00', $3, 'tx', '{}', case when $1 = 'listing_closed' then 'booked' end)`,
			typ, fmt.Sprint("tx|", i), t0.Add(time.Duration(len(typ))*time.Minute))
		return err
	}
	run := func(first, second int, typ string, ready chan<- error, proceed <-chan struct{}) error {
		tx, err := pool.Begin(ctx)
		if err != nil {
			ready <- err
			return err
		}
		defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after a commit: a no-op
		err = insert(tx, first, typ)
		ready <- err
		if err != nil {
			return err
		}
		<-proceed
		if err := insert(tx, second, typ); err != nil {
			return err
		}
		return tx.Commit(ctx)
	}
	// a holds listing 1 and asks for 2; b holds 2 and asks for 1.
	readyA, readyB := make(chan error, 1), make(chan error, 1)
	goA, goB := make(chan struct{}), make(chan struct{})
	errA, errB := make(chan error, 1), make(chan error, 1)
	go func() { errA <- run(1, 2, "listing_opened", readyA, goA) }()
	go func() { errB <- run(2, 1, "listing_closed", readyB, goB) }()
	if err := errors.Join(<-readyA, <-readyB); err != nil {
		t.Fatalf("first inserts: %v", err)
	}
	close(goA)
	close(goB)
	ea, eb := <-errA, <-errB
	var pgErr *pgconn.PgError
	failed := errors.Join(ea, eb)
	if (ea == nil) == (eb == nil) || !errors.As(failed, &pgErr) || pgErr.Code != "40P01" {
		t.Fatalf("two transactions meeting: a %v, b %v; want exactly one 40P01", ea, eb)
	}
	if d := store.Decide(ctx, failed); d.Fate != store.FateRetry {
		t.Fatalf("Decide(40P01) = %v, want FateRetry", d.Fate)
	}
	t.Logf("one transaction failed as expected: %v", failed)
	retry := func(first, second int, typ string) {
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			return errors.Join(insert(tx, first, typ), insert(tx, second, typ))
		}); err != nil {
			t.Fatalf("retry: %v", err)
		}
	}
	if ea != nil {
		retry(1, 2, "listing_opened")
	} else {
		retry(2, 1, "listing_closed")
	}
	assertProjectionEqualsView(t, store.New(pool), pool, 2)
	if !strings.Contains(failed.Error(), "deadlock") {
		t.Errorf("error %v does not say deadlock", failed)
	}
}
