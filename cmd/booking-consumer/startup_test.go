package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// gate is a TCP forwarder to target on a fixed local port that refuses connections until open:
// a dependency that is down at start-up and comes up later.
type gate struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
}

func newGate(t *testing.T, target string) *gate {
	t.Helper()
	g := &gate{t: t, target: target, addr: testkit.FreeAddr(t)} // refused until open
	t.Cleanup(func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.ln != nil {
			g.ln.Close()
		}
	})
	return g
}

func (g *gate) open() {
	g.t.Helper()
	ln, err := net.Listen("tcp", g.addr)
	if err != nil {
		g.t.Fatalf("open gate on %s: %v", g.addr, err)
	}
	g.mu.Lock()
	g.ln = ln
	g.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", g.target)
				if err != nil {
					return
				}
				defer up.Close()
				go func() { _, _ = io.Copy(up, c); up.Close() }()
				_, _ = io.Copy(c, up)
			}()
		}
	}()
}

// healthz returns /healthz's status and body (0 if it does not answer).
func healthz(addr string) (int, string) {
	c := http.Client{Timeout: 3 * time.Second}
	resp, err := c.Get("http://" + addr + "/healthz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func waitHealthz(t *testing.T, addr string, want int, contains string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, body := healthz(addr)
		if code == want && strings.Contains(body, contains) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz = %d %q; want %d containing %q", code, body, want, contains)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// withHost returns dbURL pointing at addr instead.
func withHost(t *testing.T, dbURL, addr string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}

// A consumer started while PostgreSQL and Kafka are both down waits for them (logged, /healthz
// 503 "starting: waiting for ...") instead of exiting, then consumes as usual (start-up
// was once not retried).
func TestRunWaitsForPostgreSQLAndKafkaAtStartUp(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	pool, dbURL := storetest.NewDBURL(t)
	pg := newGate(t, strings.Split(strings.Split(dbURL, "@")[1], "/")[0])
	kf := newGate(t, addr)
	metrics := testkit.FreeAddr(t)
	topic, group := kafkatest.Name(t, "startup"), kafkatest.Name(t, "g")
	t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), addr, topic) })

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := runCLI(t, ctx, map[string]string{"DATABASE_URL": withHost(t, dbURL, pg.addr),
			"KAFKA_BOOTSTRAP": kf.addr, "METRICS_ADDR": metrics, "LOG_FORMAT": "text"},
			"run", "--topic", topic, "--group", group, "--batch-wait", "20ms")
		done <- err
	}()
	waitHealthz(t, metrics, http.StatusServiceUnavailable, "starting: waiting for PostgreSQL")
	pg.open()
	waitHealthz(t, metrics, http.StatusServiceUnavailable, "starting: waiting for Kafka")
	select {
	case err := <-done:
		t.Fatalf("run ended while Kafka was down: %v", err)
	default:
	}
	kf.open()
	waitHealthz(t, metrics, http.StatusOK, "ok")

	publishEvents(t, addr, topic, 20, "startup", time.Now())
	testkit.WaitForf(t, 60*time.Second, func() string { return fmt.Sprintf("rows = %d, want 20", rows(t, pool)) },
		func() bool { return rows(t, pool) == 20 })
	cancel()
	if err := testkit.Recv(t, done, 30*time.Second, "run"); err != nil {
		t.Fatalf("run = %v after SIGTERM, want nil", err)
	}
}

// SIGTERM while waiting for a dependency at start-up is a clean stop: exit status 0, at once.
func TestRunStopsCleanlyWhileWaitingAtStartUp(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, waitFor string }{{"PostgreSQLDown", "PostgreSQL"}, {"KafkaDown", "Kafka"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, dbURL := storetest.NewDBURL(t)
			if tc.waitFor == "PostgreSQL" {
				dbURL = withHost(t, dbURL, newGate(t, "127.0.0.1:1").addr)
			}
			metrics := testkit.FreeAddr(t)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, _, err := runCLI(t, ctx, map[string]string{"DATABASE_URL": dbURL, "KAFKA_BOOTSTRAP": newGate(t, "127.0.0.1:1").addr,
					"METRICS_ADDR": metrics}, "run", "--topic", kafkatest.Name(t, "t"))
				done <- err
			}()
			waitHealthz(t, metrics, http.StatusServiceUnavailable, "starting: waiting for "+tc.waitFor)
			cancel()
			if err := testkit.Recv(t, done, 10*time.Second, "run after SIGTERM"); err != nil {
				t.Fatalf("run = %v after SIGTERM while waiting for %s, want nil (exit 0)", err, tc.waitFor)
			}
		})
	}
}

// KAFKA_BOOTSTRAP=down,up: topic creation and the --from start offsets use every broker in the
// list, not only the first.
func TestStartUpUsesEveryBootstrapBroker(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	brokers := []string{"127.0.0.1:1", addr}
	topic, group := kafkatest.Name(t, "multi"), kafkatest.Name(t, "g")
	t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), addr, topic) })
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	if err := ensureTopic(t.Context(), logger, brokers, topic, 2, 0, topicPolicy{}); err != nil {
		t.Fatalf("ensureTopic with %v: %v", brokers, err)
	}
	// The broker answers CreateTopics before every partition has a leader: wait, as the
	// consumer's own start-up does, before producing to it.
	if _, err := kafkabus.WaitForTopic(t.Context(), []string{addr}, topic, nil); err != nil {
		t.Fatalf("wait for topic %s: %v", topic, err)
	}
	publishEvents(t, addr, topic, 10, "multi", time.Now())
	if err := kafkabus.ResetOffsets(t.Context(), logger, brokers, group, topic, "earliest", false); err != nil {
		t.Fatalf("ResetOffsets with %v: %v", brokers, err)
	}
	offs, err := kafkabus.StartOffsets(t.Context(), brokers, topic, []int{0, 1}, time.Time{})
	if err != nil || fmt.Sprint(offs) != "map[0:0 1:0]" {
		t.Fatalf("StartOffsets with %v = %v, %v; want both partitions at 0", brokers, offs, err)
	}
}

// /healthz answers 503 with the reason while ingest reports the consumer stuck (an alarmed retry
// past --alarm-after, or offset commits failing), and 200 again once it clears.
func TestHealthzReportsAStuckConsumer(t *testing.T) {
	t.Parallel()
	pool := storetest.NewDB(t)
	var db atomic.Pointer[pgxpool.Pool]
	db.Store(pool)
	var alive atomic.Bool
	alive.Store(true)
	health := &consumer.Health{}
	addr := testkit.FreeAddr(t)
	stop, err := serveMetrics(t.Context(), slog.New(slog.DiscardHandler), addr, prometheus.NewRegistry(), &db, &alive, health)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	waitHealthz(t, addr, http.StatusOK, "ok")
	health.Set("t/0@5", "stuck: insert of batch t/0@5 failed 5 times: sqlstate 42703: column does not exist")
	if code, body := healthz(addr); code != http.StatusServiceUnavailable || !strings.Contains(body, "sqlstate 42703") {
		t.Fatalf("/healthz while stuck = %d %q; want 503 naming the reason", code, body)
	}
	health.Clear("t/0@5")
	if code, body := healthz(addr); code != http.StatusOK {
		t.Fatalf("/healthz after the alarm cleared = %d %q; want 200", code, body)
	}
}
