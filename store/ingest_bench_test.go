package store_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

const benchEvents = 20_000

// benchMessages makes n distinct valid events (n/10 listings, an open then changes) as the
// consumer would hand them over.
func benchMessages(b *testing.B, n int) []store.Message {
	msgs := make([]store.Message, 0, n)
	for i := range n {
		l := listing(i / 10)
		l.PlayDate = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i/10%90).Format(events.DateLayout)
		var e events.Event
		if i%10 == 0 {
			e = events.Opened(l, fmt.Sprint("crawl-", i), t0.Add(time.Duration(i)*time.Second))
		} else {
			next := l
			next.PriceKRW = ptr(int64(100000 + i))
			e = events.Changed(l, next, fmt.Sprint("crawl-", i), t0.Add(time.Duration(i)*time.Second))
		}
		msgs = append(msgs, message(b, e, i))
	}
	return msgs
}

// BenchmarkIngest loads the same 20,000 fresh events into fresh databases five ways and reports
// rows/s of each plus the ratios the consumer is held to, side by side in one run:
//
//	naive       one INSERT ... ON CONFLICT DO NOTHING per event, autocommit
//	ingestN     store.Ingest in batches of N (one transaction: a binary COPY into the session's
//	            staging table, then one INSERT ... SELECT ... ON CONFLICT per batch)
//	ingest1000-unnest-binary, ingest1000-unnest-pgx   store.Ingest in batches of 1000 writing the
//	            batch the other ways (store.WriteBatchPaths), with the client's CPU per event of each
//	tempcopyN   COPY each batch (pgx's CopyFrom) into a temp table, INSERT ... SELECT ON CONFLICT
//	copy        raw COPY of the same rows into the same table (the ceiling)
//	dup         store.Ingest (batches of 1000) of the same events again: all duplicates
//
// ingest/naive (target >= 15), ingest/copy (target >= 0.6) and dup/fresh use ingest1000.
//
//	go test ./store/ -run '^$' -bench Ingest -benchtime 1x
func BenchmarkIngest(b *testing.B) {
	msgs := benchMessages(b, benchEvents)
	rate := func(d time.Duration) float64 { return float64(len(msgs)) / d.Seconds() }
	for b.Loop() {
		naive := timed(b, func(pool *pgxpool.Pool) { insertNaive(b, pool, msgs) })
		ingest := map[int]time.Duration{}
		for _, size := range []int{500, 1000, 2000} {
			ingest[size] = timed(b, func(pool *pgxpool.Pool) { ingestBatches(b, store.New(pool), msgs, size) })
		}
		for _, path := range store.WriteBatchPaths {
			undo := store.UseWriteBatch(path)
			cpu0 := selfCPU()
			d := timed(b, func(pool *pgxpool.Pool) { ingestBatches(b, store.New(pool), msgs, 1000) })
			cpu := selfCPU() - cpu0
			undo()
			b.ReportMetric(rate(d), "ingest1000-"+path+"_rows/s")
			b.ReportMetric(float64(cpu.Microseconds())/float64(len(msgs)), "ingest1000-"+path+"_client_cpu_us/event")
		}
		tempCopy := timed(b, func(pool *pgxpool.Pool) { tempCopyBatches(b, pool, msgs, 1000) })
		copyAll := timed(b, func(pool *pgxpool.Pool) { copyRows(b, pool, msgs) })

		pool := storetest.NewDB(b)
		s := store.New(pool)
		ingestBatches(b, s, msgs, 1000)
		start := time.Now()
		ingestBatches(b, s, msgs, 1000)
		dup := time.Since(start)
		if n, err := s.CountEvents(b.Context()); err != nil || n != int64(len(msgs)) {
			b.Fatalf("after duplicates: %d events, %v", n, err)
		}

		b.ReportMetric(rate(naive), "naive_rows/s")
		for size, d := range ingest {
			b.ReportMetric(rate(d), fmt.Sprintf("ingest%d_rows/s", size))
		}
		b.ReportMetric(rate(tempCopy), "tempcopy1000_rows/s")
		b.ReportMetric(rate(copyAll), "copy_rows/s")
		b.ReportMetric(rate(dup), "dup_rows/s")
		b.ReportMetric(float64(naive)/float64(ingest[1000]), "ingest/naive")
		b.ReportMetric(float64(copyAll)/float64(ingest[1000]), "ingest/copy")
		b.ReportMetric(float64(ingest[1000])/float64(dup), "dup/fresh")
	}
}

// selfCPU is this process's CPU time so far (user + system): the client's side of a load.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timed runs load on a fresh database, checks every event arrived, and returns how long load took.
func timed(b *testing.B, load func(*pgxpool.Pool)) time.Duration {
	pool := storetest.NewDB(b)
	start := time.Now()
	load(pool)
	d := time.Since(start)
	if n := storetest.CountEvents(b, pool); n != benchEvents {
		b.Fatalf("loaded %d events, want %d", n, benchEvents)
	}
	return d
}

func ingestBatches(b *testing.B, s *store.Store, msgs []store.Message, size int) {
	for start := 0; start < len(msgs); start += size {
		if _, err := s.Ingest(b.Context(), msgs[start:min(start+size, len(msgs))]); err != nil {
			b.Fatal(err)
		}
	}
}

func insertNaive(b *testing.B, pool *pgxpool.Pool, msgs []store.Message) {
	for _, row := range copySource(msgs) {
		if _, err := pool.Exec(b.Context(), storetest.NaiveInsertSQL, row...); err != nil {
			b.Fatal(err)
		}
	}
}

func copyRows(b *testing.B, pool *pgxpool.Pool, msgs []store.Message) {
	if _, err := pool.CopyFrom(b.Context(), pgx.Identifier{"booking_events"}, storetest.Columns,
		pgx.CopyFromRows(copySource(msgs))); err != nil {
		b.Fatal(err)
	}
}

func tempCopyBatches(b *testing.B, pool *pgxpool.Pool, msgs []store.Message, size int) {
	ctx := b.Context()
	rows := copySource(msgs)
	for start := 0; start < len(rows); start += size {
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `create temp table batch (like booking_events including defaults) on commit drop`); err != nil {
				return err
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"batch"}, storetest.Columns,
				pgx.CopyFromRows(rows[start:min(start+size, len(rows))])); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `insert into booking_events select * from batch on conflict (event_id) do nothing`)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// copySource renders msgs as rows of storetest.Columns.
func copySource(msgs []store.Message) [][]any {
	rows := make([][]any, len(msgs))
	for i, m := range msgs {
		rows[i] = storetest.Row(*m.Event, m.Topic, m.Partition, m.Offset, m.Value)
	}
	return rows
}
