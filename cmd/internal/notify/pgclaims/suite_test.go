package pgclaims_test

import (
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/claimstoretest"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestClaimStoreSuite runs the shared ClaimStore suite on PostgreSQL. Settle is 1 ns so that a
// claim is ready at once; a restart is a new owner after the old one's lease (1 ms) ran out.
func TestClaimStoreSuite(t *testing.T) {
	t.Parallel()
	claimstoretest.Run(t, claimstoretest.Factory{
		New: func(t *testing.T) notify.ClaimStore {
			return &pgclaims.Store{Pool: storetest.NewDB(t), Owner: "first", Settle: time.Nanosecond}
		},
		Reopen: func(t *testing.T, old notify.ClaimStore) notify.ClaimStore {
			pool := old.(*pgclaims.Store).Pool
			expireLeases(t, pool)
			return &pgclaims.Store{Pool: pool, Owner: "second", Settle: time.Nanosecond}
		},
	})
}

// expireLeases ends every lease, as a dead process's leases end.
func expireLeases(t *testing.T, pool *pgxpool.Pool) {
	if _, err := pool.Exec(t.Context(), "update notifications set lease_until = now() - interval '1 second' where status = 'sending'"); err != nil {
		t.Fatal(err)
	}
}
