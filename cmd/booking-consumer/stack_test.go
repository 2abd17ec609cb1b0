package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// The consumer as a process against the running stack: killed with SIGKILL between commits and
// restarted, stopped with SIGTERM mid-stream, and started with --from.

func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "booking-consumer")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// publishEvents publishes n opened events of prefix, occurred and timestamped at. A message
// timestamp older than the stack's retention (log.retention.hours=168) is refused: the broker's
// retention check (every 5 minutes) deletes such a record whenever it runs, so a consumer or an
// offset read after it finds the log empty (TestStartUpUsesEveryBootstrapBroker read the end
// offsets as the first ones, "map[0:6 1:4]", in one CI run).
func publishEvents(t *testing.T, addr, topic string, n int, prefix string, at time.Time) {
	t.Helper()
	if age := time.Since(at); age > 24*time.Hour {
		t.Fatalf("publishEvents at %s: a message %s old is deleted by the broker's 7-day retention at any moment; publish at time.Now() or within a day of it", at.Format(time.RFC3339), age.Round(time.Hour))
	}
	msgs := make([]kafka.Message, n)
	for i := range msgs {
		price, players := int64(100000+i), 4
		l := events.Listing{Source: "test", CourseName: fmt.Sprintf("%s Course %d", prefix, i/40), RoundDate: "2026-05-01",
			PlayDate: "2026-05-01", TeeTime: fmt.Sprintf("%02d:%02d", 5+(i%40)/4, (i%4)*15), Values: events.Values{PriceKRW: &price, Players: &players}}
		b, err := events.Encode(events.Opened(l, "crawl-"+prefix, at))
		if err != nil {
			t.Fatal(err)
		}
		msgs[i] = kafka.Message{Key: []byte(l.Key()), Value: b, Time: at}
	}
	kafkatest.Produce(t, addr, topic, msgs)
}

// stack is the consumer's binary with a topic of 3 partitions and a database of its own; env is
// the child's environment (the connection, text logs, and the extra variables newStack got).
type stack struct {
	bin, addr, topic string
	db               *pgxpool.Pool
	env              []string
}

func newStack(t *testing.T, env ...string) *stack {
	t.Helper()
	bin := buildBinary(t)
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	db, dbURL := storetest.NewDBURL(t)
	return &stack{bin: bin, addr: addr, topic: topic, db: db,
		env: append([]string{"DATABASE_URL=" + dbURL, "KAFKA_BOOTSTRAP=" + addr, "LOG_FORMAT=text"}, env...)}
}

func rows(t *testing.T, db *pgxpool.Pool) int64 {
	t.Helper()
	return storetest.CountEvents(t, db)
}

func waitRows(t *testing.T, db *pgxpool.Pool, timeout time.Duration, cond func(int64) bool, what string, p *testkit.Proc) {
	t.Helper()
	testkit.WaitForf(t, timeout, func() string {
		return fmt.Sprintf("%s (rows=%d); logs:\n%s", what, rows(t, db), p.Logs.String())
	}, func() bool { return cond(rows(t, db)) })
}

// checkOffsetsBehindRows asserts that, per partition, every message below the group's committed
// offset is stored: with each event published once, rows at offsets < committed == committed.
func checkOffsetsBehindRows(t *testing.T, addr, group, topic string, partitions int, db *pgxpool.Pool) (committed int64) {
	t.Helper()
	offsets, err := kafkatest.CommittedOffsets(t.Context(), addr, group, topic, partitions)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range offsets {
		if p.CommittedOffset < 0 {
			continue
		}
		var n int64
		if err := db.QueryRow(t.Context(), `select count(*) from booking_events where kafka_topic = $1 and kafka_partition = $2 and kafka_offset < $3`,
			topic, p.Partition, p.CommittedOffset).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != p.CommittedOffset {
			t.Errorf("partition %d: committed offset %d but only %d rows below it: offsets ahead of rows", p.Partition, p.CommittedOffset, n)
		}
		committed += p.CommittedOffset
	}
	return committed
}

func TestSIGKILLThenRestartStoresEveryEventOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	group := kafkatest.Name(t, "g")
	const total = 3000
	publishEvents(t, s.addr, s.topic, total, "kill", time.Now())
	args := []string{"run", "--topic", s.topic, "--group", group, "--metrics-addr", "", "--batch-size", "50", "--batch-wait", "20ms", "--inflight", "3"}

	p1 := testkit.Start(t, s.bin, s.env, args...)
	waitRows(t, s.db, 30*time.Second, func(n int64) bool { return n >= 500 }, "500 rows", p1)
	if err := p1.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p1.Wait(t, 10*time.Second)
	atKill := rows(t, s.db)
	committed := checkOffsetsBehindRows(t, s.addr, group, s.topic, 3, s.db)
	t.Logf("killed with %d rows stored and %d offsets committed", atKill, committed)

	// The dead member holds its partitions until the session timeout (10 s) expires.
	p2 := testkit.Start(t, s.bin, s.env, args...)
	waitRows(t, s.db, 40*time.Second, func(n int64) bool { return n == total }, "all rows after restart", p2)
	p2.Stop(t, 20*time.Second)
	if n := rows(t, s.db); n != total {
		t.Errorf("rows = %d, want %d", n, total)
	}
	if c := checkOffsetsBehindRows(t, s.addr, group, s.topic, 3, s.db); c != total {
		t.Errorf("committed offsets sum to %d after a clean stop, want %d", c, total)
	}
}

func TestSIGTERMMidStreamExitsZeroWithOffsetsBehindRows(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	group := kafkatest.Name(t, "g")
	publishEvents(t, s.addr, s.topic, 5000, "term", time.Now())
	p := testkit.Start(t, s.bin, s.env,
		"--topic", s.topic, "--group", group, "--metrics-addr", "127.0.0.1:0", "--batch-size", "20", "--batch-wait", "20ms")
	waitRows(t, s.db, 30*time.Second, func(n int64) bool { return n >= 200 }, "200 rows", p)
	p.Stop(t, 20*time.Second)
	stored := rows(t, s.db)
	committed := checkOffsetsBehindRows(t, s.addr, group, s.topic, 3, s.db)
	if committed > stored || committed == 0 {
		t.Errorf("committed %d offsets with %d rows stored", committed, stored)
	}
	if !strings.Contains(p.Logs.String(), "serving /metrics") {
		t.Errorf("no metrics server log line; logs:\n%s", p.Logs.String())
	}
	t.Logf("stopped mid-stream at %d of 5000 rows, %d offsets committed", stored, committed)
}

func TestFromReplaysAFreshGroupFromATime(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	group := kafkatest.Name(t, "g")
	db, dbURL := storetest.NewDBURL(t)
	t0 := time.Now().Add(-2 * time.Hour).Truncate(time.Millisecond)
	publishEvents(t, addr, topic, 100, "old", t0)
	publishEvents(t, addr, topic, 100, "new", t0.Add(time.Hour))
	env := map[string]string{"DATABASE_URL": dbURL, "KAFKA_BOOTSTRAP": addr, "LOG_FORMAT": "text"}
	from := t0.Add(30 * time.Minute).Format(time.RFC3339)

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	var logs testkit.SyncBuffer
	go func() {
		done <- run(ctx, []string{"run", "--topic", topic, "--group", group, "--metrics-addr", "", "--from", from},
			envMap(env), &bytes.Buffer{}, &logs)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for rows(t, db) < 100 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // room for a wrong implementation to store the old events too
	cancel()
	if err := testkit.Recv(t, done, 20*time.Second, "run"); err != nil {
		t.Fatalf("run --from: %v; logs:\n%s", err, logs.String())
	}
	var old, recent int64
	if err := db.QueryRow(t.Context(), `select count(*) filter (where crawl_id = 'crawl-old'), count(*) filter (where crawl_id = 'crawl-new') from booking_events`).Scan(&old, &recent); err != nil {
		t.Fatal(err)
	}
	if old != 0 || recent != 100 {
		t.Errorf("--from %s stored %d old and %d new events, want 0 and 100; logs:\n%s", from, old, recent, logs.String())
	}

	// The group now has offsets: --from again is refused without --force-reset.
	_, _, err := runCLI(t, t.Context(), env, "run", "--topic", topic, "--group", group, "--metrics-addr", "", "--from", "earliest")
	if err == nil || !strings.Contains(err.Error(), "already has committed offsets") {
		t.Errorf("second --from = %v, want a refusal", err)
	}
}
