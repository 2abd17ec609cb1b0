package alerts_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// BenchmarkNotifyLatency is the end-to-end latency of an opening: from the Publish of its event to
// the webhook request arriving, through Kafka, the consume loop, the claim transaction and the
// sender, against the real stack. Openings are published one at a time, each after the previous
// one arrived, so the number is the latency of an alert, not of a backlog. The loop runs with the
// notify command's batch wait (pgclaims.DefaultBatchWait).
func BenchmarkNotifyLatency(b *testing.B) {
	addr := kafkatest.Bootstrap(b)
	topic := kafkatest.Topic(b, addr, 3)
	arrived := make(chan string, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.Header.Get("Idempotency-Key")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop := startLatencyPipeline(ctx, b, cancel, addr, topic, srv.URL)
	tr := &kafka.Transport{DialTimeout: 5 * time.Second}
	defer tr.CloseIdleConnections()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, Balancer: &kafka.Hash{}, RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, Transport: tr}
	defer w.Close()
	probe := &latencyProbe{b: b, ctx: ctx, w: w, arrived: arrived}

	var lat []time.Duration
	key, _ := probe.publish() // warm-up: the group join
	probe.await(key)
	const perLoop = 50
	for b.Loop() {
		for range perLoop {
			key, t0 := probe.publish()
			probe.await(key)
			lat = append(lat, time.Since(t0))
		}
	}
	b.StopTimer()
	stop()
	slices.Sort(lat)
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(ms(0.5), "p50_ms")
	b.ReportMetric(ms(0.99), "p99_ms")
	b.ReportMetric(float64(len(lat)), "openings")
}

// startLatencyPipeline runs the notify pipeline of `booking-consumer notify` on topic (a watch
// "all" on the webhook at hookURL, the consume loop with the command's batch wait, the claims in
// a database of its own, the sender) until the returned stop, which also cancels ctx.
func startLatencyPipeline(ctx context.Context, b *testing.B, cancel context.CancelFunc, addr, topic, hookURL string) (stop func()) {
	pool := storetest.NewDB(b)
	cfg, err := notify.Parse([]byte("channels:\n  hook: {type: webhook, url: "+hookURL+"/}\nwatches:\n  - name: all\n    channels: [hook]\n"),
		func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	logger := slog.New(slog.DiscardHandler)
	st := &pgclaims.Store{Pool: pool, Owner: "bench"}
	svc, err := alerts.New(st, alerts.Config{Watches: cfg, Settle: pgclaims.DefaultSettle, Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	if err := svc.Start(ctx); err != nil {
		b.Fatal(err)
	}
	r := consumertest.NewReader(b, addr, topic, kafkatest.Name(b, "g"))
	run := consumertest.Start(b, ctx, r, sink{svc}, consumertest.Production(consumer.Config{BatchWait: 50 * time.Millisecond, Logger: logger}))
	return func() {
		run.Stop(b)
		cancel()
		consumertest.Close(b, r)
		_ = svc.Stop(context.Background())
	}
}

// latencyProbe publishes openings one at a time and waits for each one's webhook request.
type latencyProbe struct {
	b       *testing.B
	ctx     context.Context
	w       *kafka.Writer
	arrived chan string // the Idempotency-Key of each request
	i       int
}

// publish writes the next opening and returns its claim key and when it was written.
func (p *latencyProbe) publish() (uuid.UUID, time.Time) {
	p.i++
	i := p.i
	price, players := int64(100000), 4
	l := events.Listing{Source: "bench", CourseName: fmt.Sprintf("Latency %d", i), RoundDate: "2026-12-05",
		PlayDate: "2026-12-05", TeeTime: "07:00", Values: events.Values{PriceKRW: &price, Players: &players}}
	e := events.Opened(l, fmt.Sprintf("crawl-%d", i), time.Now())
	v, err := events.Encode(e)
	if err != nil {
		p.b.Fatal(err)
	}
	t0 := time.Now()
	if err := p.w.WriteMessages(p.ctx, kafka.Message{Key: []byte(e.ListingKey), Value: v}); err != nil {
		p.b.Fatal(err)
	}
	return notify.ClaimKey("all", "hook", e.EventID), t0
}

// await waits up to 60 s for the request of the opening whose claim key is key.
func (p *latencyProbe) await(key uuid.UUID) {
	timeout := time.After(60 * time.Second)
	for {
		select {
		case k := <-p.arrived:
			if k == key.String() {
				return
			}
		case <-timeout:
			p.b.Fatalf("opening %s not delivered within 60 s", key)
		}
	}
}

// sink is `booking-consumer notify`'s consume-loop sink: a batch's events claimed by the service.
type sink struct{ svc *alerts.Service }

func (s sink) Ingest(ctx context.Context, batch []store.Message) (store.Result, error) {
	evs := make([]*events.Event, 0, len(batch))
	for _, m := range batch {
		if m.Event != nil {
			evs = append(evs, m.Event)
		}
	}
	n, err := s.svc.Claim(ctx, alerts.Crawl{Events: evs})
	return store.Result{Inserted: n}, err
}
