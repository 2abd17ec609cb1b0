package consumer_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// Tests against the running stack (compose/dev/stack up): each has its own database, topic and
// consumer group. Every commit the loop makes is checked against the database first
// (checkedReader): offsets are never ahead of rows.

// TestWalkingSkeleton is the thinnest slice through the real parts: events go through the
// crawler's production path (a spool, sent by kafkabus.SpoolPublisher with acks from all
// replicas) to the stack's Kafka broker, a consumer group (consumer.Run) stores them in
// PostgreSQL, and they are read back: every event once, byte for byte as published.
func TestWalkingSkeleton(t *testing.T) {
	t.Parallel()
	addr, topic, db := onStack(t, 3)

	evs := testEvents(300, "skeleton")
	pub := kafkatest.NewSpooled(t, kafkabus.PublisherConfig{
		Brokers: []string{addr}, Topic: topic, Logger: testkit.Logger(t, slog.LevelInfo),
	})
	pub.PublishAll(evs)
	if err := pub.Close(t.Context()); err != nil {
		t.Fatalf("publisher close: %v", err)
	}
	st := pub.Stats()
	if st.Published != int64(len(evs)) || st.Failed != 0 || st.Queued != 0 {
		t.Fatalf("publisher stats %+v, want all %d published", st, len(evs))
	}

	c := consumertest.Start(t, t.Context(), newChecked(t, addr, topic, kafkatest.Name(t, "g"), db), store.New(db), consumer.Config{BatchSize: 100})
	testkit.WaitFor(t, 30*time.Second, "every event stored", func() bool { return c.Metrics.Inserted.Load() >= int64(len(evs)) })
	c.Stop(t)

	var buf bytes.Buffer
	n, err := store.New(db).Export(t.Context(), &buf, store.ExportFilter{})
	if err != nil || n != len(evs) {
		t.Fatalf("export: %d events, err %v; want %d", n, err, len(evs))
	}
	want := map[string]events.Event{}
	for _, e := range evs {
		want[e.EventID.String()] = e
	}
	dec := json.NewDecoder(&buf)
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		got, err := events.Decode(raw)
		if err != nil {
			t.Fatalf("stored payload does not decode: %v", err)
		}
		w, ok := want[got.EventID.String()]
		if !ok {
			t.Fatalf("stored an event that was never published: %s", got.EventID)
		}
		delete(want, got.EventID.String())
		wb, _ := events.Encode(w)
		gb, _ := events.Encode(got)
		if !bytes.Equal(wb, gb) {
			t.Errorf("event %s changed on the way:\npublished %s\nstored    %s", got.EventID, wb, gb)
		}
	}
	if len(want) != 0 {
		t.Fatalf("%d published events were not stored", len(want))
	}
}

func TestRepublishedEventsAreStoredOnce(t *testing.T) {
	t.Parallel()
	addr, topic, db := onStack(t, 3)
	msgs := kafkatest.Encode(t, testEvents(1000, "rep"))
	for range 3 {
		kafkatest.Produce(t, addr, topic, msgs)
	}
	r := newChecked(t, addr, topic, kafkatest.Name(t, "g"), db)
	c := consumertest.Start(t, t.Context(), r, store.New(db), consumer.Config{BatchSize: 1000})
	m := c.Metrics
	testkit.WaitFor(t, 30*time.Second, "3000 messages consumed", func() bool { return m.Consumed.Load() >= 3000 })
	c.Stop(t)

	if n := countRows(t, db, "booking_events"); n != 1000 {
		t.Errorf("booking_events = %d rows, want 1000", n)
	}
	if ins, dup := m.Inserted.Load(), m.Duplicates.Load(); ins != 1000 || dup != 2000 {
		t.Errorf("inserted %d, duplicates %d; want 1000 and 2000", ins, dup)
	}
	if _, committed := r.stats(); committed != 3000 {
		t.Errorf("committed %d messages, want 3000", committed)
	}
	t.Logf("3000 messages in %d batches", m.Batches.Load())
}

func TestDatabaseOutageRetriesWithoutCommittingAndLosesNothing(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	direct, dbURL := storetest.NewDBURL(t)

	px := newProxy(t, dbURL)
	pool, err := pgxpool.New(t.Context(), px.url)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	first, second := kafkatest.Encode(t, testEvents(500, "before")), kafkatest.Encode(t, testEvents(500, "during"))
	kafkatest.Produce(t, addr, topic, first)
	r := newChecked(t, addr, topic, kafkatest.Name(t, "g"), direct)
	c := consumertest.Start(t, t.Context(), r, store.New(pool), consumer.Config{BatchSize: 100})
	m := c.Metrics
	testkit.WaitFor(t, 30*time.Second, "the first 500 rows", func() bool { return countRows(t, direct, "booking_events") == 500 })

	px.cut() // every connection through the proxy dies; new ones are refused
	kafkatest.Produce(t, addr, topic, second)
	// Once the first retry happened the loop is stuck on the failed batch: from then on, no commit.
	testkit.WaitFor(t, 30*time.Second, "the first retry", func() bool { return m.Retries.Load() >= 1 })
	commitsBefore, _ := r.stats()
	testkit.WaitFor(t, 30*time.Second, "5 retries", func() bool { return m.Retries.Load() >= 5 })
	if n := countRows(t, direct, "booking_events"); n != 500 {
		t.Errorf("rows grew to %d while the database was unreachable", n)
	}
	if commits, _ := r.stats(); commits != commitsBefore {
		t.Errorf("%d offset commits while the database was unreachable", commits-commitsBefore)
	}
	px.restore()
	testkit.WaitFor(t, 30*time.Second, "all 1000 rows", func() bool { return countRows(t, direct, "booking_events") == 1000 })
	testkit.WaitFor(t, 10*time.Second, "1000 messages committed", func() bool { _, n := r.stats(); return n == 1000 })
	c.Stop(t)
	t.Logf("retries during the outage: %d", m.Retries.Load())
}

func TestRebalanceMidStreamLosesNothing(t *testing.T) {
	t.Parallel()
	addr, topic, db := onStack(t, 4)
	group := kafkatest.Name(t, "g")
	const total = 3000
	evs := kafkatest.Encode(t, testEvents(total, "rebal"))
	kafkatest.Produce(t, addr, topic, evs[:total/2])

	s := slowStore{store.New(db), 30 * time.Millisecond} // keep A busy long enough for B to join mid-stream
	cA := consumertest.Start(t, t.Context(), newChecked(t, addr, topic, group, db), s, consumer.Config{BatchSize: 50})
	testkit.WaitFor(t, 30*time.Second, "A to store 300 rows", func() bool { return countRows(t, db, "booking_events") >= 300 })

	cB := consumertest.Start(t, t.Context(), newChecked(t, addr, topic, group, db), s, consumer.Config{BatchSize: 50})
	kafkatest.Produce(t, addr, topic, evs[total/2:])
	testkit.WaitFor(t, 40*time.Second, "all rows", func() bool { return countRows(t, db, "booking_events") == total })
	cA.Stop(t)
	cB.Stop(t)
	mA, mB := cA.Metrics, cB.Metrics

	if n := countRows(t, db, "booking_events"); n != total {
		t.Errorf("booking_events = %d, want %d", n, total)
	}
	if mB.Consumed.Load() == 0 {
		t.Error("B consumed nothing: no rebalance happened")
	}
	t.Logf("A consumed %d (inserted %d), B consumed %d (inserted %d); redelivered duplicates %d",
		mA.Consumed.Load(), mA.Inserted.Load(), mB.Consumed.Load(), mB.Inserted.Load(),
		mA.Duplicates.Load()+mB.Duplicates.Load())
}

func TestCrashBetweenDatabaseCommitAndOffsetCommitReplaysHarmlessly(t *testing.T) {
	t.Parallel()
	addr, topic, db := onStack(t, 1)
	group := kafkatest.Name(t, "g")
	kafkatest.Produce(t, addr, topic, kafkatest.Encode(t, testEvents(500, "crash")))

	// First life: the third batch is stored, then the process "dies" before its offset commit.
	ctx, crash := context.WithCancel(t.Context())
	r1 := newChecked(t, addr, topic, group, db)
	r1.beforeCommit = func(n int) error {
		if n >= 3 { // dead: no commit gets out any more
			crash()
			return errors.New("killed")
		}
		return nil
	}
	c1 := consumertest.Start(t, ctx, r1, store.New(db), consumer.Config{BatchSize: 100})
	testkit.Recv(t, ctx.Done(), 30*time.Second, "the third commit")
	c1.Stop(t)
	consumertest.Close(t, r1.r)
	// With DefaultInflight 2, batches four and five may be in the database while batch three's
	// offsets are being committed; on the way down they may be stored too, never committed.
	stored := countRows(t, db, "booking_events")
	if stored < 300 || stored > 500 || stored%100 != 0 {
		t.Fatalf("after the crash: %d rows, want 300, 400 or 500 (three to five whole batches stored, two committed)", stored)
	}

	// Second life: the same group resumes at offset 200 and replays batch three.
	c2 := consumertest.Start(t, t.Context(), newChecked(t, addr, topic, group, db), store.New(db), consumer.Config{BatchSize: 100})
	m2 := c2.Metrics
	testkit.WaitFor(t, 30*time.Second, "the rest consumed", func() bool { return m2.Consumed.Load() >= 300 })
	c2.Stop(t)
	if n := countRows(t, db, "booking_events"); n != 500 {
		t.Errorf("booking_events = %d, want 500", n)
	}
	if c, d := m2.Consumed.Load(), m2.Duplicates.Load(); c != 300 || d != int64(stored-200) {
		t.Errorf("second life consumed %d with %d duplicates; want 300 and %d (the batches stored but not committed)", c, d, stored-200)
	}
}

// slowStore delays every Ingest.
type slowStore struct {
	s     *store.Store
	delay time.Duration
}

func (s slowStore) Ingest(ctx context.Context, b []store.Message) (store.Result, error) {
	time.Sleep(s.delay)
	return s.s.Ingest(ctx, b)
}

// proxy is a TCP proxy in front of PostgreSQL that the test can cut.
type proxy struct {
	url    string
	target string
	mu     sync.Mutex
	down   bool
	conns  map[net.Conn]bool
}

func newProxy(t *testing.T, dbURL string) *proxy {
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	p := &proxy{target: u.Host, conns: map[net.Conn]bool{}}
	u.Host = ln.Addr().String()
	p.url = u.String()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) serve(c net.Conn) {
	if p.isDown() {
		c.Close()
		return
	}
	up, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[up] = true, true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(up, c); up.Close(); c.Close() }()
	_, _ = io.Copy(c, up)
	c.Close()
	up.Close()
}

func (p *proxy) isDown() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.down
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *proxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}
