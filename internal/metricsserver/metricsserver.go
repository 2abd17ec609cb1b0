// Package metricsserver is the one metrics and health server of both commands: GET /metrics (a
// Prometheus registry) and GET /healthz (the command's own check) on one listener, with header
// timeouts, shut down when its context ends. Its serve loop, Run, serves the simulated booking
// site (crawler/sitesim) too.
package metricsserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ShutdownTimeout bounds how long Serve waits for in-flight requests once its context ends.
const ShutdownTimeout = 5 * time.Second

// Handler serves GET /metrics from reg and GET /healthz by healthz.
func Handler(reg *prometheus.Registry, healthz http.HandlerFunc) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", healthz)
	return mux
}

// Serve serves h on ln until ctx is done, then shuts down within ShutdownTimeout. It returns nil
// after a clean shutdown. Requests run under ctx, so its end ends them too.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, logger *slog.Logger) error {
	logger.InfoContext(ctx, "serving /metrics and /healthz", "addr", ln.Addr().String())
	return Run(ctx, ln, h, "metrics")
}

// Run is the serve loop under Serve, for any handler (the simulated booking site's too): it
// serves h on ln with a header timeout until ctx is done, then shuts down within
// ShutdownTimeout, and returns nil after a clean shutdown. Requests run under ctx, so its end
// ends them too. what names the server in its errors.
func Run(ctx context.Context, ln net.Listener, h http.Handler, what string) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s on %s: %w", what, ln.Addr(), err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		return fmt.Errorf("shut down %s server: %w", what, err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s on %s: %w", what, ln.Addr(), err)
	}
	return nil
}

// Start listens on addr and serves h there in the background (see Serve) until stop is called or
// ctx is done; stop waits for the shutdown and returns Serve's error.
func Start(ctx context.Context, addr string, h http.Handler, logger *slog.Logger) (stop func() error, err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for metrics on %s: %w", addr, err)
	}
	logger.InfoContext(ctx, "serving /metrics and /healthz", "addr", ln.Addr().String())
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- Run(sctx, ln, h, "metrics") }()
	return func() error {
		cancel()
		return <-done
	}, nil
}
