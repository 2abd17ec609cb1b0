package store

import (
	"testing"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// BenchmarkSplit is the consumer's per-batch CPU before the statement: a batch of 1000 crawl
// events (BatchSize's default) made into event_id-ordered rows. CPU only, no database: it shows
// what split's own work costs per event, which the process-level benchmarks cannot separate.
func BenchmarkSplit(b *testing.B) {
	evs := testkit.CrawlEvents(0, 1000, "split")
	batch := make([]Message, len(evs))
	for i := range evs {
		batch[i] = Message{Topic: "booking-events", Partition: i % 3, Offset: int64(i), Event: &evs[i],
			Value: []byte(`{"payload":"about five hundred bytes in real events"}`)}
	}
	b.ReportAllocs()
	for b.Loop() {
		rows, dead := split(batch)
		if rows.len() != len(batch) || len(dead) != 0 {
			b.Fatalf("%d rows, %d dead", rows.len(), len(dead))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/event")
}
