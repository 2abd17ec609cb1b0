package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestHealthzKafkaWhileEventsAreNotDelivered: with the broker unreachable, the crawler's
// /healthz must not say ok while the crawl's events go undelivered: checks.kafka answers 503 once
// the oldest unsent event is older than KAFKA_UNSENT_ALARM_AFTER, naming the cause.
func TestHealthzKafkaWhileEventsAreNotDelivered(t *testing.T) {
	t.Parallel()
	c := startRun(t, t.TempDir(), map[string]string{"LOG_LEVEL": "error", "KAFKA_BOOTSTRAP": "127.0.0.1:1", "KAFKA_UNSENT_ALARM_AFTER": "1ms"})
	var body string
	var code int
	testkit.WaitForf(t, 30*time.Second, func() string { return "/healthz 503 naming kafka; last: " + body },
		func() bool {
			code, body = c.healthz()
			return code == http.StatusServiceUnavailable && strings.Contains(body, `"kafka"`)
		})
	t.Logf("/healthz %d: %s", code, body)
	if !strings.Contains(body, "unreachable") {
		t.Errorf("/healthz does not name the cause: %s", body)
	}
	c.stop(t)
}

// runningCrawler is `crawler run` (1 s schedule, /healthz on addr) against a small simulated
// site, in this process.
type runningCrawler struct {
	addr   string
	logs   *testkit.SyncBuffer
	cancel context.CancelFunc
	errc   chan error
}

func startRun(t *testing.T, state string, vars map[string]string, args ...string) *runningCrawler {
	t.Helper()
	srv := httptest.NewServer(sitesim.New(sitesim.Config{Seed: 5, TeeTimesPerDay: 4, DaysAhead: 1}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(t.Context())
	t.Cleanup(cancel)
	c := &runningCrawler{addr: testkit.FreeAddr(t), logs: &testkit.SyncBuffer{}, cancel: cancel, errc: make(chan error, 1)}
	args = append([]string{"run", "--schedule", "@every 1s", "--metrics-addr", c.addr, "--state-dir", state,
		"--sites", sitesFile(t, srv.URL)}, args...)
	go func() { c.errc <- run(ctx, args, env(vars), &bytes.Buffer{}, c.logs) }()
	return c
}

func (c *runningCrawler) healthz() (int, string) {
	resp, err := http.Get("http://" + c.addr + "/healthz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (c *runningCrawler) stop(t *testing.T) {
	t.Helper()
	c.cancel()
	testkit.NoErr(t, c.errc, 20*time.Second, "run after cancel")
}

// TestDiskFullStateDir: the state dir's disk is full (a small tmpfs, filled). The site crawl
// fails before its save, the log and /healthz say disk full, nothing reaches the events file;
// once space returns the next crawl derives the same events again and the file gets each once.
func TestDiskFullStateDir(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	t.Parallel()
	state := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", state).CombinedOutput(); err != nil {
		t.Fatalf("mount tmpfs: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", state).Run() })
	filler := filepath.Join(state, "filler")
	_ = exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=4k").Run() // ends at ENOSPC
	out := filepath.Join(t.TempDir(), "events.jsonl")
	c := startRun(t, state, map[string]string{"LOG_LEVEL": "warn", "LOG_FORMAT": "text"}, "--events-out", out)
	logs, healthz := c.logs, c.healthz
	var body string
	testkit.WaitForf(t, 30*time.Second, func() string { return "/healthz saying disk full; last: " + body }, func() bool {
		code, b := healthz()
		body = b
		return code == http.StatusServiceUnavailable && strings.Contains(b, "disk full")
	})
	t.Logf("disk full: /healthz %s", body)
	if !strings.Contains(logs.String(), "site crawl failed") || !strings.Contains(logs.String(), "disk full") {
		t.Errorf("the log does not say disk full:\n%s", tail(logs.String()))
	}
	if evs := eventstest.ReadEvents(t, out); len(evs) != 0 {
		t.Errorf("%d events in the file while no snapshot could be saved", len(evs))
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	testkit.WaitForf(t, 30*time.Second, func() string { return "a saved crawl after space returned; last: " + body }, func() bool {
		code, b := healthz()
		body = b
		return code == http.StatusOK && len(eventstest.ReadEvents(t, out)) > 0
	})
	c.stop(t)
	ids := map[string]int{}
	for _, e := range eventstest.ReadEvents(t, out) {
		ids[e.EventID.String()]++
	}
	for id, n := range ids {
		if n != 1 {
			t.Errorf("event %s %d times in the file", id, n)
		}
	}
	t.Logf("after space returned: %d events in the file, each once", len(ids))
}
