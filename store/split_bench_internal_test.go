package store

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/golfcrawler/golf-crawler/events/eventstest"
)

// BenchmarkSplit is the consumer's per-batch CPU before the statement: a batch of 1000 crawl
// events (BatchSize's default) made into event_id-ordered rows. CPU only, no database: it shows
// what split's own work costs per event, which the process-level benchmarks cannot separate.
func BenchmarkSplit(b *testing.B) {
	batch := crawlBatch(1000, "split")
	b.ReportAllocs()
	for b.Loop() {
		rows, dead := split(batch)
		if rows.len() != len(batch) || len(dead) != 0 {
			b.Fatalf("%d rows, %d dead", rows.len(), len(dead))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/event")
}

// crawlBatch is n crawl events as the consumer hands a batch of them to the store.
func crawlBatch(n int, prefix string) []Message {
	evs := eventstest.CrawlEvents(0, n, prefix)
	batch := make([]Message, len(evs))
	for i := range evs {
		batch[i] = Message{Topic: "booking-events", Partition: i % 3, Offset: int64(i), Event: &evs[i],
			Value: []byte(`{"payload":"about five hundred bytes in real events"}`)}
	}
	return batch
}

// split's rows are in event_id order (concurrent batches then lock shared event_ids in the same
// order), each event_id once with its first delivery's position, and every undecodable message is
// a dead letter: what the consumer's inserts rely on, whatever split sorts internally.
func TestSplitOrdersRowsByEventIDFirstDeliveryWins(t *testing.T) {
	t.Parallel()
	evs := eventstest.CrawlEvents(0, 300, "split-order")
	var batch []Message
	for i := range evs {
		batch = append(batch, Message{Topic: "t", Partition: i % 3, Offset: int64(i), Event: &evs[i]})
	}
	// redeliveries of the first 50 at later offsets, and 10 poison messages between them
	for i := range 50 {
		batch = append(batch, Message{Topic: "t", Partition: 9, Offset: int64(1000 + i), Event: &evs[i]})
	}
	for i := range 10 {
		batch = append(batch, Message{Topic: "t", Partition: 8, Offset: int64(i), Value: []byte("junk"), Err: errors.New("bad json")})
	}
	rand.New(rand.NewPCG(4, 1)).Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
	first := map[[16]byte]int64{} // event_id -> offset of its first delivery in the batch
	for _, m := range batch {
		if m.Event != nil {
			if _, ok := first[m.Event.EventID]; !ok {
				first[m.Event.EventID] = m.Offset
			}
		}
	}

	rows, dead := split(batch)
	if rows.len() != len(evs) || rows.valid != len(evs)+50 || len(dead) != 10 {
		t.Fatalf("%d rows (valid %d), %d dead; want %d rows (valid %d), 10 dead", rows.len(), rows.valid, len(dead), len(evs), len(evs)+50)
	}
	for i, r := range rows.rows {
		if i > 0 && bytes.Compare(rows.rows[i-1].id[:], r.id[:]) >= 0 {
			t.Fatalf("row %d: event_id %x after %x: not in event_id order", i, r.id, rows.rows[i-1].id)
		}
		if r.offset != first[r.id] {
			t.Errorf("event %x stored at offset %d, its first delivery was at %d", r.id, r.offset, first[r.id])
		}
		if d := newDeadRow(rows.msgs[i]); d.offset != r.offset || d.partition != r.partition {
			t.Errorf("row %d dead-letters as %d@%d, stored as %d@%d", i, d.partition, d.offset, r.partition, r.offset)
		}
	}
}

// BenchmarkEncodeCopy is the consumer's per-batch CPU of the fast path after split: a batch of
// 1000 crawl events (split's rows) encoded as the binary COPY stream copyEvents sends, into a
// reused buffer. CPU only, no database: the cost of the row's definition (eventColumns' encoders)
// per event, which BenchmarkIngest's client CPU also holds but among the database's noise.
func BenchmarkEncodeCopy(b *testing.B) {
	batch := crawlBatch(1000, "encode")
	rows, _ := split(batch)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = appendCopyRows(append(slices.Grow(buf[:0], rows.encodedSize()), copyHeader...), rows.rows)
	}
	if !bytes.HasPrefix(buf, copyHeader) || len(buf) < 1000*len(eventColumns)*4 {
		b.Fatalf("%d bytes encoded", len(buf))
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(batch)), "ns/event")
}
