package pgclaims_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/tern/v2/migrate"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/claimstoretest"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/migrations"
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

// TestChatWatchesRewriteSpecsOfBefore (review 4 F7): chat watches fdee6ed stored (/watch's
// arguments as typed, a database at migration 12) are rewritten in their canonical form with the
// meaning fdee6ed gave them ("88 CC": a cap of 88원 and the course cc), once migration 013 is in.
func TestChatWatchesRewriteSpecsOfBefore(t *testing.T) {
	t.Parallel()
	claimstoretest.CheckLegacyChatSpecs(t, func(t *testing.T, specs []string) notify.ChatStore {
		pool, dbURL := storetest.NewDBURL(t)
		if _, err := pool.Exec(t.Context(), "drop schema public cascade; create schema public"); err != nil {
			t.Fatal(err)
		}
		conn, err := pgx.Connect(t.Context(), dbURL)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(context.WithoutCancel(t.Context()))
		m, err := migrate.NewMigrator(t.Context(), conn, migrations.VersionTable)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.LoadMigrations(migrations.FS); err != nil {
			t.Fatal(err)
		}
		if err := m.MigrateTo(t.Context(), 12); err != nil { // fdee6ed's schema
			t.Fatal(err)
		}
		for i, spec := range specs { // as fdee6ed's chat_add.sql and chat_name.sql left them
			if _, err := conn.Exec(t.Context(), "insert into chat_watches (name, channel, spec) values ($1, 'tg', $2)", fmt.Sprintf("chat-%d", i+1), spec); err != nil {
				t.Fatal(err)
			}
		}
		if err := migrations.Apply(t.Context(), conn); err != nil {
			t.Fatal(err)
		}
		return &pgclaims.Store{Pool: pool}
	})
}
