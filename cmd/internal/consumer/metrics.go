package consumer

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/golfcrawler/golf-crawler/store"
)

// Metrics receives the loop's counters. Calls come from the loop's goroutine, one batch at a
// time; implementations must not block.
type Metrics interface {
	// Batch is called once per batch stored (after the database commit, before the offset commit).
	Batch(size int, res store.Result, latency time.Duration)
	// Retry is called before each backoff of a failed insert.
	Retry()
	// Lag reports, per partition in the batch, how many messages the partition held after the
	// batch's last one (HighWaterMark − Offset − 1, as the fetch saw it).
	Lag(topic string, partition int, lag int64)
}

// StuckMetrics is what a Metrics also implements to export the alarms (Prometheus does). Calls
// come from any of the loop's goroutines; implementations must be safe for concurrent use.
type StuckMetrics interface {
	// Stuck adds delta (+1 or -1) to the number of batches or commits stuck for reason (a short,
	// stable label: "sqlstate 42703", "offset commit", ...).
	Stuck(reason string, delta int)
	// CommitFailed is called for each failed offset commit (it is retried).
	CommitFailed()
}

type nopMetrics struct{}

func (nopMetrics) Batch(int, store.Result, time.Duration) {}
func (nopMetrics) Retry()                                 {}
func (nopMetrics) Lag(string, int, int64)                 {}

// Prometheus implements Metrics with metrics named booking_consumer_*.
type Prometheus struct {
	consumed, inserted, duplicates, deadLettered, retries, commitFailures prometheus.Counter
	latency                                                               prometheus.Histogram
	lag, stuck                                                            *prometheus.GaugeVec
}

// NewPrometheus registers the consumer's metrics on reg.
func NewPrometheus(reg prometheus.Registerer) *Prometheus {
	counter := func(name, help string) prometheus.Counter {
		c := prometheus.NewCounter(prometheus.CounterOpts{Name: "booking_consumer_" + name, Help: help})
		reg.MustRegister(c)
		return c
	}
	p := &Prometheus{
		consumed:     counter("consumed_total", "Messages fetched from Kafka and stored (as events, duplicates or dead letters)."),
		inserted:     counter("inserted_total", "Events inserted as new rows."),
		duplicates:   counter("duplicates_total", "Events already stored (redeliveries, republished events)."),
		deadLettered: counter("dead_lettered_total", "Messages stored in the dead-letter table."),
		retries:      counter("retries_total", "Failed batch inserts that were retried."),
		commitFailures: counter("commit_failures_total",
			"Failed offset commits (each is retried with backoff; rows were stored already)."),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "booking_consumer_batch_seconds",
			Help:    "Time from a batch's first insert attempt to its database commit, retries included.",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16), // 1 ms … 33 s
		}),
		lag: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "booking_consumer_lag",
			Help: "Messages behind the partition's high-water mark, as of the last batch from that partition.",
		}, []string{"topic", "partition"}),
		stuck: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "booking_consumer_stuck",
			Help: "Batches (or the offset commit) retried at least AlarmAfter times in a row for an error that is neither " +
				"transient nor a row's fault, by reason; while it is above 0, /healthz answers 503.",
		}, []string{"reason"}),
	}
	reg.MustRegister(p.latency, p.lag, p.stuck)
	return p
}

// Batch implements Metrics.
func (p *Prometheus) Batch(size int, res store.Result, latency time.Duration) {
	p.consumed.Add(float64(size))
	p.inserted.Add(float64(res.Inserted))
	p.duplicates.Add(float64(res.Duplicates))
	p.deadLettered.Add(float64(res.DeadLettered))
	p.latency.Observe(latency.Seconds())
}

// Retry implements Metrics.
func (p *Prometheus) Retry() { p.retries.Inc() }

// Lag implements Metrics.
func (p *Prometheus) Lag(topic string, partition int, lag int64) {
	p.lag.WithLabelValues(topic, strconv.Itoa(partition)).Set(float64(lag))
}

// Stuck implements StuckMetrics.
func (p *Prometheus) Stuck(reason string, delta int) {
	p.stuck.WithLabelValues(reason).Add(float64(delta))
}

// CommitFailed implements StuckMetrics.
func (p *Prometheus) CommitFailed() { p.commitFailures.Inc() }
