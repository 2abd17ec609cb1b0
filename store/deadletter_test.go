package store_test

import (
	"fmt"
	"testing"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// Two batches holding the same poison positions in opposite orders (a redelivery after a
// rebalance, with batches in flight on both members) upsert their dead letters in concurrent
// transactions: they must wait for each other, never deadlock (40P01), and count every attempt.
func TestConcurrentDeadLettersInOppositeOrdersDoNotDeadlock(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	s := store.New(pool)
	const n, rounds = 300, 8
	for round := range rounds {
		a := make([]store.Message, n)
		b := make([]store.Message, n)
		for i := range n {
			m := store.Message{Topic: "t", Partition: i % 3, Offset: int64(round*n + i), Value: []byte("{"),
				Err: fmt.Errorf("decode: %w", events.ErrNotJSON)}
			a[i] = m
			b[n-1-i] = m
		}
		if _, err := ingestAtOnce(t, s, a, b); err != nil {
			t.Fatalf("round %d: concurrent Ingest of the same dead letters: %v", round, err)
		}
	}
	var rows, attempts int
	if err := pool.QueryRow(t.Context(), "select count(*), sum(attempts) from booking_events_dead").Scan(&rows, &attempts); err != nil {
		t.Fatal(err)
	}
	if rows != n*rounds || attempts != 2*n*rounds {
		t.Fatalf("%d dead letters with %d attempts; want %d with %d", rows, attempts, n*rounds, 2*n*rounds)
	}
}
