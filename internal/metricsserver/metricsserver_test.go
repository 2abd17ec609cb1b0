package metricsserver_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/golfcrawler/golf-crawler/internal/metricsserver"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestServeMetricsAndHealthz: one listener answers /metrics from the registry and /healthz from
// the command's check, says so in the log, and its end leaves the port closed.
func TestServeMetricsAndHealthz(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "golf_test_total", Help: "test"})
	reg.MustRegister(c)
	c.Add(3)
	var sick atomic.Bool
	h := metricsserver.Handler(reg, func(w http.ResponseWriter, _ *http.Request) {
		if sick.Load() {
			http.Error(w, "sick", http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	var logs testkit.SyncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	stop, err := metricsserver.Start(context.Background(), "127.0.0.1:0", h, logger)
	if err != nil {
		t.Fatal(err)
	}
	addr := ""
	for _, f := range strings.Fields(logs.String()) {
		if a, ok := strings.CutPrefix(f, "addr="); ok {
			addr = a
		}
	}
	if !strings.Contains(logs.String(), "serving /metrics and /healthz") || addr == "" {
		t.Fatalf("no serving log line with the address: %q", logs.String())
	}
	if code, body := testkit.Get(t, "http://"+addr+"/metrics"); code != http.StatusOK || !strings.Contains(body, "golf_test_total 3") {
		t.Errorf("/metrics = %d %q; want 200 with golf_test_total 3", code, body)
	}
	if code, body := testkit.Get(t, "http://"+addr+"/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz = %d %q; want 200 ok", code, body)
	}
	sick.Store(true)
	if code, body := testkit.Get(t, "http://"+addr+"/healthz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "sick") {
		t.Errorf("/healthz when unhealthy = %d %q; want 503 sick", code, body)
	}
	if code, _ := testkit.Get(t, "http://"+addr+"/other"); code != http.StatusNotFound {
		t.Errorf("/other = %d; want 404", code)
	}
	if err := stop(); err != nil {
		t.Fatalf("stop = %v, want a clean shutdown", err)
	}
	if conn, err := net.Dial("tcp", addr); err == nil {
		conn.Close()
		t.Fatal("the port still accepts connections after stop")
	}
}

// TestStartBusyAddress: a taken address is an error naming it, not a server.
func TestStartBusyAddress(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = metricsserver.Start(context.Background(), ln.Addr().String(), http.NotFoundHandler(), slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Fatalf("Start on a busy address = %v; want an error naming it", err)
	}
}
