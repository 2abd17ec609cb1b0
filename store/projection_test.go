package store_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// randomHistory makes 1-8 events of listing i with random types and times (minute granularity,
// so ties happen): reopens, double closes, changes after a close. Half the listings play on a
// past date (an open one is expired by the clock), half in 2099.
func randomHistory(rng *rand.Rand, i int) []events.Event {
	l := listing(i)
	if i%2 == 1 {
		l.RoundDate, l.PlayDate = "2099-05-10", "2099-05-10"
	}
	return storetest.RandomHistory(rng, l, t0)
}

// ingestConcurrently stores evs through Ingest in batches of 1-size events, workers batches at
// a time.
func ingestConcurrently(t *testing.T, s *store.Store, rng *rand.Rand, evs []events.Event, size, workers int) {
	t.Helper()
	batches := make(chan []store.Message)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for b := range batches {
				if _, err := s.Ingest(t.Context(), b); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	go func() {
		defer close(batches)
		for start := 0; start < len(evs); {
			end := min(start+1+rng.IntN(size), len(evs))
			var b []store.Message
			for i, e := range evs[start:end] {
				b = append(b, message(t, e, start+i))
			}
			select {
			case batches <- b:
			case <-t.Context().Done():
				return
			}
			start = end
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("Ingest: %v", err)
	}
}

// assertProjectionEqualsView fails the test unless VerifyProjection finds nothing and the
// projection has want listings.
func assertProjectionEqualsView(t *testing.T, s *store.Store, pool *pgxpool.Pool, want int) {
	t.Helper()
	diffs, err := s.VerifyProjection(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Errorf("projection != view: %s", d)
	}
	var n int
	if err := pool.QueryRow(t.Context(), "select count(*) from listing_lifetimes").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != want {
		t.Errorf("listing_lifetimes has %d rows, want %d", n, want)
	}
}

// TestProjectionEqualsViewOverRandomHistories: random histories (ties in occurred_at included)
// delivered shuffled or mostly in time order, with duplicates, in random batches, three batches
// in flight at once; afterwards the projection says exactly what the definition says for every
// listing (expired-by-clock and open lifetimes included). Appends are folded into the stored row
// and the rest recomputed (projection_triggers.sql): this is the proof that the two agree.
func TestProjectionEqualsViewOverRandomHistories(t *testing.T) {
	t.Parallel()
	storetest.Seeds(t, 8, 13, func(t *testing.T, rng *rand.Rand) {
		pool := storetest.NewDB(t)
		s := store.New(pool)
		var all []events.Event
		const listings = 150
		for i := range listings {
			all = append(all, randomHistory(rng, i)...)
		}
		all = storetest.Redelivered(rng, all, len(all)/4)
		if rng.IntN(2) == 0 { // mostly in time order, as crawls deliver: most writes fold appends
			slices.SortStableFunc(all, func(a, b events.Event) int { return a.OccurredAt.Compare(b.OccurredAt) })
			for range len(all) / 10 {
				i := rng.IntN(len(all) - 1)
				all[i], all[i+1] = all[i+1], all[i]
			}
		}
		ingestConcurrently(t, s, rng, all, 40, 3)
		assertProjectionEqualsView(t, s, pool, listings)

		// And the rows the lifetimes command reads are the view's.
		got, err := s.Lifetimes(t.Context(), store.LifetimeFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var statuses []string
		for _, l := range got {
			statuses = append(statuses, l.Status)
		}
		slices.Sort(statuses)
		if len(got) != listings || !slices.Contains(statuses, "expired") || !slices.Contains(statuses, "open") {
			t.Errorf("Lifetimes: %d rows, statuses %v", len(got), slices.Compact(statuses))
		}
	})
}

// TestProjectionDuplicatesTouchNothing: a redelivered batch changes no projection row; new events
// of one listing rewrite that listing's row only.
func TestProjectionDuplicatesTouchNothing(t *testing.T) {
	t.Parallel()
	pool, s, batch := storedOpened(t, 20)
	versions := func() map[string]string {
		rows, err := pool.Query(t.Context(), "select listing_key, xmin::text || '/' || ctid::text from listing_lifetimes")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				t.Fatal(err)
			}
			out[k] = v
		}
		return out
	}
	before := versions()
	if res, err := s.Ingest(t.Context(), batch); err != nil || res.Duplicates != 20 {
		t.Fatalf("redelivery: %+v, %v", res, err)
	}
	if after := versions(); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("a batch of duplicates rewrote projection rows:\nbefore %v\nafter  %v", before, after)
	}
	closed := events.Closed(listing(3), "c2", t0.Add(time.Hour), events.Booked)
	mustIngest(t, s, []store.Message{message(t, closed, 100), batch[5]})
	after := versions()
	for k, v := range after {
		if changed := v != before[k]; changed != (k == listing(3).Key()) {
			t.Errorf("%s: row rewritten = %v, want only %s rewritten", k, changed, listing(3).Key())
		}
	}
	assertProjectionEqualsView(t, s, pool, 20)
}

// TestProjectionConcurrentComplementaryBatches: two Ingest calls at once, one with the opens and
// one with the closes of the same listings. Each recomputes rows from its own snapshot; without
// the per-listing lock the one that commits last misses the other's events and its upsert leaves
// a stale row (an open listing, or a close without its open).
func TestProjectionConcurrentComplementaryBatches(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	s := store.New(pool)
	const n, rounds = 70, 10 // listing(i) is unique for i < 720
	for round := range rounds {
		var opens, closes []store.Message
		for i := range n {
			l := listing(round*n + i)
			opens = append(opens, message(t, events.Opened(l, "c1", t0), i))
			closes = append(closes, message(t, events.Closed(l, "c2", t0.Add(time.Hour), events.Booked), n+i))
		}
		if _, err := ingestAtOnce(t, s, opens, closes); err != nil {
			t.Fatalf("round %d: Ingest: %v", round, err)
		}
	}
	assertProjectionEqualsView(t, s, pool, n*rounds)
	var booked int
	if err := pool.QueryRow(t.Context(), "select count(*) from listing_lifetimes where status = 'booked' and opened_at < closed_at").Scan(&booked); err != nil {
		t.Fatal(err)
	}
	if booked != n*rounds {
		t.Errorf("%d listings booked after their open in the projection, want %d", booked, n*rounds)
	}
}

// TestVerifyProjectionFindsDifferences: a tampered row, a missing row and a stray row are each
// reported, with the differing columns.
func TestVerifyProjectionFindsDifferences(t *testing.T) {
	t.Parallel()
	pool, s, _ := storedOpened(t, 5)
	assertProjectionEqualsView(t, s, pool, 5)
	for _, sql := range []string{
		"update listing_lifetimes set change_count = 99 where listing_key = '" + listing(1).Key() + "'",
		"delete from listing_lifetimes where listing_key = '" + listing(2).Key() + "'",
		"insert into listing_lifetimes select 'stray', source, course_name, course_part, play_date, tee_time, status, opened_at, closed_at, last_event_type, last_event_at, open_price_krw, last_price_krw, change_count, reopen_count from listing_lifetimes limit 1",
	} {
		if _, err := pool.Exec(t.Context(), sql); err != nil {
			t.Fatal(err)
		}
	}
	diffs, err := s.VerifyProjection(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range diffs {
		got = append(got, d.String())
	}
	byKey := map[string]store.ProjectionDiff{}
	for _, d := range diffs {
		byKey[d.ListingKey] = d
	}
	if len(diffs) != 3 || fmt.Sprint(byKey[listing(1).Key()].Columns) != "[change_count]" ||
		byKey[listing(2).Key()].Projection == nil && byKey[listing(2).Key()].View == nil || byKey[listing(2).Key()].Projection != nil ||
		byKey["stray"].View != nil || byKey["stray"].Projection == nil {
		t.Fatalf("VerifyProjection found:\n%v", got)
	}
	t.Logf("found: %q", got)
}

// TestRebuildWhileIngesting: rebuilds (and an EnsureProjection after a changed definition hash)
// run while three ingest workers keep storing random histories; afterwards the projection equals
// the view.
func TestRebuildWhileIngesting(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	s := store.New(pool)
	rng := rand.New(rand.NewPCG(7, 13))
	var all []events.Event
	const listings = 700
	for i := range listings {
		all = append(all, randomHistory(rng, i)...)
	}
	all = storetest.Redelivered(rng, all, 0)
	done := make(chan struct{})
	go func() {
		defer close(done)
		ingestConcurrently(t, s, rand.New(rand.NewPCG(8, 13)), all, 20, 3)
	}()
	rebuilds, caughtUp := 0, 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		var st store.RebuildStats
		var err error
		if rebuilds%2 == 0 {
			st, err = s.RebuildProjection(t.Context())
		} else {
			if _, err := pool.Exec(t.Context(), "update listing_lifetimes_state set view_hash = 'edited'"); err != nil {
				t.Fatal(err)
			}
			st, err = s.EnsureProjection(t.Context())
			if err == nil && st.UpToDate {
				t.Fatal("EnsureProjection: up to date after the definition hash changed")
			}
		}
		if err != nil {
			t.Fatalf("rebuild %d: %v", rebuilds, err)
		}
		rebuilds++
		caughtUp += st.CaughtUp
	}
	<-done
	t.Logf("%d rebuilds during the ingest, %d listings caught up after their build", rebuilds, caughtUp)
	if rebuilds < 2 {
		t.Fatalf("only %d rebuilds ran during the ingest", rebuilds)
	}
	assertProjectionEqualsView(t, s, pool, listings)
	if st, err := s.EnsureProjection(t.Context()); err != nil || !st.UpToDate {
		t.Fatalf("EnsureProjection after the rebuilds: %+v, %v; want up to date", st, err)
	}
	var rebuilding bool
	var pending int
	if err := pool.QueryRow(t.Context(), "select rebuilding, (select count(*) from listing_lifetimes_pending) from listing_lifetimes_state").Scan(&rebuilding, &pending); err != nil {
		t.Fatal(err)
	}
	if rebuilding || pending != 0 {
		t.Errorf("after the rebuilds: rebuilding %v, %d pending keys", rebuilding, pending)
	}
}

// TestRebuildIsExclusive: a second rebuild while one holds the lock fails with ErrRebuildRunning.
func TestRebuildIsExclusive(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	conn, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(t.Context(), "select pg_advisory_lock(1319, 1)"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.New(pool).RebuildProjection(t.Context()); !errors.Is(err, store.ErrRebuildRunning) {
		t.Fatalf("RebuildProjection beside another: %v, want ErrRebuildRunning", err)
	}
	if _, err := conn.Exec(t.Context(), "select pg_advisory_unlock(1319, 1)"); err != nil {
		t.Fatal(err)
	}
}

// TestEnsureProjectionClearsAnAbandonedRebuild: a rebuild killed after registering leaves the
// flag set (Ingest would log keys forever); the next migrate's EnsureProjection clears it.
func TestEnsureProjectionClearsAnAbandonedRebuild(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	s := store.New(pool)
	if _, err := pool.Exec(t.Context(), "update listing_lifetimes_state set rebuilding = true"); err != nil {
		t.Fatal(err)
	}
	mustIngest(t, s, []store.Message{message(t, events.Opened(listing(1), "c1", t0), 1)})
	pending := func() (n int) {
		if err := pool.QueryRow(t.Context(), "select count(*) from listing_lifetimes_pending").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := pending(); n != 1 {
		t.Fatalf("%d pending keys while flagged, want 1", n)
	}
	if st, err := s.EnsureProjection(t.Context()); err != nil || !st.UpToDate {
		t.Fatalf("EnsureProjection: %+v, %v", st, err)
	}
	mustIngest(t, s, []store.Message{message(t, events.Opened(listing(2), "c1", t0), 2)})
	if n := pending(); n != 0 {
		t.Fatalf("%d pending keys after EnsureProjection, want 0", n)
	}
	assertProjectionEqualsView(t, s, pool, 2)
}
