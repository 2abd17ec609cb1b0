package kafkabus

import (
	"errors"

	"github.com/segmentio/kafka-go"
)

// Every Kafka-side error predicate is in this file. They decide about Kafka calls (a write, a
// start-up probe, an offset reset), never about a message's fate: that is store.Decide's.
//
//	predicate   used by                          retried
//	permanent   Publisher, SyncWriter writes     all but 6 codes that cannot succeed on retry
//	Reachable   booking-consumer start-up        all but answers kafka-go calls not Temporary
//	Retriable   ResetOffsets (run --from)        only Temporary answers and an unknown topic,
//	                                             never once the offsets were sent

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

// Reachable reports whether reaching the cluster may still work after err: everything but an answer
// from the cluster that says it will never work (kafka.Error.Temporary false), or a topic it would
// create less durable than the cluster promises (ErrUnsafeReplication). booking-consumer waits on it
// at start-up.
func Reachable(err error) bool {
	if errors.Is(err, ErrUnsafeReplication) {
		return false
	}
	var kerr kafka.Error
	return !errors.As(err, &kerr) || kerr.Temporary()
}

// errCommitStage marks a failure after the offsets were sent: never retried.
var errCommitStage = errors.New("offsets sent")

// Retriable reports whether a failed reset may be tried again: it failed before the offsets were
// sent, on an answer Kafka calls temporary or on a topic the metadata does not show yet.
func Retriable(err error) bool {
	if errors.Is(err, errCommitStage) {
		return false
	}
	var kerr kafka.Error
	return errors.Is(err, ErrTopicNotReady) || (errors.As(err, &kerr) && kerr.Temporary())
}

// Cause names why a write or metadata call failed, for the crawler's /healthz: "not enough
// replicas" (min.insync.replicas not met), "rejected (…)" for a permanent answer, the broker's
// answer for any other Kafka error, and "unreachable" for everything that is not an answer
// (refused, timed out, DNS, reset).
func Cause(err error) string {
	var ke kafka.Error
	var wes kafka.WriteErrors
	if errors.As(err, &wes) {
		for _, e := range wes {
			if e != nil {
				err = e
				break
			}
		}
	}
	switch {
	case err == nil:
		return ""
	case errors.Is(err, kafka.NotEnoughReplicas), errors.Is(err, kafka.NotEnoughReplicasAfterAppend):
		return "not enough replicas"
	case permanent(err):
		return "rejected (" + err.Error() + ")"
	case errors.As(err, &ke):
		return ke.Title()
	}
	return "unreachable"
}
