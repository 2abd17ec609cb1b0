package kafkabus_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// BenchmarkPublish measures the latency of Publish, the call on the crawler's goroutine, with a
// healthy broker (the dev stack's, via kafkatest) and with a black-holed one (accepts, never
// answers). "compare" alternates the two in one loop and reports blackholed_vs_healthy_p99, which
// should stay near 1: a sick broker must not slow the crawler down.
//
//	go test -bench Publish -run '^$' ./events/
//
// Each publisher has a 32768-event queue; once it is full further calls take the drop path
// (counted in dropped/op), which is what a long outage looks like to the crawler.
func BenchmarkPublish(b *testing.B) {
	addr := kafkatest.Bootstrap(b)
	topic := kafkatest.Topic(b, addr, 3)
	bh := testkit.BlackHole(b)
	const queue = 1 << 15
	healthy := kafkabus.NewPublisher(kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic, QueueSize: queue})
	holed := kafkabus.NewPublisher(kafkabus.PublisherConfig{Brokers: []string{bh}, QueueSize: queue})
	b.Cleanup(func() {
		for _, p := range []kafkabus.Publisher{healthy, holed} {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = p.Close(ctx)
			cancel()
		}
	})
	evs := testEvents(4096, 256)

	b.Run("healthy", func(b *testing.B) {
		lat, dropped := measure(b, healthy, evs)
		report(b, "", lat)
		b.ReportMetric(dropped/float64(len(lat)), "dropped/op")
	})
	b.Run("blackholed", func(b *testing.B) {
		lat, dropped := measure(b, holed, evs)
		report(b, "", lat)
		b.ReportMetric(dropped/float64(len(lat)), "dropped/op")
	})
	b.Run("compare", func(b *testing.B) {
		var lh, lb []time.Duration
		i := 0
		for b.Loop() {
			e := evs[i%len(evs)]
			p, l := healthy, &lh
			if i%2 == 1 {
				p, l = holed, &lb
			}
			start := time.Now()
			p.Publish(e)
			*l = append(*l, time.Since(start))
			i++
		}
		ph, pb := report(b, "healthy_", lh), report(b, "blackholed_", lb)
		b.ReportMetric(pb/ph, "blackholed_vs_healthy_p99")
	})
}

// measure publishes in a b.Loop and returns each call's latency and how many events the
// publisher dropped meanwhile.
func measure(b *testing.B, p kafkabus.Publisher, evs []events.Event) ([]time.Duration, float64) {
	s0 := p.(stats).Stats()
	lat := make([]time.Duration, 0, 1<<16)
	i := 0
	for b.Loop() {
		start := time.Now()
		p.Publish(evs[i%len(evs)])
		lat = append(lat, time.Since(start))
		i++
	}
	return lat, float64(p.(stats).Stats().Dropped - s0.Dropped)
}

// report adds p50, p99, p99.9 and max in µs under prefix and returns p99.
func report(b *testing.B, prefix string, lat []time.Duration) (p99 float64) {
	if len(lat) == 0 {
		return 0
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	p99 = us(s[len(s)*99/100])
	b.ReportMetric(us(s[len(s)/2]), prefix+"p50_us")
	b.ReportMetric(p99, prefix+"p99_us")
	b.ReportMetric(us(s[len(s)*999/1000]), prefix+"p999_us")
	b.ReportMetric(us(s[len(s)-1]), prefix+"max_us")
	return p99
}
