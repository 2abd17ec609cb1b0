package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/segmentio/kafka-go"
)

// Defaults of PublisherConfig, from the measurements in shared/notes/kafka-go.md §2 and §7(i).
const (
	// DefaultTopic is the topic booking events go to when KAFKA_TOPIC is unset.
	DefaultTopic = "booking-events"
	// DefaultQueueSize bounds the publisher's in-memory queue: the largest crawl burst measured
	// was ~7000 events; 10 000 × ~350 B is about 4 MB.
	DefaultQueueSize = 10_000
	// DefaultRetryWindow is how long an accepted event is retried before it counts as failed:
	// long enough to ride out a broker restart or a leader election, short enough that a dead
	// cluster does not hold the queue forever.
	DefaultRetryWindow = 5 * time.Minute
	// DefaultBatchSize is the most events one write sends (kafka-go's BatchSize per partition too).
	DefaultBatchSize = 1000
	// DefaultClientID names the producer in broker logs and quotas.
	DefaultClientID = "golf-crawler"

	// dialTimeout and ioTimeout bound one connection attempt and one request; with MaxAttempts 1
	// nothing lingers inside kafka-go longer than that.
	dialTimeout = 2 * time.Second
	ioTimeout   = 2 * time.Second
	// writeCallTimeout bounds one WriteMessages call: metadata (dial + request) then produce.
	writeCallTimeout = 5 * time.Second
	// backoffMin and backoffMax bound the jittered exponential backoff between retries.
	backoffMin = 100 * time.Millisecond
	backoffMax = 5 * time.Second
	// syncAttempts is how often SyncWriter tries a transiently failing event.
	syncAttempts = 4

	// HeaderEventID is the Kafka header carrying the event id, so that a consumer can log or
	// dead-letter a message it cannot decode.
	HeaderEventID = "event_id"
)

// ErrNoBrokers is returned by SyncWriter when no broker is configured.
var ErrNoBrokers = errors.New("no kafka brokers configured (KAFKA_BOOTSTRAP is empty)")

// PublisherConfig configures NewPublisher and NewSyncWriter. Zero fields take the Default* values.
type PublisherConfig struct {
	Brokers     []string      // host:port; empty means publishing is off (see NewPublisher)
	Topic       string        // DefaultTopic when empty
	QueueSize   int           // DefaultQueueSize when ≤ 0
	RetryWindow time.Duration // DefaultRetryWindow when ≤ 0; counted from Publish
	BatchSize   int           // DefaultBatchSize when ≤ 0
	ClientID    string        // DefaultClientID when empty
	Logger      *slog.Logger  // discards when nil
	Now         func() time.Time
	Metrics     PublisherMetrics // optional
}

// PublisherMetrics receives the publisher's counters as they change, so that the crawler can
// export them (e.g. as Prometheus counters) without this package depending on a metrics library.
// Calls come from Publish's caller and from the publisher's goroutine: implementations must be
// safe for concurrent use and must not block.
type PublisherMetrics interface {
	Sent(n int)       // acknowledged by all in-sync replicas
	Failed(n int)     // given up: retry window exhausted, or rejected by the broker
	Dropped(n int)    // never tried: queue full, or publisher closed
	QueueDepth(n int) // events accepted and not yet resolved
}

// PublisherStats are a publisher's counters since it was created. Queued is a gauge: events
// accepted by Publish and not yet published, failed or dropped.
type PublisherStats struct {
	Published, Failed, Dropped, Queued int64
}

// ParseBrokers splits a KAFKA_BOOTSTRAP value on commas and drops blank entries:
// "a:1, b:2,," gives [a:1 b:2]; "", " " and ",," give nil (publishing off). kafka-go would
// otherwise dial localhost:9092 for an empty address.
func ParseBrokers(s string) []string {
	var out []string
	for _, b := range strings.Split(s, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

// PublisherConfigFromEnv reads KAFKA_BOOTSTRAP, KAFKA_TOPIC, KAFKA_CLIENT_ID,
// KAFKA_PUBLISH_QUEUE_SIZE (an integer) and KAFKA_PUBLISH_RETRY_WINDOW (a Go duration such as
// "5m") through getenv. Unset values keep their defaults; Logger, Now and Metrics are left for
// the caller.
func PublisherConfigFromEnv(getenv func(string) string) (PublisherConfig, error) {
	cfg := PublisherConfig{
		Brokers:  ParseBrokers(getenv("KAFKA_BOOTSTRAP")),
		Topic:    strings.TrimSpace(getenv("KAFKA_TOPIC")),
		ClientID: strings.TrimSpace(getenv("KAFKA_CLIENT_ID")),
	}
	if v := strings.TrimSpace(getenv("KAFKA_PUBLISH_QUEUE_SIZE")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return cfg, fmt.Errorf("KAFKA_PUBLISH_QUEUE_SIZE %q is not a positive integer", v)
		}
		cfg.QueueSize = n
	}
	if v := strings.TrimSpace(getenv("KAFKA_PUBLISH_RETRY_WINDOW")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return cfg, fmt.Errorf("KAFKA_PUBLISH_RETRY_WINDOW %q is not a positive duration such as 5m", v)
		}
		cfg.RetryWindow = d
	}
	return cfg, nil
}

func (c PublisherConfig) withDefaults() PublisherConfig {
	c.Brokers = ParseBrokers(strings.Join(c.Brokers, ","))
	if c.Topic == "" {
		c.Topic = DefaultTopic
	}
	if c.QueueSize <= 0 {
		c.QueueSize = DefaultQueueSize
	}
	if c.RetryWindow <= 0 {
		c.RetryWindow = DefaultRetryWindow
	}
	if c.BatchSize <= 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.ClientID == "" {
		c.ClientID = DefaultClientID
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// newWriter builds the kafka-go Writer both publishers use (notes §7(i)): acks from all in-sync
// replicas (the default acks=0 reports lost writes as success), per-key order through the Hash
// balancer, 1 ms BatchTimeout because our goroutine pre-assembles batches, one attempt per call
// because we retry ourselves (a cancelled call otherwise keeps retrying inside kafka-go), and a
// Transport of its own with 2 s dial timeout instead of the global one's 5 s.
func newWriter(c PublisherConfig) *kafka.Writer {
	log := c.Logger.With("topic", c.Topic)
	return &kafka.Writer{
		Addr:         kafka.TCP(c.Brokers...),
		Topic:        c.Topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchSize:    c.BatchSize,
		BatchTimeout: time.Millisecond,
		WriteTimeout: ioTimeout,
		ReadTimeout:  ioTimeout,
		MaxAttempts:  1,
		Transport:    &kafka.Transport{DialTimeout: dialTimeout, ClientID: c.ClientID},
		ErrorLogger: kafka.LoggerFunc(func(msg string, args ...any) {
			log.Warn("kafka writer", "detail", fmt.Sprintf(msg, args...))
		}),
	}
}

// message is the Kafka form of an event: key listing_key (so one listing's events stay ordered on
// one partition), value Encode(e), header event_id. Message.Time is left zero, so the broker
// records the produce time; the observation time is occurred_at in the value, and the gap between
// the two shows publishing lag after retries.
func message(e Event) (kafka.Message, error) {
	b, err := Encode(e)
	if err != nil {
		return kafka.Message{}, err
	}
	if len(b) > MaxEventBytes {
		return kafka.Message{}, fmt.Errorf("encode event %s: %w (%d bytes > %d)", e.EventID, ErrTooLarge, len(b), MaxEventBytes)
	}
	return kafka.Message{
		Key:     []byte(e.ListingKey),
		Value:   b,
		Headers: []kafka.Header{{Key: HeaderEventID, Value: []byte(e.EventID.String())}},
	}, nil
}

// permanent reports whether a write error will not go away by retrying the same message.
// Everything else (network errors, timeouts, leader changes, unknown topic) is retried.
func permanent(err error) bool {
	var ke kafka.Error
	if !errors.As(err, &ke) {
		return false
	}
	switch ke {
	case kafka.MessageSizeTooLarge, kafka.InvalidTopic, kafka.RecordListTooLarge,
		kafka.TopicAuthorizationFailed, kafka.InvalidRecord, kafka.UnsupportedForMessageFormat:
		return true
	}
	return false
}

// backoff is capped exponential backoff with equal jitter: the n-th wait is uniformly in
// [d/2, d) with d = backoffMin·2ⁿ capped at backoffMax.
type backoff struct{ n int }

func (b *backoff) next() time.Duration {
	d := backoffMax
	if b.n < 16 {
		d = min(backoffMin<<b.n, backoffMax)
	}
	b.n++
	return d/2 + rand.N(d/2)
}

func (b *backoff) reset() { b.n = 0 }

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

// WriteEvents writes evs and waits for the acknowledgements. Transient failures are retried up to
// 4 times in all (100 ms → 5 s jittered backoff), resending only the failed events. It returns nil
// when every event was acknowledged, else a *WriteEventsError naming the others. Retries may
// duplicate events; consumers deduplicate by event_id.
func (s *SyncWriter) WriteEvents(ctx context.Context, evs []Event) error {
	if s.w == nil {
		return fmt.Errorf("write %d events: %w", len(evs), ErrNoBrokers)
	}
	werr := &WriteEventsError{Total: len(evs)}
	var todo []Event
	var msgs []kafka.Message
	for _, e := range evs {
		m, err := message(e)
		if err != nil {
			werr.Failed = append(werr.Failed, EventError{e.EventID, e.ListingKey, err})
			continue
		}
		todo, msgs = append(todo, e), append(msgs, m)
	}
	var bo backoff
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
			case permanent(ei) || ctx.Err() != nil || attempt == syncAttempts:
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
				werr.Failed = append(werr.Failed, EventError{e.EventID, e.ListingKey, ctx.Err()})
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
