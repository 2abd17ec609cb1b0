package crawler

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrStateLocked is the meaning of a Lock (or Run) error when another crawler holds the state
// dir's lock: two crawlers diffing against one set of snapshots would re-derive each other's
// transitions, so the second one refuses to crawl.
var ErrStateLocked = errors.New("state dir is locked by another crawler")

// lockFile is the name of the lock file in a state dir. It holds the pid of the last holder, for
// the error message; the lock itself is an flock(2) on it, released by the kernel when the holder
// exits, however it exits.
const lockFile = "crawler.lock"

// StateLock is a held lock on a state dir (see StateDir.Lock).
type StateLock struct{ f *os.File }

// Lock takes the exclusive lock of the state dir (an flock on Dir/crawler.lock, created with Dir
// if needed) without waiting: when another process, or another Lock in this one, holds it, the
// error wraps ErrStateLocked and names the dir and the holder's pid. A dir that cannot be written
// (a read-only volume) is still locked through an existing lock file; the crawl then fails at its
// snapshot save, before publishing.
func (s StateDir) Lock() (*StateLock, error) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("lock state dir %s: %w", s.Dir, err)
	}
	path := filepath.Join(s.Dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		var rerr error
		if f, rerr = os.Open(path); rerr != nil {
			return nil, fmt.Errorf("lock state dir %s: %w", s.Dir, err)
		}
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := "unknown pid"
		if b, rerr := os.ReadFile(path); rerr == nil && strings.TrimSpace(string(b)) != "" {
			holder = "pid " + strings.TrimSpace(string(b))
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s is in use by another crawler (%s); run one crawler per state dir", ErrStateLocked, s.Dir, holder)
		}
		return nil, fmt.Errorf("lock state dir %s: %w", s.Dir, err)
	}
	// Best effort: the pid is only for the message of the next one who tries.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &StateLock{f: f}, nil
}

// Unlock releases the lock. It is safe to call on a nil lock and more than once.
func (l *StateLock) Unlock() {
	if l == nil || l.f == nil {
		return
	}
	l.f.Close() // closing the descriptor releases the flock
	l.f = nil
}
