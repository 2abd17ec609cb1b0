package kafkabus

import (
	"errors"
	"fmt"
	"github.com/golfcrawler/golf-crawler/internal/defaults"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// Defaults of PublisherConfig, from measurements of kafka-go against the dev broker (each says why).
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
	defaults.Zero(&c.Topic, DefaultTopic)
	defaults.Positive(&c.QueueSize, DefaultQueueSize)
	defaults.Positive(&c.RetryWindow, DefaultRetryWindow)
	defaults.Positive(&c.BatchSize, DefaultBatchSize)
	defaults.Zero(&c.ClientID, DefaultClientID)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
