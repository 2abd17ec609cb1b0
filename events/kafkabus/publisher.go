package kafkabus

import (
	"context"

	"github.com/segmentio/kafka-go"
)

// The reason logged (key "reason") with every event the SpoolPublisher gives up. Nothing is
// given up by time or by a full queue: an event the broker has not acknowledged stays in the
// spool (events/spool) until it does.
const (
	ReasonRejected    = "rejected"    // the broker refused it for good (e.g. too large, not authorised)
	ReasonUnencodable = "unencodable" // Encode failed or the event exceeds MaxEventBytes
)

// writer is the part of *kafka.Writer the publisher uses.
type writer interface {
	WriteMessages(ctx context.Context, msgs ...kafka.Message) error
	Close() error
}
