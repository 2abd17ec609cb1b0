package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events"
)

// SyncWriter writes events synchronously and reports which ones the broker did not acknowledge.
// It is for replay, which must know about every loss; the crawler uses a Publisher.
type SyncWriter struct {
	w   *kafka.Writer // nil when no broker is configured
	log *slog.Logger
}

// EventError is one event a SyncWriter could not write.
type EventError struct {
	EventID    uuid.UUID
	ListingKey string
	Err        error
}

// WriteEventsError lists the events of one WriteEvents call that were not acknowledged.
type WriteEventsError struct {
	Failed []EventError
	Total  int
}

func (e *WriteEventsError) Error() string {
	if len(e.Failed) == 0 {
		return "write events: no failures"
	}
	f := e.Failed[0]
	return fmt.Sprintf("write events: %d of %d failed (first: event %s: %v)", len(e.Failed), e.Total, f.EventID, f.Err)
}

// Unwrap gives every failure's cause, so errors.Is(err, context.Canceled) and the like work.
func (e *WriteEventsError) Unwrap() []error {
	errs := make([]error, len(e.Failed))
	for i, f := range e.Failed {
		errs[i] = f.Err
	}
	return errs
}

// NewSyncWriter returns a writer with the same Kafka settings as the publisher. With no brokers
// it still returns a writer, whose WriteEvents fails with ErrNoBrokers.
func NewSyncWriter(cfg PublisherConfig) *SyncWriter {
	cfg = cfg.withDefaults()
	s := &SyncWriter{log: cfg.Logger.With("topic", cfg.Topic)}
	if len(cfg.Brokers) > 0 {
		s.w = newWriter(cfg)
	}
	return s
}

// WriteEvents writes evs and waits for the acknowledgements. Transient failures (a leader change,
// NOT_ENOUGH_REPLICAS while a node is down, a refused connection) are retried with 100 ms → 5 s
// jittered backoff, resending only the failed events: until ctx's deadline when it has one (the
// caller's window: a SIGKILLed leader is replaced only after the broker session timeout, 15 s on
// the dev cluster), else 4 times in all. It returns nil
// when every event was acknowledged, else a *WriteEventsError naming the others. Retries may
// duplicate events; consumers deduplicate by event_id.
func (s *SyncWriter) WriteEvents(ctx context.Context, evs []events.Event) error {
	if s.w == nil {
		return fmt.Errorf("write %d events: %w", len(evs), ErrNoBrokers)
	}
	werr := &WriteEventsError{Total: len(evs)}
	var todo []events.Event
	var msgs []kafka.Message
	for _, e := range evs {
		m, err := Message(e)
		if err != nil {
			werr.Failed = append(werr.Failed, EventError{e.EventID, e.ListingKey, err})
			continue
		}
		todo, msgs = append(todo, e), append(msgs, m)
	}
	var bo backoff
	_, windowed := ctx.Deadline()
	for attempt := 1; len(todo) > 0; attempt++ {
		err := s.w.WriteMessages(ctx, msgs...)
		if err == nil {
			break
		}
		var wes kafka.WriteErrors
		perEvent := errors.As(err, &wes) && len(wes) == len(todo)
		keepE, keepM := todo[:0], msgs[:0]
		for i := range todo {
			ei := err
			if perEvent {
				ei = wes[i]
			}
			switch {
			case ei == nil:
			case permanent(ei) || ctx.Err() != nil || (!windowed && attempt == syncAttempts):
				werr.Failed = append(werr.Failed, EventError{todo[i].EventID, todo[i].ListingKey, ei})
			default:
				keepE, keepM = append(keepE, todo[i]), append(keepM, msgs[i])
			}
		}
		todo, msgs = keepE, keepM
		if len(todo) == 0 {
			break
		}
		s.log.WarnContext(ctx, "kafka write failed, retrying", "events", len(todo), "attempt", attempt, "err", err)
		t := time.NewTimer(bo.next())
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			for _, e := range todo {
				werr.Failed = append(werr.Failed, EventError{e.EventID, e.ListingKey, fmt.Errorf("%w (last error: %v)", ctx.Err(), err)})
			}
			todo = nil
		}
	}
	if len(werr.Failed) > 0 {
		return werr
	}
	return nil
}

// Close flushes and closes the underlying writer.
func (s *SyncWriter) Close() error {
	if s.w == nil {
		return nil
	}
	if err := s.w.Close(); err != nil {
		return fmt.Errorf("close kafka writer: %w", err)
	}
	return nil
}
