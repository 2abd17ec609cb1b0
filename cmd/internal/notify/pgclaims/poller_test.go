package pgclaims_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
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
	t.Cleanup(first.Release) // before the pool's close, which waits for its connections
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
	t.Cleanup(second.Release)
	// The holder crashes: its session ends (this test's database only: the stack is shared), the
	// row naming it stays.
	if _, err := pool.Exec(ctx, "select pg_terminate_backend(pid) from pg_locks where locktype = 'advisory' and pid <> pg_backend_pid() "+
		"and database = (select oid from pg_database where datname = current_database())"); err != nil {
		t.Fatal(err)
	}
	// The backend ends a moment after pg_terminate_backend returns.
	var third *pgclaims.PollerLock
	testkit.WaitFor(t, 10*time.Second, "the dead holder's lock to be free", func() bool {
		third, err = pgclaims.LockPoller(ctx, pool, token, "tg", "host-c", 33)
		return err == nil
	})
	t.Cleanup(third.Release)
	second.Release() // its connection is gone already: nothing to free, no panic
	var n int
	if err := pool.QueryRow(ctx, "select count(*) from chat_pollers where bot like '%poller-secret%'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the token is in chat_pollers: %d, %v", n, err)
	}
}

// TestChatOffsetIsTheBots: a command channel's getUpdates offset is kept per bot (update ids are
// a bot's): the channel given another token starts from none, the old bot's is still there.
func TestChatOffsetIsTheBots(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pool := storetest.NewDB(t)
	keyA, _ := pgclaims.BotKey("1:bot-a-secret")
	keyB, _ := pgclaims.BotKey("2:bot-b-secret")
	a := &pgclaims.Store{Pool: pool, Bots: map[string]string{"tg": keyA}}
	if err := a.SetChatOffset(ctx, "tg", 500); err != nil {
		t.Fatal(err)
	}
	b := &pgclaims.Store{Pool: pool, Bots: map[string]string{"tg": keyB}}
	if off, err := b.ChatOffset(ctx, "tg"); err != nil || off != 0 {
		t.Fatalf("tg on another bot: offset %d, %v; want 0", off, err)
	}
	if off, err := a.ChatOffset(ctx, "tg"); err != nil || off != 500 {
		t.Fatalf("tg on its bot: offset %d, %v; want 500", off, err)
	}
	var n int
	if err := pool.QueryRow(ctx, "select count(*) from chat_offsets where bot like '%secret%'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("a token in chat_offsets: %d, %v", n, err)
	}
}
