package consumer_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
)

// memReader hands out msgs, then waits for ctx; it records the committed offsets. Production
// passes a *kafkabus.GroupReader.
type memReader struct {
	mu        sync.Mutex
	msgs      []kafka.Message
	committed []int64
}

func (r *memReader) FetchMessage(ctx context.Context) (kafka.Message, error) {
	r.mu.Lock()
	if len(r.msgs) > 0 {
		m := r.msgs[0]
		r.msgs = r.msgs[1:]
		r.mu.Unlock()
		return m, nil
	}
	r.mu.Unlock()
	<-ctx.Done()
	return kafka.Message{}, ctx.Err()
}

func (r *memReader) CommitMessages(_ context.Context, msgs ...kafka.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		r.committed = append(r.committed, m.Offset)
	}
	return nil
}

// countingSink stands in for *store.Store: it counts what a batch holds and stops the consumer
// once want messages went through.
type countingSink struct {
	want           int
	seen, inserted int
	dead           []string
	stop           context.CancelFunc
}

func (s *countingSink) Ingest(_ context.Context, batch []store.Message) (store.Result, error) {
	var res store.Result
	for _, m := range batch {
		if m.Err != nil {
			res.DeadLettered++
			s.dead = append(s.dead, fmt.Sprintf("offset %d", m.Offset))
		} else {
			res.Inserted++
		}
	}
	s.seen += len(batch)
	s.inserted += res.Inserted
	if s.seen >= s.want {
		s.stop()
	}
	return res, nil
}

// Run fetches, batches, stores and only then commits: here two events and one undecodable value
// (a dead letter, never a blocked stream) go through an in-memory reader and store. In
// booking-consumer the reader is a kafka-go group Reader and the sink a *store.Store.
func ExampleRun() {
	price, players := int64(90_000), 2
	l := events.Listing{Source: "sim-golf", CourseName: "Lake", RoundDate: "2026-05-02", PlayDate: "2026-05-02",
		TeeTime: "07:12", Values: events.Values{PriceKRW: &price, Players: &players}}
	at := time.Date(2026, 5, 1, 1, 0, 0, 0, time.UTC)
	var msgs []kafka.Message
	for i, value := range [][]byte{nil, []byte("not an event"), nil} {
		if value == nil {
			l.TeeTime = fmt.Sprintf("07:%02d", 10+i)
			value, _ = events.Encode(events.Opened(l, "sim-golf@2026-05-01T10:00:00+09:00", at))
		}
		msgs = append(msgs, kafka.Message{Topic: "booking-events", Offset: int64(i), Key: []byte(l.Key()), Value: value})
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &memReader{msgs: msgs}
	s := &countingSink{want: len(msgs), stop: cancel}
	err := consumer.Run(ctx, r, s, consumer.Config{BatchSize: 10, BatchWait: 10 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	fmt.Println("inserted", s.inserted, "dead", s.dead, "committed", r.committed, "err", err)
	// Output: inserted 2 dead [offset 1] committed [0 1 2] err <nil>
}
