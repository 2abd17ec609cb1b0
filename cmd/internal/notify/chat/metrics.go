package chat

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the chat's Prometheus series. A nil *Metrics records nothing.
type Metrics struct {
	commandsC *prometheus.CounterVec
	pollerC   *prometheus.GaugeVec
}

// NewMetrics registers the chat's series on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		commandsC: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "booking_notifier_commands_total",
			Help: "Chat messages a command channel received, by result: accepted, ignored_stranger (another chat), ignored_not_allowed (a group member not in allow_from), ignored_not_command, ignored_too_large (an update over the 4 MiB read, skipped)."}, []string{"channel", "result"}),
		pollerC: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "booking_notifier_command_poller_conflict",
			Help: "1 when a command channel's getUpdates poller stopped on Telegram's 409 Conflict (another process polls the bot)."}, []string{"channel"}),
	}
	reg.MustRegister(m.commandsC, m.pollerC)
	return m
}

func (m *Metrics) command(ch, result string) {
	if m != nil {
		m.commandsC.WithLabelValues(ch, result).Inc()
	}
}

func (m *Metrics) pollerConflict(ch string, v float64) {
	if m != nil {
		m.pollerC.WithLabelValues(ch).Set(v)
	}
}
