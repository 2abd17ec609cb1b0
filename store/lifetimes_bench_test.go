package store_test

import (
	"io"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/store"
)

// BenchmarkWriteLifetimesCSV writes 10,000 rows as the CSV (the dashboard's download and
// `lifetimes --csv`): the cost of deriving the cells from the struct's fields.
func BenchmarkWriteLifetimesCSV(b *testing.B) {
	at := time.Date(2026, 4, 18, 9, 0, 0, 0, time.UTC)
	price := int64(150000)
	rows := make([]store.Lifetime, 10_000)
	for i := range rows {
		closed := at.Add(time.Duration(i) * time.Minute)
		rows[i] = store.Lifetime{ListingKey: "sim-golf|레이크&힐스 CC|서코스|2026-04-19|06:00", Source: "sim-golf",
			CourseName: "레이크&힐스 CC", CoursePart: "서코스", PlayDate: "2026-04-19", TeeTime: "06:00",
			Status: store.StatusBooked, OpenedAt: at, ClosedAt: &closed, Duration: closed.Sub(at),
			OpenPriceKRW: &price, LastPriceKRW: &price, ChangeCount: i % 3}
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := store.WriteLifetimesCSV(io.Discard, rows, time.UTC); err != nil {
			b.Fatal(err)
		}
	}
}
