package store_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

var t0 = time.Date(2026, 5, 1, 6, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func listing(i int) events.Listing {
	return events.Listing{
		Source: "teeup", CourseName: fmt.Sprintf("Course %d", i%3), CoursePart: "OUT",
		RoundDate: "2026-05-10", PlayDate: "2026-05-10", TeeTime: fmt.Sprintf("%02d:%02d", 6+i/60%12, i%60),
		Values: events.Values{PriceKRW: ptr(int64(150000 + i)), Players: ptr(4)},
	}
}

// message wraps e as the consumer would: encoded value, position i on topic "t".
func message(t testing.TB, e events.Event, i int) store.Message {
	t.Helper()
	b, err := events.Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	return store.Message{Topic: "t", Partition: i % 3, Offset: int64(i), Key: []byte(e.ListingKey), Value: b, Event: &e}
}

// openedBatch is n messages, listing_opened for listings 0..n-1 at t0 in crawl, message i at
// offset i.
func openedBatch(t testing.TB, n int, crawl string) []store.Message {
	t.Helper()
	var batch []store.Message
	for i := range n {
		batch = append(batch, message(t, events.Opened(listing(i), crawl, t0), i))
	}
	return batch
}

// storedOpened is a fresh database holding openedBatch(t, n, "c1"), the store over it and the batch.
func storedOpened(t testing.TB, n int) (*pgxpool.Pool, *store.Store, []store.Message) {
	t.Helper()
	pool := storetest.NewDB(t)
	s := store.New(pool)
	batch := openedBatch(t, n, "c1")
	mustIngest(t, s, batch)
	return pool, s, batch
}

// mustIngest stores batch through s.Ingest, failing t on an error.
func mustIngest(t testing.TB, s *store.Store, batch []store.Message) {
	t.Helper()
	if _, err := s.Ingest(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
}

// ingestAtOnce runs one Ingest per batch, in concurrent transactions released at the same moment
// (the consumer runs up to consumer.Config.Inflight batches at once), and returns the sum of their
// results and their errors joined.
func ingestAtOnce(t testing.TB, s *store.Store, batches ...[]store.Message) (store.Result, error) {
	t.Helper()
	start := make(chan struct{})
	type answer struct {
		res store.Result
		err error
	}
	answers := make(chan answer, len(batches))
	for _, batch := range batches {
		go func() {
			<-start
			res, err := s.Ingest(t.Context(), batch)
			answers <- answer{res, err}
		}()
	}
	close(start)
	var sum store.Result
	var errs []error
	for range batches {
		ans := <-answers
		errs = append(errs, ans.err)
		sum.Inserted += ans.res.Inserted
		sum.Duplicates += ans.res.Duplicates
		sum.DeadLettered += ans.res.DeadLettered
	}
	return sum, errors.Join(errs...)
}

func TestIngest(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	s := store.New(pool)
	ctx := t.Context()

	var batch []store.Message
	for i := range 10 {
		batch = append(batch, message(t, events.Opened(listing(i), "crawl-1", t0.Add(time.Duration(i)*time.Second)), i))
	}
	batch = append(batch, batch[3]) // redelivered inside the batch
	batch = append(batch, store.Message{Topic: "t", Partition: 1, Offset: 100, Value: []byte("{oops"),
		Err: fmt.Errorf("decode: %w", events.ErrNotJSON)})
	noValue := events.Opened(listing(50), "crawl-1", t0)
	batch = append(batch, store.Message{Topic: "t", Partition: 2, Offset: 101, Event: &noValue}) // payload re-encoded

	res, err := s.Ingest(ctx, batch)
	if err != nil {
		t.Fatalf("Ingest: %v", err)
	}
	if want := (store.Result{Inserted: 11, Duplicates: 1, DeadLettered: 1}); res != want {
		t.Fatalf("first Ingest = %+v, want %+v", res, want)
	}

	res, err = s.Ingest(ctx, batch)
	if err != nil {
		t.Fatalf("second Ingest: %v", err)
	}
	if want := (store.Result{Inserted: 0, Duplicates: 12, DeadLettered: 1}); res != want {
		t.Fatalf("second Ingest = %+v, want %+v", res, want)
	}
	if n, err := s.CountEvents(ctx); err != nil || n != 11 {
		t.Fatalf("CountEvents = %d, %v; want 11", n, err)
	}

	var attempts int
	var errText string
	var raw []byte
	if err := pool.QueryRow(ctx, "select attempts, error, raw_value from booking_events_dead where kafka_offset = 100").
		Scan(&attempts, &errText, &raw); err != nil {
		t.Fatal(err)
	}
	if attempts != 2 || string(raw) != "{oops" || errText == "" {
		t.Fatalf("dead letter = attempts %d, error %q, raw %q; want 2 attempts of {oops", attempts, errText, raw)
	}

	// The stored row carries the typed columns and the first delivery's Kafka position.
	var typ, course, playDate, teeTime string
	var price int64
	var offset int64
	if err := pool.QueryRow(ctx, `select event_type, course_name, play_date::text, to_char(tee_time, 'HH24:MI'),
		price_krw, kafka_offset from booking_events where event_id = $1`, batch[3].Event.EventID).
		Scan(&typ, &course, &playDate, &teeTime, &price, &offset); err != nil {
		t.Fatal(err)
	}
	e := batch[3].Event
	if typ != string(e.EventType) || course != e.CourseName || playDate != e.PlayDate || teeTime != e.TeeTime ||
		price != *e.PriceKRW || offset != 3 {
		t.Fatalf("stored row (%s %s %s %s %d offset %d) does not match event %+v", typ, course, playDate, teeTime, price, offset, e)
	}
}

func TestIngestPoisonRowIsDeadLetteredAlone(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	s := store.New(pool)

	batch := openedBatch(t, 5, "crawl-1")
	// A NUL passes events.Validate but PostgreSQL text and jsonb reject it (22021 / 22P05).
	bad := listing(99)
	bad.CourseName = "Bad\x00Course"
	batch = append(batch, message(t, events.Opened(bad, "crawl-1", t0), 5))

	res, err := s.Ingest(t.Context(), batch)
	if err != nil {
		t.Fatalf("Ingest: %v", err)
	}
	if want := (store.Result{Inserted: 5, Duplicates: 0, DeadLettered: 1}); res != want {
		t.Fatalf("Ingest = %+v, want %+v", res, want)
	}
	var offset int64
	var errText string
	if err := pool.QueryRow(t.Context(), "select kafka_offset, error from booking_events_dead").Scan(&offset, &errText); err != nil {
		t.Fatal(err)
	}
	if offset != 5 || !bytes.Contains([]byte(errText), []byte("rejected")) {
		t.Fatalf("dead letter at offset %d with %q, want offset 5 and a rejection", offset, errText)
	}
}

func TestIngestEmptyBatch(t *testing.T) {
	t.Parallel()
	s := store.New(storetest.NewDB(t))
	res, err := s.Ingest(t.Context(), nil)
	if err != nil || res != (store.Result{}) {
		t.Fatalf("Ingest(nil) = %+v, %v", res, err)
	}
}

func TestIngestOnClosedPoolIsTransient(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	s := store.New(pool)
	pool.Close()
	_, err := s.Ingest(t.Context(), []store.Message{message(t, events.Opened(listing(1), "c", t0), 0)})
	if err == nil || !store.IsTransient(err) || errors.Is(err, store.ErrRejected) {
		t.Fatalf("Ingest on closed pool: %v; want a transient error", err)
	}
}

func TestExistingIDsAndExport(t *testing.T) {
	t.Parallel()
	s := store.New(storetest.NewDB(t))
	ctx := t.Context()
	var batch []store.Message
	// Inserted in reverse time order: Export must sort by occurred_at.
	for i := range 6 {
		l := listing(i)
		if i%2 == 1 {
			l.Source = "other"
		}
		batch = append(batch, message(t, events.Opened(l, "crawl-1", t0.Add(time.Duration(10-i)*time.Minute)), i))
	}
	mustIngest(t, s, batch)
	ids := []uuid.UUID{batch[0].Event.EventID, batch[1].Event.EventID, uuid.New()}
	if n, err := s.ExistingIDs(ctx, ids); err != nil || n != 2 {
		t.Fatalf("ExistingIDs = %d, %v; want 2", n, err)
	}

	var buf bytes.Buffer
	since := t0.Add(6 * time.Minute)
	n, err := s.Export(ctx, &buf, store.ExportFilter{Since: &since, Source: "teeup"})
	if err != nil {
		t.Fatal(err)
	}
	// teeup events are i = 0, 2, 4 at minutes 10, 8, 6: all >= 6, written as 4, 2, 0.
	var got []uuid.UUID
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		e, err := events.Decode(sc.Bytes())
		if err != nil {
			t.Fatalf("exported line does not decode: %v: %s", err, sc.Bytes())
		}
		got = append(got, e.EventID)
	}
	want := []uuid.UUID{batch[4].Event.EventID, batch[2].Event.EventID, batch[0].Event.EventID}
	if n != 3 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Export wrote %d: %v, want %v", n, got, want)
	}
}

// Two batches sharing their events, in opposite orders, in concurrent transactions (the consumer
// runs up to consumer.Config.Inflight at once): one stores each event, the other counts it as a
// duplicate, and neither fails with a deadlock.
func TestConcurrentIngestOfOverlappingBatches(t *testing.T) {
	t.Parallel()
	s := store.New(storetest.NewDB(t))
	const n, rounds = 300, 8
	for round := range rounds {
		a := make([]store.Message, n)
		b := make([]store.Message, n)
		for i := range n {
			e := events.Opened(listing(round*n+i), fmt.Sprint("crawl-", round), t0)
			a[i] = message(t, e, i)
			b[n-1-i] = message(t, e, n+i)
		}
		sum, err := ingestAtOnce(t, s, a, b)
		if err != nil {
			t.Fatalf("round %d: concurrent Ingest: %v", round, err)
		}
		if sum != (store.Result{Inserted: n, Duplicates: n}) {
			t.Fatalf("round %d: together %+v, want %d inserted and %d duplicates", round, sum, n, n)
		}
	}
	if got, err := s.CountEvents(t.Context()); err != nil || got != n*rounds {
		t.Fatalf("CountEvents = %d, %v; want %d", got, err, n*rounds)
	}
}

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
