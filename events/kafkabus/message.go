package kafkabus

import (
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/retry"
)

// newWriter builds the kafka-go Writer both publishers use : acks from all in-sync
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
func message(e events.Event) (kafka.Message, error) {
	b, err := events.Encode(e)
	if err != nil {
		return kafka.Message{}, err
	}
	if len(b) > events.MaxEventBytes {
		return kafka.Message{}, fmt.Errorf("encode event %s: %w (%d bytes > %d)", e.EventID, events.ErrTooLarge, len(b), events.MaxEventBytes)
	}
	return kafka.Message{
		Key:     []byte(e.ListingKey),
		Value:   b,
		Headers: []kafka.Header{{Key: HeaderEventID, Value: []byte(e.EventID.String())}},
	}, nil
}

// backoff is capped exponential backoff with equal jitter: the n-th wait is uniformly in
// [d/2, d) with d = backoffMin·2ⁿ capped at backoffMax.
type backoff struct{ n int }

func (b *backoff) next() time.Duration {
	b.n++
	return retry.Backoff{Base: backoffMin, Max: backoffMax}.Delay(b.n)
}

func (b *backoff) reset() { b.n = 0 }
