package pgclaims_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestOnePollerPerBot: a bot's poller is held by one process: a second one is refused naming the
// holder (host, pid, channel) and itself, never the token; another bot is free; the lock is free
// again once released, and once its holder's connection died (a crash) with its row left behind.
func TestOnePollerPerBot(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := storetest.NewDB(t)
	const token = "777:poller-secret-token"
	first, err := pgclaims.LockPoller(ctx, pool, token, "tg", "host-a", 11)
	if err != nil {
		t.Fatal(err)
	}
	_, err = pgclaims.LockPoller(ctx, pool, token, "alerts", "host-b", 22)
	if !errors.Is(err, pgclaims.ErrPollerTaken) || !strings.Contains(err.Error(), "host-a pid 11 (its channel tg") ||
		!strings.Contains(err.Error(), "host-b pid 22") || strings.Contains(err.Error(), token) {
		t.Fatalf("second poller: %v", err)
	}
	other, err := pgclaims.LockPoller(ctx, pool, "888:another-bot", "tg2", "host-b", 22)
	if err != nil {
		t.Fatalf("another bot: %v", err)
	}
	other.Release()
	first.Release()
	second, err := pgclaims.LockPoller(ctx, pool, token, "alerts", "host-b", 22)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	// The holder crashes: its session ends (this test's database only: the stack is shared), the
	// row naming it stays.
	if _, err := pool.Exec(ctx, "select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and pid <> pg_backend_pid() "+
		"and database = (select oid from pg_database where datname = current_database())"); err != nil {
		t.Fatal(err)
	}
	third, err := pgclaims.LockPoller(ctx, pool, token, "tg", "host-c", 33)
	if err != nil {
		t.Fatalf("after the holder's connection died: %v", err)
	}
	defer third.Release()
	second.Release() // its connection is gone already: nothing to free, no panic
	var n int
	if err := pool.QueryRow(ctx, "select count(*) from chat_pollers where bot like '%poller-secret%'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the token is in chat_pollers: %d, %v", n, err)
	}
}
