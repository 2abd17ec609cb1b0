package crawler

import (
	"bytes"
	"fmt"
	"os"
	"sync"

	"github.com/golfcrawler/golf-crawler/events"
)

// EventLog appends booking events to a file as JSON lines (one events.Encode per line), the
// durable record of what the crawler emitted whether or not Kafka took it; `crawler replay` can
// publish it again (event ids are deterministic, so the consumer deduplicates). The runner feeds
// it from the spool (events/spool): a batch is appended, and synced, only once the snapshot that
// records it is saved, so the file never holds a line the saved state does not (a crash may
// repeat a batch, with the same content). The file is opened with O_APPEND, so several crawlers
// appending to one file never interleave within a line.
type EventLog struct {
	path string
	mu   sync.Mutex
	f    *os.File
	buf  bytes.Buffer
}

// OpenEventLog opens (creating it with mode 0644 if needed) path for appending.
func OpenEventLog(path string) (*EventLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open events file: %w", err)
	}
	return &EventLog{path: path, f: f}, nil
}

// Path is the file's name.
func (l *EventLog) Path() string { return l.path }

// Append writes evs, one line each, in one write call.
func (l *EventLog) Append(evs []events.Event) error {
	if len(evs) == 0 {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Reset()
	for _, e := range evs {
		b, err := events.Encode(e)
		if err != nil {
			return fmt.Errorf("append event %s to %s: %w", e.EventID, l.path, err)
		}
		l.buf.Write(b)
		l.buf.WriteByte('\n')
	}
	if _, err := l.f.Write(l.buf.Bytes()); err != nil {
		return fmt.Errorf("append %d events to %s: %w", len(evs), l.path, err)
	}
	return nil
}

// Sync flushes the file to stable storage.
func (l *EventLog) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", l.path, err)
	}
	return nil
}

// Close syncs and closes the file.
func (l *EventLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	serr := l.f.Sync()
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", l.path, err)
	}
	if serr != nil {
		return fmt.Errorf("sync %s: %w", l.path, serr)
	}
	return nil
}
