package kafkabus

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/segmentio/kafka-go"
)

// The consumer group reader's settings (GroupReaderConfig).
const (
	// SessionTimeout is how long the group waits for a silent member before giving its
	// partitions to others. After a crash (no LeaveGroup) a restarted consumer waits this long,
	// so lower means faster takeover; too low and a GC or network pause longer than it causes a
	// needless rebalance (and duplicate, harmless redeliveries). 10 s with 1 s heartbeats
	// tolerates ~9 missed heartbeats; a clean shutdown leaves the group at once either way.
	SessionTimeout    = 10 * time.Second
	HeartbeatInterval = time.Second
	// DefaultQueueCapacity is kafka-go's reader queue, in MESSAGES (it has no byte bound): the
	// messages fetched ahead of the loop. Each may be as large as the topic's max.message.bytes
	// (1 MiB by default), so the queue alone may hold about 8 MiB, ~1.5 MB of RSS per queued
	// message with the garbage collector's headroom: BenchmarkLargeMessageRSS measured 1.8× the
	// normal peak at 8 and 2.2× at 16. It costs no throughput: the loop takes whole batches while
	// the partition readers refill the queue, and PostgreSQL is the bottleneck
	// (BenchmarkQueueCapacity: 8 vs kafka-go's usual 1000 drained 100k events at 1.0-1.2×).
	DefaultQueueCapacity = 8
	// FetchMaxBytes is the most one fetch asks the broker for. kafka-go streams the response
	// message by message into the queue, so this bounds the broker's answer, not our memory; it
	// must exceed the largest message the topic allows (max.message.bytes), or that message
	// could never be read.
	FetchMaxBytes = 4 << 20
	// FetchMaxWait is how long the broker holds a fetch that has no message yet.
	FetchMaxWait = 500 * time.Millisecond
)

// GroupReaderOptions are what differs between one group reader and another.
type GroupReaderOptions struct {
	Brokers []string
	Topic   string
	Group   string
	// QueueCapacity is the reader's queue in messages (0: DefaultQueueCapacity).
	QueueCapacity int
	// Logger receives kafka-go's error log at WARN (nil: discarded).
	Logger *slog.Logger
}

// GroupReaderConfig is the consumer group reader booking-consumer runs: a new group reads the
// topic from its start, commits are synchronous (CommitMessages returns the broker's answer) and
// new partitions are picked up. Every test that consumes as the consumer does builds its reader
// here, so the tests exercise the production reader.
func GroupReaderConfig(o GroupReaderOptions) kafka.ReaderConfig {
	if o.QueueCapacity == 0 {
		o.QueueCapacity = DefaultQueueCapacity
	}
	c := kafka.ReaderConfig{
		Brokers: o.Brokers, GroupID: o.Group, Topic: o.Topic,
		StartOffset:    kafka.FirstOffset, // a new group reads the topic from its start
		CommitInterval: 0,                 // synchronous: CommitMessages returns the broker's answer
		MinBytes:       1, MaxBytes: FetchMaxBytes, MaxWait: FetchMaxWait, QueueCapacity: o.QueueCapacity,
		HeartbeatInterval: HeartbeatInterval, SessionTimeout: SessionTimeout,
		WatchPartitionChanges: true,
	}
	if o.Logger != nil {
		logger, topic := o.Logger, o.Topic
		c.ErrorLogger = kafka.LoggerFunc(func(msg string, a ...any) {
			logger.Warn(fmt.Sprintf(msg, a...), "topic", topic)
		})
	}
	return c
}
