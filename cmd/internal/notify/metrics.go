package notify

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the notifier's Prometheus series (the chat's are notify/chat's; the consume loop's
// own, lag included, come from cmd/internal/consumer). A nil *Metrics records nothing.
type Metrics struct {
	sentC, failedC, unknownC, retriesC *prometheus.CounterVec
	skippedC                           *prometheus.CounterVec
	claimedC                           prometheus.Counter
	sightingH                          prometheus.Histogram
}

// NewMetrics registers the notifier's series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		sentC: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "booking_notifier_sent_total",
			Help: "Notifications the channel accepted (2xx)."}, []string{"channel"}),
		failedC: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "booking_notifier_failed_total",
			Help: "Notifications failed: a permanent answer or max attempts of transient ones."}, []string{"channel"}),
		unknownC: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "booking_notifier_unknown_total",
			Help: "Notifications of chat channels that timed out after the request was sent: maybe delivered, never re-sent."}, []string{"channel"}),
		retriesC: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "booking_notifier_retries_total",
			Help: "Transient send failures retried (timeouts, 5xx, 429)."}, []string{"channel"}),
		skippedC: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "booking_notifier_skipped_total",
			Help: "Matches recorded as skipped, by reason (stale, closed, watch_removed, watch_muted)."}, []string{"reason"}),
		claimedC: prometheus.NewCounter(prometheus.CounterOpts{Name: "booking_notifier_claimed_total",
			Help: "Matches claimed for sending."}),
	}
	m.sightingH = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "booking_notifier_sighting_to_sent_seconds",
		Help:    "From a listing's first sighting (its event's occurred_at: the crawl that saw it open or change) to its alert accepted by the channel, per match sent; backlog matches (already open) are not counted.",
		Buckets: []float64{1, 5, 15, 30, 60, 90, 120, 300, 600, 1800, 3600}})
	reg.MustRegister(m.sentC, m.failedC, m.unknownC, m.retriesC, m.skippedC, m.claimedC, m.sightingH)
	return m
}

func (m *Metrics) sent(ch string, n int) {
	if m != nil {
		m.sentC.WithLabelValues(ch).Add(float64(n))
	}
}

// sentAfter observes the time from a match's first sighting to its send.
func (m *Metrics) sentAfter(d time.Duration) {
	if m != nil {
		m.sightingH.Observe(max(0, d.Seconds()))
	}
}

func (m *Metrics) failed(ch string, n int) {
	if m != nil {
		m.failedC.WithLabelValues(ch).Add(float64(n))
	}
}

func (m *Metrics) unknown(ch string, n int) {
	if m != nil {
		m.unknownC.WithLabelValues(ch).Add(float64(n))
	}
}

func (m *Metrics) retry(ch string) {
	if m != nil {
		m.retriesC.WithLabelValues(ch).Inc()
	}
}

// Skipped counts n matches recorded as skipped for reason (at claim time, or at send time).
func (m *Metrics) Skipped(reason string, n int) {
	if m != nil {
		m.skippedC.WithLabelValues(reason).Add(float64(n))
	}
}

// Claimed counts n matches claimed for sending.
func (m *Metrics) Claimed(n int) {
	if m != nil {
		m.claimedC.Add(float64(n))
	}
}
