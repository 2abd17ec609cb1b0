package store_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
)

// Ingest stores one consumed batch in one transaction: valid events are inserted (a redelivered
// one counts as a duplicate), undecodable messages are dead-lettered beside them, and the caller
// commits the batch's offsets only after Ingest returned nil.
//
// It needs a migrated PostgreSQL, so it has no Output line: go test compiles it and go doc shows
// it; TestIngest runs the same calls on a database of its own. Run by hand on a fresh migrated
// database (DATABASE_URL), it printed "inserted 1, duplicates 0, dead-lettered 1", and a second
// time "inserted 0, duplicates 1, dead-lettered 1" (the dead letter is upserted on its position).
func ExampleStore_Ingest() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()

	price, players := int64(90_000), 2
	l := events.Listing{Source: "sim-golf", CourseName: "Lake", RoundDate: "2026-05-02", PlayDate: "2026-05-02",
		TeeTime: "07:12", Values: events.Values{PriceKRW: &price, Players: &players}}
	e := events.Opened(l, "sim-golf@2026-05-01T10:00:00+09:00", time.Date(2026, 5, 1, 1, 0, 0, 0, time.UTC))
	value, _ := events.Encode(e)
	junk := []byte("not an event")
	_, decodeErr := events.Decode(junk)

	res, err := store.New(pool).Ingest(ctx, []store.Message{
		{Topic: "booking-events", Partition: 0, Offset: 41, Key: []byte(e.ListingKey), Value: value, Event: &e},
		{Topic: "booking-events", Partition: 0, Offset: 42, Value: junk, Err: decodeErr},
	})
	if err != nil {
		fmt.Println("retry the batch:", store.IsTransient(err), err)
		return
	}
	fmt.Printf("inserted %d, duplicates %d, dead-lettered %d\n", res.Inserted, res.Duplicates, res.DeadLettered)
}
