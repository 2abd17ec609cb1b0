package replay_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/cmd/internal/replay"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// BenchmarkReplay replays the ~7k-event practice set end to end, from the first publish until
// every event is a committed row, into a fresh topic and database, with two consumers side by
// side in the same run:
//
//	batched  the booking-consumer loop: consumer.Run over a kafka-go group Reader, one set-based
//	         INSERT ... ON CONFLICT DO NOTHING transaction per batch, offsets committed after it
//	naive    FetchMessage, one autocommit INSERT ... ON CONFLICT DO NOTHING, CommitMessages, per message
//
// The consumer's group join (≈3 s on Kafka: group.initial.rebalance.delay.ms) is not timed: each
// consumer first ingests one warm-up event. Metrics: batched_s, naive_s, naive/batched (target
// ≥ 10) and batched_within_1s (1 or 0). Run: go test -bench Replay -run '^$' ./internal/replay/
func BenchmarkReplay(b *testing.B) {
	set := practiceBytes(b)
	evs := decodeAll(b, set)
	want := int64(distinctIDs(evs))
	addr := kafkatest.Bootstrap(b)
	var batched, naive time.Duration
	b.ResetTimer()
	for range b.N { // not b.Loop: the timer is stopped for each run's setup
		batched += endToEnd(b, addr, set, want, func(topic string, db *pgxpool.Pool) func() int64 {
			c := startConsumer(b, addr, topic, kafkatest.Name(b, "g"), db)
			return func() int64 { return c.Metrics.Inserted.Load() + c.Metrics.Duplicates.Load() }
		})
		naive += endToEnd(b, addr, set, want, func(topic string, db *pgxpool.Pool) func() int64 {
			return startNaive(b, addr, topic, kafkatest.Name(b, "naive"), db)
		})
	}
	n := float64(b.N)
	b.ReportMetric(batched.Seconds()/n, "batched_s")
	b.ReportMetric(naive.Seconds()/n, "naive_s")
	b.ReportMetric(float64(naive)/float64(batched), "naive/batched")
	within := 0.0
	if batched/time.Duration(b.N) <= time.Second {
		within = 1
	}
	b.ReportMetric(within, "batched_within_1s")
	b.ReportMetric(float64(len(evs)), "events")
}

// endToEnd times one replay of set into a fresh topic consumed into a fresh database by the
// consumer start returns a progress counter for (stored or recognised-duplicate events).
func endToEnd(b *testing.B, addr string, set []byte, want int64, start func(topic string, db *pgxpool.Pool) func() int64) time.Duration {
	b.StopTimer()
	topic := kafkatest.Topic(b, addr, 3)
	db := storetest.NewDB(b)
	done := start(topic, db)
	w := newWriter(b, addr, topic)

	// Warm-up: one event outside the set, so that the group has joined before the clock starts.
	warm := evs1(b)
	if err := w.WriteEvents(b.Context(), warm); err != nil {
		b.Fatalf("warm-up publish: %v", err)
	}
	testkit.WaitForf(b, 60*time.Second, func() string { return "warm-up event not consumed" }, func() bool { return done() >= 1 })

	b.StartTimer()
	t0 := time.Now()
	rep, err := replay.Run(b.Context(), bytes.NewReader(set), replay.Options{}, replay.Deps{Writer: w})
	if err != nil {
		b.Fatalf("replay: %v (published %d)", err, rep.Published)
	}
	testkit.WaitForf(b, 5*time.Minute, func() string { return fmt.Sprintf("consumer at %d of %d", done()-1, want) },
		func() bool { return done() >= want+1 })
	d := time.Since(t0)
	b.StopTimer()
	if got := countRows(b, db); got != want+1 {
		b.Fatalf("%d rows, want %d", got, want+1)
	}
	return d
}

// evs1 is one valid event that is not in the practice set.
func evs1(b *testing.B) []events.Event {
	price, players := int64(1), 1
	l := events.Listing{Source: "warm-up", CourseName: "Warm-up CC", RoundDate: "2026-01-01", PlayDate: "2026-01-01",
		TeeTime: "06:00", Values: events.Values{PriceKRW: &price, Players: &players}}
	return []events.Event{events.Opened(l, kafkatest.Name(b, "warm"), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
}

// startNaive runs the naive consumer in the background and returns how many messages it has
// handled (inserted or duplicate) and committed.
func startNaive(b *testing.B, addr, topic, group string, db *pgxpool.Pool) func() int64 {
	r := consumertest.NewReader(b, addr, topic, group)
	ctx, cancel := context.WithCancel(context.Background())
	var handled atomicInt
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				return
			}
			if err := consumertest.NaiveStore(ctx, r, db, m); err != nil {
				if ctx.Err() == nil {
					b.Errorf("naive consumer: %v", err)
				}
				return
			}
			handled.add(1)
		}
	}()
	b.Cleanup(func() {
		cancel()
		<-stopped
		consumertest.Close(b, r)
	})
	return handled.load
}
