package pgclaims

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

var (
	//go:embed queries/poller_lock.sql
	pollerLockSQL string
	//go:embed queries/poller_holder.sql
	pollerHolderSQL string
	//go:embed queries/poller_claim.sql
	pollerClaimSQL string
)

// ErrPollerTaken is LockPoller's error when another process holds the bot's poller.
var ErrPollerTaken = errors.New("another process polls this bot's getUpdates (Telegram allows one poller per bot)")

// PollerLock is this process's hold on one bot's getUpdates poller: a session advisory lock on a
// connection of its own, keyed by a hash of the token, and the chat_pollers row naming the
// holder. The lock dies with its connection (a crashed or killed holder frees it at once; a host
// that vanished frees it when PostgreSQL notices the connection is gone); the row only names the
// holder to the next process refused, and is overwritten by the next holder.
type PollerLock struct {
	conn *pgxpool.Conn
	key  int64
}

// BotKey is the hash of a bot token chat_pollers and the advisory lock are keyed by: never the
// token itself.
func BotKey(token string) (hexKey string, lockKey int64) {
	sum := sha256.Sum256([]byte("golf-crawler telegram getUpdates poller\x00" + token))
	return hex.EncodeToString(sum[:16]), int64(binary.BigEndian.Uint64(sum[:8])) //nolint:gosec // a lock key: any 64 bits
}

// LockPoller takes the getUpdates poller of token's bot for channel, named host and pid in
// chat_pollers. Another holder is ErrPollerTaken naming it (host, pid, channel, since) and this
// process. Release gives the lock back.
func LockPoller(ctx context.Context, pool *pgxpool.Pool, token, channel, host string, pid int) (*PollerLock, error) {
	bot, key := BotKey(token)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("channel %s: lock the bot's poller: %w", channel, err)
	}
	var ok bool
	if err := conn.QueryRow(ctx, pollerLockSQL, key).Scan(&ok); err != nil {
		conn.Release()
		return nil, fmt.Errorf("channel %s: lock the bot's poller: %w", channel, err)
	}
	if !ok {
		conn.Release()
		var hChannel, hHost string
		var hPid int
		var since time.Time
		holder := "a process that has not named itself yet"
		switch err := pool.QueryRow(ctx, pollerHolderSQL, bot).Scan(&hChannel, &hHost, &hPid, &since); {
		case err == nil:
			holder = fmt.Sprintf("%s pid %d (its channel %s, since %s)", hHost, hPid, hChannel, since.UTC().Format(time.RFC3339))
		case !errors.Is(err, pgx.ErrNoRows):
			return nil, fmt.Errorf("channel %s: read the bot's poller: %w", channel, err)
		}
		return nil, fmt.Errorf("channel %s: commands: true refused for this process (%s pid %d): %w: it is held by %s; "+
			"stop that one or turn commands off on one of them", channel, host, pid, ErrPollerTaken, holder)
	}
	if _, err := conn.Exec(ctx, pollerClaimSQL, bot, channel, host, pid); err != nil {
		l := &PollerLock{conn: conn, key: key}
		l.Release()
		return nil, fmt.Errorf("channel %s: name the bot's poller: %w", channel, err)
	}
	return &PollerLock{conn: conn, key: key}, nil
}

// LockPoller takes the getUpdates poller of ch's bot for this process (the package's LockPoller,
// named by the host and pid) and keeps the channel's offset under its bot (Bots); release gives
// it back. The alert service calls it for every command channel before it polls.
func (s *Store) LockPoller(ctx context.Context, ch *notify.Channel) (release func(), err error) {
	host, _ := os.Hostname()
	l, err := LockPoller(ctx, s.Pool, ch.Token, ch.Name, host, os.Getpid())
	if err != nil {
		return nil, err
	}
	if s.Bots == nil {
		s.Bots = map[string]string{}
	}
	s.Bots[ch.Name], _ = BotKey(ch.Token)
	return l.Release, nil
}

// Release gives the lock back (closing its connection, which ends the session's locks).
func (l *PollerLock) Release() {
	if l == nil || l.conn == nil {
		return
	}
	// Closing the connection ends every lock of its session, whatever state it is in; a
	// pooled connection given back would keep the lock.
	c := l.conn.Hijack()
	l.conn = nil
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = c.Close(ctx)
}
