package kafkabus

import (
	"cmp"
	"errors"
	"log/slog"
	"strings"
	"time"
)

// Defaults of PublisherConfig, from measurements of kafka-go against the dev broker (each says why).
const (
	// DefaultTopic is the topic booking events go to when KAFKA_TOPIC is unset.
	DefaultTopic = "booking-events"
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

// PublisherConfig configures NewSpoolPublisher and NewSyncWriter. Zero fields take the Default*
// values.
type PublisherConfig struct {
	Brokers   []string     // host:port; empty means publishing is off (the crawler spools nothing for Kafka)
	Topic     string       // DefaultTopic when empty
	BatchSize int          // DefaultBatchSize when ≤ 0
	ClientID  string       // DefaultClientID when empty
	Logger    *slog.Logger // discards when nil
	Now       func() time.Time
	Metrics   PublisherMetrics // optional
}

// PublisherMetrics receives the publisher's counters as they change, so that the crawler can
// export them (e.g. as Prometheus counters) without this package depending on a metrics library.
// Calls come from the publisher's goroutine: implementations must be safe for concurrent use and
// must not block. (The spool counts what waits in it and what it drops when full: spool.Stats,
// the crawler's crawler_spool_* gauges.)
type PublisherMetrics interface {
	Sent(n int)   // acknowledged by all in-sync replicas
	Failed(n int) // given up: rejected by the broker for good, or unencodable
}

// PublisherStats are a publisher's counters since it was created. Queued is a gauge: the spool's
// events not yet acknowledged.
type PublisherStats struct {
	Published, Failed, Queued int64
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

// PublisherConfigFromEnv reads KAFKA_BOOTSTRAP, KAFKA_TOPIC and KAFKA_CLIENT_ID through getenv.
// Unset values keep their defaults; Logger, Now and Metrics are left for the caller. RemovedEnv
// names the variables an older version read that are ignored now.
func PublisherConfigFromEnv(getenv func(string) string) PublisherConfig {
	return PublisherConfig{
		Brokers:  ParseBrokers(getenv("KAFKA_BOOTSTRAP")),
		Topic:    strings.TrimSpace(getenv("KAFKA_TOPIC")),
		ClientID: strings.TrimSpace(getenv("KAFKA_CLIENT_ID")),
	}
}

// RemovedSetting is a setting of the in-memory publisher the spool replaced (its variable and
// the crawler's flag), with why it is gone.
type RemovedSetting struct{ Env, Flag, Why string }

// RemovedSettings: the spool gives nothing up by time and has no queue (docs/spool.md).
var RemovedSettings = []RemovedSetting{
	{"KAFKA_PUBLISH_RETRY_WINDOW", "retry-window", "nothing is given up by time any more: unacknowledged events stay in <state-dir>/spool"},
	{"KAFKA_PUBLISH_QUEUE_SIZE", "queue-size", "there is no publish queue any more: the bound is --spool-max-bytes"},
}

// RemovedEnv returns, for a start-up warning, each RemovedSettings variable set through getenv
// with why it is ignored.
func RemovedEnv(getenv func(string) string) []string {
	var out []string
	for _, v := range RemovedSettings {
		if strings.TrimSpace(getenv(v.Env)) != "" {
			out = append(out, v.Env+" is ignored: "+v.Why)
		}
	}
	return out
}

// withDefaults fills in what was left out: a zero setting, or a negative one (which means nothing),
// takes its default (cmp.Or(max(v, 0), d)).
func (c PublisherConfig) withDefaults() PublisherConfig {
	c.Brokers = ParseBrokers(strings.Join(c.Brokers, ","))
	c.Topic = cmp.Or(c.Topic, DefaultTopic)
	c.BatchSize = cmp.Or(max(c.BatchSize, 0), DefaultBatchSize)
	c.ClientID = cmp.Or(c.ClientID, DefaultClientID)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
