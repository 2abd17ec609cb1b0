package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// deadEvents returns n valid events.
func deadEvents(n int, prefix string) []events.Event {
	at := time.Date(2026, 4, 27, 9, 0, 0, 0, time.UTC)
	out := make([]events.Event, n)
	for i := range out {
		price, players := int64(100000+i), 4
		l := events.Listing{Source: "test", CourseName: fmt.Sprintf("%s Course %d", prefix, i/40), RoundDate: seedPlayDate,
			PlayDate: seedPlayDate, TeeTime: fmt.Sprintf("%02d:%02d", 5+(i%40)/4, (i%4)*15), Values: events.Values{PriceKRW: &price, Players: &players}}
		out[i] = events.Opened(l, "crawl-"+prefix, at.Add(time.Duration(i)*time.Second))
	}
	return out
}

// deadLetterThrough dead-letters messages through the consumer's own path (store.Ingest with an
// error): fixed are valid payloads that failed for a reason that no longer holds, bad are values
// that are still invalid. Offsets count from base on topic "earlier".
func deadLetterThrough(t *testing.T, db *pgxpool.Pool, base int64, fixed []events.Event, bad ...[]byte) {
	t.Helper()
	var msgs []store.Message
	for i, e := range fixed {
		b, err := events.Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, store.Message{Topic: "earlier", Partition: 0, Offset: base + int64(i), Key: []byte(e.ListingKey), Value: b,
			Err: fmt.Errorf("decode: %w: course_name over an older, stricter bound", events.ErrMalformed)})
	}
	for i, v := range bad {
		msgs = append(msgs, store.Message{Topic: "earlier", Partition: 1, Offset: base + int64(i), Key: []byte("k\x1b"), Value: v,
			Err: fmt.Errorf("decode: %w", events.ErrNotJSON)})
	}
	if _, err := store.New(db).Ingest(t.Context(), msgs); err != nil {
		t.Fatal(err)
	}
}

func deadCount(t *testing.T, db *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := db.QueryRow(t.Context(), "select count(*) from booking_events_dead").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestDeadListShowAndRetry(t *testing.T) {
	t.Parallel()
	db, dbURL := storetest.NewDBURL(t)
	env := map[string]string{"DATABASE_URL": dbURL}
	fixed := deadEvents(3, "fixed")
	hostile := []byte("{\"x\":\"\x1b[2J\x1b[31mred\x07\u202eevil\xff\xfe\x00" + strings.Repeat("long ", 40) + "END\"}")
	deadLetterThrough(t, db, 0, fixed, []byte("{not json"), hostile)

	checkDeadList(t, env)
	checkDeadShow(t, db, env, hostile)
	checkDeadRetry(t, db, env)
}

// checkDeadList: dead list escapes control characters and invalid UTF-8, cuts long values to
// --width, and --json --reason --limit selects.
func checkDeadList(t *testing.T, env map[string]string) {
	t.Helper()
	list, _, err := runCLI(t, t.Context(), env, "dead", "list", "--width", "80")
	if err != nil {
		t.Fatal(err)
	}
	if !utf8.ValidString(list) || strings.ContainsAny(list, "\x1b\x07\x00\u202e") {
		t.Errorf("dead list printed raw control characters or invalid UTF-8:\n%q", list)
	}
	for _, want := range []string{"id", "attempts", "earlier/1/1", `\u001b[2J\u001b[31mred\u0007\u202eevil\xff\xfe\u0000`, "…(+", "5 dead letters"} {
		if !strings.Contains(list, want) {
			t.Errorf("dead list lacks %q:\n%s", want, list)
		}
	}
	if strings.Contains(list, "END") {
		t.Errorf("dead list --width 40 --width 80 did not cut the long value:\n%s", list)
	}

	js, _, err := runCLI(t, t.Context(), env, "dead", "list", "--json", "--reason", "NOT A JSON", "--limit", "1")
	if err != nil {
		t.Fatal(err)
	}
	var listed []deadJSON
	if err := json.Unmarshal([]byte(js), &listed); err != nil || len(listed) != 1 || listed[0].Topic != "earlier" || listed[0].Partition != 1 {
		t.Fatalf("dead list --json --reason --limit 1 = %v (%v):\n%s", listed, err, js)
	}
}

// checkDeadShow: dead show prints the whole hostile value escaped, with its size; --json carries
// it in base64; an unknown id is ErrNoDeadLetter.
func checkDeadShow(t *testing.T, db *pgxpool.Pool, env map[string]string, hostile []byte) {
	t.Helper()
	var hostileID int64
	if err := db.QueryRow(t.Context(), "select id from booking_events_dead where kafka_partition = 1 and kafka_offset = 1").Scan(&hostileID); err != nil {
		t.Fatal(err)
	}
	show, _, err := runCLI(t, t.Context(), env, "dead", "show", strconv.FormatInt(hostileID, 10))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(show, "END") || !strings.Contains(show, `\xff\xfe`) || strings.ContainsAny(show, "\x1b\x00") ||
		!strings.Contains(show, fmt.Sprintf("(%d bytes)", len(hostile))) || !strings.Contains(show, `k\u001b`) {
		t.Errorf("dead show: want the whole value escaped, with its size:\n%s", show)
	}
	sj, _, err := runCLI(t, t.Context(), env, "dead", "show", "--json", strconv.FormatInt(hostileID, 10))
	var one deadJSON
	if err != nil || json.Unmarshal([]byte(sj), &one) != nil || one.ValueBase64 == nil {
		t.Fatalf("dead show --json = %s, %v", sj, err)
	}
	if _, _, err := runCLI(t, t.Context(), env, "dead", "show", "999999"); !errors.Is(err, store.ErrNoDeadLetter) {
		t.Errorf("dead show 999999 = %v, want no such dead letter", err)
	}
}

// checkDeadRetry: a dry run changes nothing; a retry re-drives the 3 fixed events and keeps the 2
// bad ones; a second retry re-drives nothing and counts another attempt.
func checkDeadRetry(t *testing.T, db *pgxpool.Pool, env map[string]string) {
	t.Helper()
	dry, _, err := runCLI(t, t.Context(), env, "dead", "retry", "--dry-run")
	if err != nil || !strings.Contains(dry, "re-driven 3 (new 3, already stored 0), still bad 2 (dry run: nothing changed)") {
		t.Fatalf("dead retry --dry-run = %v:\n%s", err, dry)
	}
	if rows(t, db) != 0 || deadCount(t, db) != 5 {
		t.Fatalf("the dry run changed the database: %d events, %d dead letters", rows(t, db), deadCount(t, db))
	}
	out, _, err := runCLI(t, t.Context(), env, "dead", "retry")
	if err != nil || !strings.Contains(out, "re-driven 3 (new 3, already stored 0), still bad 2\n") ||
		strings.Count(out, "re-driven  ") != 3 || strings.Count(out, "still bad  ") != 2 {
		t.Fatalf("dead retry = %v:\n%s", err, out)
	}
	again, _, err := runCLI(t, t.Context(), env, "dead", "retry")
	if err != nil || !strings.Contains(again, "re-driven 0 (new 0, already stored 0), still bad 2") {
		t.Fatalf("second dead retry = %v:\n%s", err, again)
	}
	if rows(t, db) != 3 || deadCount(t, db) != 2 {
		t.Errorf("after two retries: %d events, %d dead letters; want 3 and 2", rows(t, db), deadCount(t, db))
	}
	var attempts []int
	r, err := db.Query(t.Context(), "select attempts from booking_events_dead order by id")
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var a int
		_ = r.Scan(&a)
		attempts = append(attempts, a)
	}
	if fmt.Sprint(attempts) != "[3 3]" {
		t.Errorf("attempts of the still-bad dead letters after two retries = %v, want [3 3]", attempts)
	}
}

// TestDeadRetryWhileTheConsumerStoresTheSameEvents: the real consumer (run, in-process) drains a
// topic holding events whose earlier deliveries are dead letters, while dead retry runs over and
// over. Neither fails, every event is stored exactly once, and only the still-bad dead letters stay.
func TestDeadRetryWhileTheConsumerStoresTheSameEvents(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	db, dbURL := storetest.NewDBURL(t)
	evs := deadEvents(600, "both")
	deadLetterThrough(t, db, 0, evs, []byte("{still bad"))

	kafkatest.Produce(t, addr, topic, kafkatest.Encode(t, evs))

	env := map[string]string{"DATABASE_URL": dbURL, "KAFKA_BOOTSTRAP": addr, "LOG_FORMAT": "text"}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	var logs testkit.SyncBuffer
	go func() {
		done <- run(ctx, []string{"run", "--topic", topic, "--group", kafkatest.Name(t, "g"), "--metrics-addr", "",
			"--batch-size", "50", "--no-migrate"}, envMap(env), &bytes.Buffer{}, &logs)
	}()
	var redriven int
	for i := 0; rows(t, db) < int64(len(evs)) || i < 3; i++ {
		out, _, err := runCLI(t, t.Context(), env, "dead", "retry", "--quiet")
		if err != nil {
			t.Fatalf("dead retry #%d while the consumer runs: %v\n%s\nconsumer logs:\n%s", i+1, err, out, logs.String())
		}
		var n, newN, already, bad int
		if _, err := fmt.Sscanf(out, "re-driven %d (new %d, already stored %d), still bad %d", &n, &newN, &already, &bad); err != nil || bad != 1 {
			t.Fatalf("dead retry #%d printed %q (%v)", i+1, out, err)
		}
		redriven += n
		t.Logf("dead retry #%d: %s", i+1, strings.TrimSpace(out))
		if i > 1000 {
			t.Fatalf("the consumer did not store the %d events; logs:\n%s", len(evs), logs.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("consumer: %v; logs:\n%s", err, logs.String())
	}
	var n, distinct int
	if err := db.QueryRow(t.Context(), "select count(*), count(distinct event_id) from booking_events").Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n != len(evs) || distinct != len(evs) || redriven != len(evs) || deadCount(t, db) != 1 {
		t.Errorf("%d rows (%d distinct), %d re-driven, %d dead letters; want %d, %d, %d, 1",
			n, distinct, redriven, deadCount(t, db), len(evs), len(evs), len(evs))
	}
}

// TestDeadShowAndRetryHeaders: dead show prints a dead letter's kept Kafka headers escaped (and
// in base64 with --json), says when it had none and when they were not kept (a dead letter from
// before migration 009); dead retry checks the kept CloudEvents headers again, so a valid body
// whose ce_id disagrees stays dead while the same body without headers is stored.
func TestDeadShowAndRetryHeaders(t *testing.T) {
	t.Parallel()
	db, dbURL := storetest.NewDBURL(t)
	env := map[string]string{"DATABASE_URL": dbURL}
	evs := deadEvents(3, "headers")
	var msgs []store.Message
	for i, e := range evs {
		b, err := events.Encode(e)
		if err != nil {
			t.Fatal(err)
		}
		m := store.Message{Topic: "hdr", Partition: 0, Offset: int64(i), Key: []byte(e.ListingKey), Value: b,
			Err: fmt.Errorf("decode: %w: an older, stricter rule", events.ErrMalformed)}
		if i == 0 {
			m.Headers = events.CloudEventHeaders(e)
			m.Headers[1].Value = []byte(evs[2].EventID.String()) // ce_id of another event
			m.Headers = append(m.Headers, events.Header{Key: "trace\x1b", Value: []byte("\xff\x00")})
		}
		msgs = append(msgs, m)
	}
	if _, err := store.New(db).Ingest(t.Context(), msgs); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(t.Context(), "update booking_events_dead set raw_headers = null where kafka_offset = 2"); err != nil {
		t.Fatal(err)
	}
	ids := map[int64]int64{}
	rows, err := db.Query(t.Context(), "select kafka_offset, id from booking_events_dead")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var off, id int64
		if err := rows.Scan(&off, &id); err != nil {
			t.Fatal(err)
		}
		ids[off] = id
	}
	show := func(off int64, args ...string) string {
		out, _, err := runCLI(t, t.Context(), env, append([]string{"dead", "show"}, append(args, strconv.FormatInt(ids[off], 10))...)...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(out), " ") // the table's padding aside
	}
	got := show(0)
	for _, want := range []string{"header: ce_specversion: 1.0", "header: ce_id: " + evs[2].EventID.String(),
		"header: ce_type: com.github.golfcrawler.listing_opened.v1", `header: trace\u001b: \xff\u0000`} {
		if !strings.Contains(got, want) {
			t.Errorf("dead show lacks %q:\n%s", want, got)
		}
	}
	if got := show(1); !strings.Contains(got, "headers: none") {
		t.Errorf("dead show of a message without headers:\n%s", got)
	}
	if got := show(2); !strings.Contains(got, "headers: not kept") {
		t.Errorf("dead show of a dead letter from before kept headers:\n%s", got)
	}
	var one deadJSON
	if err := json.Unmarshal([]byte(show(0, "--json")), &one); err != nil || len(one.Headers) != 8 || one.Headers[7].ValueBase64 == nil || *one.Headers[7].ValueBase64 != "/wA=" {
		t.Errorf("dead show --json headers %+v (%v), want 8 with the last one's bytes in base64", one.Headers, err)
	}

	out, _, err := runCLI(t, t.Context(), env, "dead", "retry")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "re-driven 2 (new 2, already stored 0), still bad 1") ||
		!strings.Contains(out, fmt.Sprintf("still bad  %d: malformed event: CloudEvents header disagrees with the body: ce_id=", ids[0])) {
		t.Errorf("dead retry: want the two without headers stored and the one whose ce_id disagrees kept:\n%s", out)
	}
}
