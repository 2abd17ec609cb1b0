package store_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestProjectionFoldsFromAnEmptyTableInOneSession: the insert trigger's statements are planned
// by the backend that runs them, and PL/pgSQL keeps a function's plans for the session: a plan
// made while listing_lifetimes was empty must not be what later statements of the same session
// get wrong. One connection ingests a crawl-shaped stream (time order, every batch spread over
// many listings, a few events late, duplicates) into an EMPTY projection in many statements, so
// the first statements insert new listings only and the later ones fold into, or recompute,
// stored rows; afterwards the projection equals the definition.
func TestProjectionFoldsFromAnEmptyTableInOneSession(t *testing.T) {
	t.Parallel()
	storetest.Seeds(t, 2, 21, func(t *testing.T, rng *rand.Rand) {
		shared := storetest.NewDB(t)
		cfg := shared.Config().Copy()
		cfg.MaxConns, cfg.MinConns = 1, 1
		pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		var stored int
		if err := pool.QueryRow(t.Context(), "select count(*) from listing_lifetimes").Scan(&stored); err != nil || stored != 0 {
			t.Fatalf("listing_lifetimes before the stream: %d rows, %v; want an empty table", stored, err)
		}

		const listings = 600
		var all []events.Event
		for i := range listings {
			all = append(all, randomHistory(rng, i)...)
		}
		all = storetest.Redelivered(rng, all, len(all)/20)
		slices.SortStableFunc(all, func(a, b events.Event) int { return a.OccurredAt.Compare(b.OccurredAt) })
		for range len(all) / 30 { // a few late events: those listings are recomputed, not folded
			i := rng.IntN(len(all) - 1)
			all[i], all[i+1] = all[i+1], all[i]
		}

		s := store.New(pool)
		statements := 0
		for start := 0; start < len(all); statements++ {
			end := min(start+20+rng.IntN(60), len(all))
			var batch []store.Message
			for i, e := range all[start:end] {
				batch = append(batch, message(t, e, start+i))
			}
			if _, err := s.Ingest(t.Context(), batch); err != nil {
				t.Fatalf("statement %d: Ingest: %v", statements, err)
			}
			start = end
		}
		if statements < 40 {
			t.Fatalf("only %d statements: the stream must outlast the plans made on the empty table", statements)
		}
		assertProjectionEqualsView(t, s, pool, listings)
	})
}
