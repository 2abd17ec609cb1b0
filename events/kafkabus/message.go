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

// Message is the Kafka form of an event, the one every publishing path sends (the Publisher, the
// SyncWriter behind replay, and any other sender): key listing_key (so one listing's events stay
// ordered on one partition), value Encode(e), and the headers Headers(e). Message.Time is left
// zero, so the broker records the produce time; the observation time is occurred_at in the value,
// and the gap between the two shows publishing lag after retries. It fails only for an event that
// cannot be encoded or encodes over events.MaxEventBytes.
func Message(e events.Event) (kafka.Message, error) {
	b, err := events.Encode(e)
	if err != nil {
		return kafka.Message{}, err
	}
	if len(b) > events.MaxEventBytes {
		return kafka.Message{}, fmt.Errorf("encode event %s: %w (%d bytes > %d)", e.EventID, events.ErrTooLarge, len(b), events.MaxEventBytes)
	}
	return kafka.Message{Key: []byte(e.ListingKey), Value: b, Headers: Headers(e)}, nil
}

// Headers are e's Kafka headers: HeaderEventID, then CloudEvents' Kafka binding in binary mode
// (events.CloudEventHeaders: ce_specversion, ce_id, ce_source, ce_type, ce_time, ce_subject,
// content-type), so that CloudEvents tools read the value as it is.
func Headers(e events.Event) []kafka.Header {
	ce := events.CloudEventHeaders(e)
	hs := make([]kafka.Header, 0, 1+len(ce))
	hs = append(hs, kafka.Header{Key: HeaderEventID, Value: []byte(e.EventID.String())})
	for _, h := range ce {
		hs = append(hs, kafka.Header(h))
	}
	return hs
}

// EventsHeaders converts Kafka headers to package events' form (for events.CheckCloudEvents and
// dead letters). The values are shared, not copied.
func EventsHeaders(hs []kafka.Header) []events.Header {
	if len(hs) == 0 {
		return nil
	}
	out := make([]events.Header, len(hs))
	for i, h := range hs {
		out[i] = events.Header(h)
	}
	return out
}

// backoff is capped exponential backoff with equal jitter: the n-th wait is uniformly in
// [d/2, d) with d = backoffMin·2ⁿ capped at backoffMax.
type backoff struct{ n int }

func (b *backoff) next() time.Duration {
	b.n++
	return retry.Backoff{Base: backoffMin, Max: backoffMax}.Delay(b.n)
}
