package kafkatest

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/spool"
)

// Spooled is the crawler's publishing path in a test: a spool (the state dir's outbox) sent by the
// kafkabus.SpoolPublisher the product runs. NewSpooled makes one for a test that hands events over
// itself (Publish, PublishAll); SpoolRunner gives a crawler.Runner its own, as `crawler run` does.
// Both are closed at the test's end if the test has not.
type Spooled struct {
	*kafkabus.SpoolPublisher
	Spool *spool.Spool

	tb     testing.TB
	unlock func()     // the runner's state dir lock; nil for NewSpooled
	mu     sync.Mutex // one batch at a time: Publish may be called from several goroutines
	once   sync.Once
	err    error
}

// Runner is the part of a crawler.Runner SpoolRunner uses: its state dir's lock and spool.
type Runner interface {
	Lock() error
	Unlock()
	OpenSpool(opts spool.Options) (*spool.Spool, error)
}

// SpoolRunner takes r's state dir lock, opens its spool (kept until Kafka acknowledges, as with
// KAFKA_BOOTSTRAP set: each site crawl is a batch there, committed once its snapshot is saved) and
// starts sending it to cfg's brokers. Close sends what is left, then releases the lock.
func SpoolRunner(tb testing.TB, r Runner, cfg kafkabus.PublisherConfig) *Spooled {
	tb.Helper()
	if err := r.Lock(); err != nil {
		tb.Fatal(err)
	}
	sp, err := r.OpenSpool(spool.Options{Retain: true, Logger: cfg.Logger})
	if err != nil {
		r.Unlock()
		tb.Fatal(err)
	}
	return start(tb, cfg, sp, r.Unlock)
}

// NewSpooled opens a spool under a temporary directory (kept until cfg's brokers acknowledge,
// as the crawler's with KAFKA_BOOTSTRAP set) and starts sending it to cfg's brokers.
func NewSpooled(tb testing.TB, cfg kafkabus.PublisherConfig) *Spooled {
	tb.Helper()
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sp, err := spool.Open(tb.TempDir(), spool.Options{Retain: true, Logger: log})
	if err != nil {
		tb.Fatal(err)
	}
	return start(tb, cfg, sp, nil)
}

func start(tb testing.TB, cfg kafkabus.PublisherConfig, sp *spool.Spool, unlock func()) *Spooled {
	s := &Spooled{SpoolPublisher: kafkabus.NewSpoolPublisher(cfg, sp), Spool: sp, tb: tb, unlock: unlock}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s
}

// Publish spools e as a batch of its own (NewSpooled only: a runner's spool gets its crawls).
func (s *Spooled) Publish(e events.Event) { s.PublishAll([]events.Event{e}) }

// PublishAll spools evs as one committed batch. A failed append fails the test (Errorf: it may be
// called from any goroutine).
func (s *Spooled) PublishAll(evs []events.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, err := s.Spool.Prepare("test", evs)
	if err == nil {
		err = s.Spool.Commit(b)
	}
	if err != nil {
		s.tb.Errorf("spool %d events: %v", len(evs), err)
	}
}

// Close sends what is unsent until ctx ends (what is left stays in the spool, as
// kafkabus.SpoolPublisher.Close says: Stats().Queued), then releases the runner's lock and closes
// the spool. Only the first call does anything.
func (s *Spooled) Close(ctx context.Context) error {
	s.once.Do(func() {
		s.err = s.SpoolPublisher.Close(ctx)
		if s.unlock != nil {
			s.unlock()
		}
		if err := s.Spool.Close(); err != nil && s.err == nil {
			s.err = err
		}
	})
	return s.err
}

// CloseWithin closes s, giving the publisher d to send what is unsent, and returns its counters
// (Queued: what stays in the spool).
func (s *Spooled) CloseWithin(d time.Duration) kafkabus.PublisherStats {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = s.Close(ctx)
	return s.Stats()
}
