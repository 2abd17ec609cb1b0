package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestHealthzKafkaWhileEventsAreNotDelivered: with the broker unreachable, the crawler's
// /healthz must not say ok while the crawl's events go undelivered: checks.kafka answers 503 once
// the oldest unsent event is older than KAFKA_UNSENT_ALARM_AFTER, naming the cause.
func TestHealthzKafkaWhileEventsAreNotDelivered(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(sitesim.New(sitesim.Config{Seed: 5, TeeTimesPerDay: 4, DaysAhead: 1}))
	t.Cleanup(srv.Close)
	addr := testkit.FreeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"run", "--schedule", "@every 1s", "--metrics-addr", addr, "--state-dir", t.TempDir(),
			"--sites", sitesFile(t, srv.URL)},
			env(map[string]string{"LOG_LEVEL": "error", "KAFKA_BOOTSTRAP": "127.0.0.1:1", "KAFKA_UNSENT_ALARM_AFTER": "1ms"}),
			&bytes.Buffer{}, &bytes.Buffer{})
	}()
	var body string
	var code int
	testkit.WaitForf(t, 30*time.Second, func() string { return "/healthz 503 naming kafka; last: " + body },
		func() bool {
			resp, err := http.Get("http://" + addr + "/healthz")
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			body, code = string(b), resp.StatusCode
			return code == http.StatusServiceUnavailable && strings.Contains(body, `"kafka"`)
		})
	t.Logf("/healthz %d: %s", code, body)
	if !strings.Contains(body, "unreachable") {
		t.Errorf("/healthz does not name the cause: %s", body)
	}
	cancel()
	testkit.NoErr(t, errc, 20*time.Second, "run after cancel")
}
