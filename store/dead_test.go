package store_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// deadRow inserts a booking_events_dead row directly, as the consumer would have recorded a
// message that failed with reason, and returns its id.
func deadRow(t testing.TB, pool *pgxpool.Pool, topic string, offset int64, value []byte, reason string) int64 {
	t.Helper()
	var id int64
	err := pool.QueryRow(t.Context(), `insert into booking_events_dead (kafka_topic, kafka_partition, kafka_offset,
		raw_key, raw_value, error, first_failed_at, last_failed_at) values ($1, $2, $3, 'k', $4, $5, $6, $6) returning id`,
		topic, offset%3, offset, value, reason, t0.Add(time.Duration(offset)*time.Minute)).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

type deadState struct {
	reason   string
	attempts int
}

func deadRows(t testing.TB, pool *pgxpool.Pool) map[int64]deadState {
	t.Helper()
	rows, err := pool.Query(t.Context(), "select id, error, attempts from booking_events_dead")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]deadState{}
	for rows.Next() {
		var id int64
		var s deadState
		if err := rows.Scan(&id, &s.reason, &s.attempts); err != nil {
			t.Fatal(err)
		}
		out[id] = s
	}
	return out
}

func encode(t testing.TB, e events.Event) []byte {
	t.Helper()
	b, err := events.Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// longKeyEvent is valid JSON whose listing_key is too long for a btree index entry: today either
// events.Decode or PostgreSQL (SQLSTATE 54000) refuses it, so it stays dead.
func longKeyEvent(t testing.TB) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	name := make([]byte, 4000)
	for i := range name {
		name[i] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"[r.IntN(62)]
	}
	l := listing(900)
	l.CourseName = string(name)
	return encode(t, events.Opened(l, "crawl-1", t0))
}

// TestRetryDeadRedrivesFixedAndKeepsBad: dead letters whose payload today's code accepts (they
// failed for a reason that is fixed now) are stored and leave the table in one transaction; the
// still-bad ones stay with today's reason and one more attempt; a second run is a no-op for the
// stored ones; a dry run changes nothing; --id, --reason and --since select.
func TestRetryDeadRedrivesFixedAndKeepsBad(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	s := store.New(pool)
	ctx := t.Context()

	fixed, ids := seedDeadLetters(t, s, pool)
	before, err := s.CountEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// A dry run says what would happen and changes nothing.
	dry, err := s.RetryDead(ctx, store.DeadFilter{}, true, nil)
	if want := (store.RetryResult{Redriven: 6, Inserted: 5, AlreadyStored: 1, StillBad: 4}); err != nil || dry != want {
		t.Fatalf("dry run = %+v, %v; want %+v", dry, err, want)
	}
	if n, _ := s.CountEvents(ctx); n != before || len(deadRows(t, pool)) != 10 {
		t.Fatalf("dry run changed the database: %d events (was %d), %d dead letters", n, before, len(deadRows(t, pool)))
	}

	// --reason and --id select.
	res, err := s.RetryDead(ctx, store.DeadFilter{Reason: "UNKNOWN EVENT_TYPE"}, false, nil)
	if want := (store.RetryResult{Redriven: 1, AlreadyStored: 1}); err != nil || res != want {
		t.Fatalf("retry --reason = %+v, %v; want %+v", res, err, want)
	}
	res, err = s.RetryDead(ctx, store.DeadFilter{ID: ids["fixed"][0]}, false, nil)
	if want := (store.RetryResult{Redriven: 1, Inserted: 1}); err != nil || res != want {
		t.Fatalf("retry --id = %+v, %v; want %+v", res, err, want)
	}

	var outcomes []store.RetryOutcome
	res, err = s.RetryDead(ctx, store.DeadFilter{}, false, func(o store.RetryOutcome) { outcomes = append(outcomes, o) })
	if want := (store.RetryResult{Redriven: 4, Inserted: 4, StillBad: 4}); err != nil || res != want {
		t.Fatalf("retry = %+v, %v; want %+v", res, err, want)
	}
	if len(outcomes) != 8 {
		t.Errorf("%d outcomes reported, want 8", len(outcomes))
	}
	if n, _ := s.CountEvents(ctx); n != before+5 {
		t.Errorf("%d events stored, want %d", n, before+5)
	}
	checkRedriven(t, pool, fixed, ids["bad"])

	// Twice: nothing left to re-drive; the still-bad ones are re-validated again (attempts 3).
	res, err = s.RetryDead(ctx, store.DeadFilter{}, false, nil)
	if want := (store.RetryResult{StillBad: 4}); err != nil || res != want {
		t.Fatalf("second retry = %+v, %v; want %+v", res, err, want)
	}
	if n, _ := s.CountEvents(ctx); n != before+5 {
		t.Errorf("second retry: %d events stored, want %d", n, before+5)
	}
	for _, id := range ids["bad"] {
		if d := deadRows(t, pool)[id]; d.attempts != 3 {
			t.Errorf("dead letter %d after two retries: %+v, want attempts 3", id, d)
		}
	}

	// --since: only failures at or after the time (the retries just moved last_failed_at to now).
	future := time.Now().Add(time.Hour)
	if res, err := s.RetryDead(ctx, store.DeadFilter{Since: &future}, false, nil); err != nil || res != (store.RetryResult{}) {
		t.Errorf("retry --since in an hour = %+v, %v; want nothing", res, err)
	}
	list, err := s.DeadLetters(ctx, store.DeadFilter{Limit: 2})
	if err != nil || len(list) != 2 || list[0].LastFailedAt.Before(list[1].LastFailedAt) {
		t.Errorf("DeadLetters(limit 2) = %+v, %v; want 2, newest first", list, err)
	}
	if _, err := s.DeadLetterByID(ctx, 999999); !errors.Is(err, store.ErrNoDeadLetter) {
		t.Errorf("DeadLetterByID(999999) = %v, want ErrNoDeadLetter", err)
	}
}

// seedDeadLetters stores one event and dead-letters 10 messages: 5 fixed events (a bound that was
// lifted), the stored one again, and 4 still bad (bad JSON, binary, no value, an oversize key).
// ids holds their ids by kind: fixed, already, bad.
func seedDeadLetters(t *testing.T, s *store.Store, pool *pgxpool.Pool) (fixed []events.Event, ids map[string][]int64) {
	t.Helper()
	already := events.Opened(listing(1), "crawl-1", t0)
	mustIngest(t, s, []store.Message{message(t, already, 0)})
	ids = map[string][]int64{}
	for i := range 5 {
		e := events.Opened(listing(10+i), "crawl-1", t0.Add(time.Duration(i)*time.Second))
		fixed = append(fixed, e)
		ids["fixed"] = append(ids["fixed"], deadRow(t, pool, "t", int64(100+i), encode(t, e), "malformed event: listing_key too long (an old bound)"))
	}
	ids["already"] = append(ids["already"], deadRow(t, pool, "t", 200, encode(t, already), "malformed event: unknown event_type"))
	ids["bad"] = append(ids["bad"],
		deadRow(t, pool, "t", 300, []byte("{not json"), "malformed event: not a JSON event object"),
		deadRow(t, pool, "t", 301, []byte("\xff\xfe\x00binary"), "malformed event: invalid UTF-8"),
		deadRow(t, pool, "t", 302, nil, "message has no value"),
		deadRow(t, pool, "t", 303, longKeyEvent(t), "index row size exceeds btree maximum"))
	return fixed, ids
}

// checkRedriven: after the retry, the 5 fixed events are stored at their dead-lettered positions
// and only the 4 still-bad dead letters are left (bad lists their ids), each with attempts 2 and
// today's reason.
func checkRedriven(t *testing.T, pool *pgxpool.Pool, fixed []events.Event, bad []int64) {
	t.Helper()
	ctx := t.Context()
	var stored int
	for _, e := range fixed {
		var n int
		if err := pool.QueryRow(ctx, "select count(*) from booking_events where event_id = $1 and kafka_offset between 100 and 104", e.EventID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		stored += n
	}
	if stored != 5 {
		t.Errorf("%d of the 5 fixed events are stored at their dead-lettered position", stored)
	}
	dead := deadRows(t, pool)
	if len(dead) != 4 {
		t.Fatalf("%d dead letters left, want the 4 still bad: %v", len(dead), dead)
	}
	for _, id := range bad {
		d, ok := dead[id]
		if !ok || d.attempts != 2 || d.reason == "" {
			t.Errorf("still-bad dead letter %d = %+v, want kept with attempts 2 and today's reason", id, d)
		}
	}
	if d := dead[bad[2]]; d.reason == "message has no value" || !strings.Contains(d.reason, "malformed event") {
		t.Errorf("reason of the empty value = %q, want today's decode error instead of the recorded one", d.reason)
	}
	if d := dead[bad[0]]; !strings.Contains(d.reason, "not a JSON") {
		t.Errorf("reason of the bad JSON = %q", d.reason)
	}
	if d := dead[bad[3]]; !strings.Contains(d.reason, "54000") && !errorsMention(d.reason, "listing_key", "course_name") {
		t.Errorf("reason of the oversize key = %q, want PostgreSQL's 54000 or a bound on the key", d.reason)
	}
}

func errorsMention(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// TestRetryDeadConcurrentWithTheConsumer: while the consumer's insert path (store.Ingest, the
// same events redelivered in several batches) stores events, a retry re-drives dead letters of
// the same events. Neither fails, every event is stored once, and the fixed dead letters are gone.
func TestRetryDeadConcurrentWithTheConsumer(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	s := store.New(pool)
	ctx := t.Context()
	for round := range 8 {
		var msgs []store.Message
		for i := range 60 {
			e := events.Opened(listing(round*100+i), fmt.Sprintf("crawl-%d", round), t0)
			msgs = append(msgs, message(t, e, round*1000+i))
			deadRow(t, pool, "dead", int64(round*1000+i), encode(t, e), "malformed event: fixed since")
		}
		deadRow(t, pool, "dead", int64(round*1000+999), []byte("{bad"), "malformed event: not a JSON event object")
		rng := rand.New(rand.NewPCG(uint64(round), 7))
		rng.Shuffle(len(msgs), func(i, j int) { msgs[i], msgs[j] = msgs[j], msgs[i] })

		var wg sync.WaitGroup
		var ingestErr error
		wg.Go(func() {
			for start := 0; start < len(msgs); start += 15 {
				if _, err := s.Ingest(ctx, msgs[start:start+15]); err != nil {
					ingestErr = err
					return
				}
			}
		})
		res, err := s.RetryDead(ctx, store.DeadFilter{}, false, nil)
		wg.Wait()
		if err != nil || ingestErr != nil {
			t.Fatalf("round %d: retry %v, ingest %v", round, err, ingestErr)
		}
		t.Logf("round %d: retry %+v", round, res)
		if res.Redriven != 60 || res.Inserted+res.AlreadyStored != 60 || res.StillBad != round+1 {
			t.Errorf("round %d: retry = %+v, want 60 re-driven (inserted or already stored) and %d still bad", round, res, round+1)
		}
		var n, distinct int
		if err := pool.QueryRow(ctx, "select count(*), count(distinct event_id) from booking_events").Scan(&n, &distinct); err != nil {
			t.Fatal(err)
		}
		if n != distinct || n != 60*(round+1) {
			t.Fatalf("round %d: %d rows, %d distinct, want %d", round, n, distinct, 60*(round+1))
		}
		if d := len(deadRows(t, pool)); d != round+1 {
			t.Errorf("round %d: %d dead letters left, want %d (the bad ones)", round, d, round+1)
		}
	}
}
