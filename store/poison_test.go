package store_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// randomText returns n characters that do not compress, so that PostgreSQL's index-entry limit
// (~2.7 KB after compression) is really reached.
func randomText(seed uint64, n int) string {
	r := rand.New(rand.NewPCG(seed, seed+1))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// A valid-looking event whose listing_key is too large for a btree entry fails the insert with
// SQLSTATE 54000 (program_limit_exceeded). It is built as a store.Message directly, bypassing
// events.Validate: whatever bounds validation adds, the store must pin such an error on its row,
// dead-letter that row and store the rest of the batch.
func TestIngestOversizeIndexedTextIsDeadLetteredAlone(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	s := store.New(pool)

	bad := listing(7)
	bad.CourseName = randomText(1, 4000)
	batch := []store.Message{
		message(t, events.Opened(listing(1), "crawl-1", t0), 0),
		message(t, events.Opened(bad, "crawl-1", t0), 1),
		message(t, events.Opened(listing(2), "crawl-1", t0), 2),
	}
	if n := len(batch[1].Event.ListingKey); n < 4000 {
		t.Fatalf("listing_key is %d bytes, want > 4000", n)
	}
	res, err := s.Ingest(t.Context(), batch)
	if err != nil {
		t.Fatalf("Ingest: %v (decision %+v); want the oversize row dead-lettered and the rest stored",
			err, store.Decide(t.Context(), err))
	}
	if want := (store.Result{Inserted: 2, DeadLettered: 1}); res != want {
		t.Fatalf("Ingest = %+v, want %+v", res, want)
	}
	var offset int64
	var errText string
	if err := pool.QueryRow(t.Context(), "select kafka_offset, error from booking_events_dead").Scan(&offset, &errText); err != nil {
		t.Fatal(err)
	}
	if offset != 1 || !strings.Contains(errText, "54000") {
		t.Fatalf("dead letter at offset %d with %q; want offset 1 and SQLSTATE 54000", offset, errText)
	}
	if n, err := s.CountEvents(t.Context()); err != nil || n != 2 {
		t.Fatalf("CountEvents = %d, %v; want the 2 valid events", n, err)
	}
}

// An error that no row can be blamed for (here: a renamed column, as after a bad migration) must
// never dead-letter the batch: Ingest fails, nothing is written, and the decision is an alarmed
// retry. Fixing the schema lets the same batch through.
func TestIngestUnattributableErrorIsAlarmedNotDeadLettered(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	s := store.New(pool)
	ctx := t.Context()
	batch := openedBatch(t, 5, "crawl-1")
	batch = append(batch, store.Message{Topic: "t", Partition: 0, Offset: 99, Value: []byte("{"),
		Err: fmt.Errorf("decode: %w", events.ErrNotJSON)})

	if _, err := pool.Exec(ctx, "alter table booking_events rename column crawl_id to crawl_id_gone"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Ingest(ctx, batch)
	d := store.Decide(ctx, err)
	if err == nil || d.Fate != store.FateAlarmedRetry || d.Reason != "sqlstate 42703" {
		t.Fatalf("Ingest with a renamed column = %v, decision %+v; want an alarmed retry for sqlstate 42703", err, d)
	}
	var stored, dead int
	if err := pool.QueryRow(ctx, "select (select count(*) from booking_events), (select count(*) from booking_events_dead)").
		Scan(&stored, &dead); err != nil {
		t.Fatal(err)
	}
	if stored != 0 || dead != 0 {
		t.Fatalf("%d events and %d dead letters written by a failed batch; want none", stored, dead)
	}
	if _, err := pool.Exec(ctx, "alter table booking_events rename column crawl_id_gone to crawl_id"); err != nil {
		t.Fatal(err)
	}
	res, err := s.Ingest(ctx, batch)
	if err != nil || res != (store.Result{Inserted: 5, DeadLettered: 1}) {
		t.Fatalf("after the fix Ingest = %+v, %v; want 5 inserted, 1 dead letter", res, err)
	}
}

// A role without INSERT on booking_events: permission denied (42501) is the consumer's
// environment, not the data's fault.
func TestIngestPermissionDeniedIsAlarmedNotDeadLettered(t *testing.T) {
	t.Parallel()
	pool, dbURL := storetest.NewDBURL(t)
	ctx := t.Context()
	role := fmt.Sprintf("r2_noinsert_%d", rand.Uint32())
	for _, q := range []string{
		"create role " + role,
		"grant select on booking_events to " + role,
		"grant select, insert, update on booking_events_dead to " + role,
		"grant usage on sequence booking_events_dead_id_seq to " + role,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_, _ = pool.Exec(context.WithoutCancel(ctx), "drop owned by "+role+"; drop role "+role)
	})
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, "set role "+role)
		return err
	}
	restricted, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer restricted.Close()
	s := store.New(restricted)
	_, err = s.Ingest(ctx, []store.Message{message(t, events.Opened(listing(1), "crawl-1", t0), 0)})
	d := store.Decide(ctx, err)
	if err == nil || d.Fate != store.FateAlarmedRetry || d.Reason != "sqlstate 42501" {
		t.Fatalf("Ingest without INSERT = %v, decision %+v; want an alarmed retry for sqlstate 42501", err, d)
	}
	var dead int
	if err := pool.QueryRow(ctx, "select count(*) from booking_events_dead").Scan(&dead); err != nil || dead != 0 {
		t.Fatalf("dead letters = %d, %v; want none", dead, err)
	}
	if errors.Is(err, store.ErrRejected) {
		t.Errorf("permission denied classified as rejected data: %v", err)
	}
}
