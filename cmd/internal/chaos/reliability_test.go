//go:build chaos

package chaos_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// Consumer-side scenarios, each against the booking-consumer binary: TestOversizeKeyPoison (a
// key the broker rejects), TestBrokerOutageWithInflight4 (an outage with batches in flight) and
// TestLargeMessagesMemoryBound (memory under large messages).

// consumerProc is the booking-consumer binary running "run" (its logs in Logs, LOG_LEVEL=info) and
// the address of its /metrics and /healthz.
type consumerProc struct {
	*testkit.Proc
	metrics string
}

func startBinary(t testing.TB, dbURL, addr, topic, group string, args ...string) *consumerProc {
	t.Helper()
	metrics := testkit.FreeAddr(t)
	return &consumerProc{metrics: metrics, Proc: testkit.Start(t, builtBinary(t, "booking-consumer"), []string{"LOG_LEVEL=info"},
		append([]string{"run", "--database-url", dbURL, "--kafka-bootstrap", addr,
			"--topic", topic, "--group", group, "--metrics-addr", metrics, "--no-migrate"}, args...)...)}
}

// start is startBinary on the drain's topic, group and database.
func (d *drain) start(t testing.TB, args ...string) *consumerProc {
	t.Helper()
	return startBinary(t, d.dbURL, d.addr, d.topic, d.group, args...)
}

func (p *consumerProc) healthz() (int, string) {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + p.metrics + "/healthz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func (p *consumerProc) peakRSSMB(t testing.TB) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && k == "VmHWM" {
			var kb float64
			_, _ = fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb / 1024
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// oversizeKeyPoison is a valid-looking listing_opened event whose course_name (and so listing_key)
// is 4,000 bytes of incompressible text, built as JSON directly, as no crawler would: too large
// for a btree index entry (SQLSTATE 54000), or rejected by a length bound in events.Validate.
func oversizeKeyPoison(t testing.TB) kafka.Message {
	t.Helper()
	r := rand.New(rand.NewPCG(11, 12))
	name := make([]byte, 4000)
	for i := range name {
		name[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[r.IntN(36)]
	}
	e := eventstest.CrawlEvents(0, 1, "poison-key")[0]
	l := events.Listing{Source: e.Source, CourseName: string(name), CoursePart: e.CoursePart, RoundDate: e.RoundDate,
		PlayDate: e.PlayDate, TeeTime: e.TeeTime, Values: events.Values{PriceKRW: e.PriceKRW, Players: e.Players}}
	base, err := events.Encode(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(base, &m); err != nil {
		t.Fatal(err)
	}
	m["course_name"], m["listing_key"] = l.CourseName, l.Key()
	v, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return kafka.Message{Key: []byte("oversize-key"), Value: v}
}

// TestOversizeKeyPoison: CHAOS_POISON_EVENTS (10,000) valid events with one oversize-key poison in
// the middle, drained by the binary: every valid event is stored, exactly one dead letter, the
// offsets reach the end, and the stream never stalls (the consumer keeps running, no batch is
// retried). Before the fix the batch holding the poison was retried forever.
func TestOversizeKeyPoison(t *testing.T) {
	stack(t)
	n := testkit.EnvInt(t, "CHAOS_POISON_EVENTS", 10_000)
	d := newDrain(t, "poisonkey")

	msgs := kafkatest.Encode(t, eventstest.CrawlEvents(0, n, "poisonkey"))
	poison := oversizeKeyPoison(t)
	d.produce(t, slices.Insert(msgs, n/2, poison))
	// The poison may decode (it is valid-looking); it must be found as a dead letter at its position.
	if pe, err := events.Decode(poison.Value); err == nil {
		for part, ps := range d.layout {
			for i := range ps {
				if ps[i].id == pe.EventID {
					d.layout[part][i].id = uuid.Nil
				}
			}
		}
	}

	p := d.start(t)
	start := time.Now()
	testkit.WaitFor(t, 3*time.Minute, "every message stored", func() bool {
		p.Alive(t, "while draining")
		return count(t, d.db, "booking_events")+count(t, d.db, "booking_events_dead") >= n+1
	})
	testkit.WaitFor(t, time.Minute, "offsets committed to the end", func() bool { return d.atEnd(t) })
	took := time.Since(start)
	code, body := p.healthz()
	p.Stop(t, 45*time.Second)

	rows, dead := count(t, d.db, "booking_events"), count(t, d.db, "booking_events_dead")
	var reason string
	if err := d.db.QueryRow(t.Context(), "select error from booking_events_dead").Scan(&reason); err != nil {
		t.Fatal(err)
	}
	retries := len(p.Logs.Lines("insert failed"))
	t.Logf("%d valid events + 1 oversize-key poison: %d rows, %d dead letter (%.120s), drained in %v, %d insert retries, /healthz %d %q",
		n, rows, dead, reason, took.Round(time.Millisecond), retries, code, body)
	if rows != n || dead != 1 {
		t.Errorf("rows = %d, dead letters = %d; want %d and 1", rows, dead, n)
	}
	if retries != 0 || code != http.StatusOK {
		t.Errorf("%d insert retries, /healthz %d: the poison stalled the stream", retries, code)
	}
	d.checkCommitted(t)
}

// TestBrokerOutageWithInflight4 replays a broker outage with the binary at --inflight 4:
// CHAOS_OUTAGE_EVENTS (14,000) events; booking_events is locked (ACCESS EXCLUSIVE) so that
// batches pile up in the database; the private broker is stopped (SIGTERM) while they are held,
// the lock is released 15 s into the outage (the batches are stored, their offset commits fail),
// and the broker stays down CHAOS_OUTAGE (60 s). The consumer must survive without a restart,
// store everything, commit to the end, and never commit an offset ahead of its rows. Before the
// fix it exited 1 after about a minute ("commit offsets: 5 failures in a row"). With
// --alarm-after 3, /healthz must answer 503 naming the offset commit while it fails, 200 after.
func TestBrokerOutageWithInflight4(t *testing.T) {
	st := stack(t)
	n := testkit.EnvInt(t, "CHAOS_OUTAGE_EVENTS", 14_000)
	outage := testkit.EnvDuration(t, "CHAOS_OUTAGE", 60*time.Second)
	d := newDrain(t, "outage")
	d.produce(t, kafkatest.Encode(t, eventstest.CrawlEvents(0, n, "outage")))

	lock := lockBookingEvents(t, d.dbURL)

	p := d.start(t, "--inflight", "4", "--alarm-after", "3")
	// /healthz, polled every second from here on: it must say 503 while commits fail.
	sawStuck, stopPolling := pollHealthzStuck(t, p)
	defer stopPolling()
	testkit.WaitFor(t, time.Minute, "batches waiting on the lock", func() bool {
		p.Alive(t, "before the outage")
		var waiting int
		_ = d.db.QueryRow(t.Context(), `select count(*) from pg_stat_activity
			where datname = current_database() and wait_event_type = 'Lock' and query like '%insert into booking_events (%'`).Scan(&waiting)
		return waiting >= 4
	})
	st.stopKafka(t, syscall.SIGTERM)
	down := time.Now()
	t.Logf("broker stopped with 4 batches waiting on the table lock")
	time.Sleep(15 * time.Second)
	if err := lock.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	for time.Since(down) < outage {
		p.Alive(t, "during the broker outage")
		time.Sleep(time.Second)
	}
	storedDuringOutage := count(t, d.db, "booking_events")
	st.up(t)
	t.Logf("broker down %v; %d rows stored meanwhile; /healthz during the outage: %v",
		time.Since(down).Round(time.Second), storedDuringOutage, sawStuck.Load())
	testkit.WaitFor(t, 5*time.Minute, "every event stored", func() bool {
		p.Alive(t, "after the broker came back")
		return count(t, d.db, "booking_events") >= n
	})
	testkit.WaitFor(t, 3*time.Minute, "offsets committed to the end", func() bool {
		p.Alive(t, "after the broker came back")
		return d.atEnd(t)
	})
	stopPolling()
	code, _ := p.healthz()
	commitFailures := len(p.Logs.Lines("offset commit failed"))
	for _, l := range append(p.Logs.Lines("offset commit"), p.Logs.Lines("stuck")...) {
		t.Logf("consumer: %.300s", l)
	}
	p.Stop(t, 45*time.Second)
	rows := count(t, d.db, "booking_events")
	t.Logf("after the outage: %d rows (want %d), %d offset commit failures retried, /healthz %d, no restart", rows, n, commitFailures, code)
	if rows != n {
		t.Errorf("rows = %d, want %d", rows, n)
	}
	if commitFailures == 0 {
		t.Errorf("no offset commit failed during a %v outage with batches in flight: the scenario did not bite", outage)
	}
	if code != http.StatusOK || sawStuck.Load() == nil {
		t.Errorf("/healthz = %d after recovery (want 200); 503 naming the offset commit during the outage: %v (want it)",
			code, sawStuck.Load())
	}
	d.checkCommitted(t)
}

// lockBookingEvents locks booking_events (ACCESS EXCLUSIVE) in a transaction of its own
// connection, closed when the test ends; rolling the transaction back releases it.
func lockBookingEvents(t *testing.T, dbURL string) pgx.Tx {
	t.Helper()
	lockConn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lockConn.Close(context.WithoutCancel(t.Context())) })
	lock, err := lockConn.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(t.Context(), "lock table booking_events in access exclusive mode"); err != nil {
		t.Fatal(err)
	}
	return lock
}

// pollHealthzStuck polls p's /healthz every second until stop and keeps the first body of a 503
// that names the offset commit.
func pollHealthzStuck(t *testing.T, p *consumerProc) (sawStuck *atomic.Value, stop context.CancelFunc) {
	sawStuck = &atomic.Value{}
	pollCtx, stop := context.WithCancel(t.Context())
	go func() {
		for pollCtx.Err() == nil {
			if code, body := p.healthz(); code == http.StatusServiceUnavailable && strings.Contains(body, "offset commit") {
				sawStuck.CompareAndSwap(nil, body)
			}
			time.Sleep(time.Second)
		}
	}()
	return sawStuck, stop
}

// TestLargeMessagesMemoryBound: CHAOS_LARGE (1,000) junk messages of 900 KB on a topic that allows
// 1.1 MB messages, drained by the binary with its defaults: every one is dead-lettered as a 4 KiB
// prefix with its length and SHA-256, and the binary's peak RSS stays within the documented bound
// (internal/consumer: (inflight+2) × max-batch-bytes × 3 + (queue-capacity + partitions) ×
// max.message.bytes of data, ~108 MiB with the defaults, plus ~40 MB of runtime: 150 MB).
func TestLargeMessagesMemoryBound(t *testing.T) {
	stack(t)
	n := testkit.EnvInt(t, "CHAOS_LARGE", 1000)
	addr := kafkatest.Bootstrap(t)
	const partitions = 3
	topic := kafkatest.Name(t, "large")
	if err := kafkabus.CreateTopicOn(t.Context(), []string{addr}, topic, partitions, map[string]string{"max.message.bytes": "1100000"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), addr, topic) })
	wctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := kafkabus.WaitForTopic(wctx, []string{addr}, topic, nil); err != nil {
		t.Fatal(err)
	}
	db, dbURL := storetest.NewDBURL(t)

	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, Balancer: &kafka.RoundRobin{}, RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, BatchSize: 1, BatchBytes: 1_100_000, Transport: &kafka.Transport{DialTimeout: 5 * time.Second}}
	r := rand.New(rand.NewPCG(5, 6))
	value := make([]byte, 900<<10)
	for i := range value {
		value[i] = byte(r.UintN(256))
	}
	pctx, pcancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer pcancel()
	for i := range n {
		binary.BigEndian.PutUint64(value, uint64(i))
		if err := w.WriteMessages(pctx, kafka.Message{Key: []byte(fmt.Sprint("junk-", i)), Value: value}); err != nil {
			t.Fatalf("produce large message %d: %.300v", i, err)
		}
	}
	_ = w.Close()

	p := startBinary(t, dbURL, addr, topic, kafkatest.Name(t, "large"))
	start := time.Now()
	testkit.WaitFor(t, 10*time.Minute, "every message dead-lettered", func() bool {
		p.Alive(t, "while draining")
		return count(t, db, "booking_events_dead") >= n
	})
	took := time.Since(start)
	hwm := p.peakRSSMB(t)
	p.Stop(t, 45*time.Second)
	var maxRaw, withHash int
	if err := db.QueryRow(t.Context(), `select max(length(raw_value)), count(*) filter (where error like '%sha256 %')
		from booking_events_dead`).Scan(&maxRaw, &withHash); err != nil {
		t.Fatal(err)
	}
	const boundMB = 150
	t.Logf("%d messages of 900 KB: dead-lettered in %v, peak RSS %.1f MB (bound %d MB), raw_value at most %d bytes, %d with length and sha256",
		n, took.Round(time.Millisecond), hwm, boundMB, maxRaw, withHash)
	if hwm > boundMB {
		t.Errorf("peak RSS %.1f MB exceeds the documented bound of %d MB", hwm, boundMB)
	}
	if maxRaw != 4096 || withHash != n {
		t.Errorf("raw_value up to %d bytes, %d of %d errors with the sha256; want 4096 and all", maxRaw, withHash, n)
	}
}
