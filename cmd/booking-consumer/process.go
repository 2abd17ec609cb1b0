package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/internal/metricsserver"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// consumerProcess is the frame of a consuming subcommand (`run`, `notify`): its Prometheus
// registry (with the Go and process collectors), /metrics and /healthz, the start-up and the
// consume loop. /healthz answers from the start: 503 "starting: waiting for ..." until the loop runs.
type consumerProcess struct {
	logger *slog.Logger
	reg    *prometheus.Registry
	health *consumer.Health
	alive  atomic.Bool                  // the consume loop runs (or has yet to start)
	db     atomic.Pointer[pgxpool.Pool] // for /healthz, once open
	// ackedReplicas is booking_consumer_topic_acked_replicas{topic}, set at start-up.
	ackedReplicas *prometheus.GaugeVec
}

func newConsumerProcess(logger *slog.Logger) *consumerProcess {
	p := &consumerProcess{logger: logger, reg: prometheus.NewRegistry(), health: &consumer.Health{}}
	p.ackedReplicas = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "booking_consumer_topic_acked_replicas",
		Help: "Nodes an acknowledged (acks=all) write of the topic is on at least, as found at start-up: its replicas, or its min.insync.replicas when lower. Below 2 on a cluster, one node's loss loses acknowledged events."},
		[]string{"topic"})
	p.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), p.ackedReplicas)
	p.alive.Store(true)
	p.health.Set(startingKey, "starting: connecting to PostgreSQL")
	return p
}

// start checks the database URL (a typo: no use waiting), serves /metrics and /healthz on
// metricsAddr ("" = off), then runs startUp: PostgreSQL or Kafka down at start-up waits and
// retries (logged, /healthz 503) instead of exiting. stop closes the pool, then the server.
func (p *consumerProcess) start(ctx context.Context, metricsAddr string, cfg startUpConfig) (pool *pgxpool.Pool, stop func(), err error) {
	if _, err := cli.ParseDatabaseURL(cfg.databaseURL); err != nil {
		return nil, nil, fmt.Errorf("invalid database URL: %w", err)
	}
	stopHTTP := func() {}
	if metricsAddr != "" {
		if stopHTTP, err = serveMetrics(ctx, p.logger, metricsAddr, p.reg, &p.db, &p.alive, p.health); err != nil {
			return nil, nil, err
		}
	}
	cfg.policy.observed = func(r kafkabus.TopicReplication) {
		if n := r.AckedReplicas(); n > 0 {
			p.ackedReplicas.WithLabelValues(r.Topic).Set(float64(n))
		}
	}
	if pool, err = startUp(ctx, p.logger, p.health, &p.db, cfg); err != nil {
		stopHTTP()
		return nil, nil, err
	}
	p.health.Clear(startingKey)
	return pool, func() {
		pool.Close()
		stopHTTP()
	}, nil
}

// ingester is what the consume loop writes batches to (*store.Store, *pgclaims.Claimer).
type ingester interface {
	Ingest(ctx context.Context, batch []store.Message) (store.Result, error)
}

// consume runs consumer.Run, with the process's health, logger and metrics, over a reader with
// the production group reader config of opts, into s, until ctx ends. Then /healthz turns 503,
// stopped runs (when not nil) and the reader is closed.
func (p *consumerProcess) consume(ctx context.Context, opts kafkabus.GroupReaderOptions, s ingester,
	cfg consumer.Config, stopped func()) error {
	opts.Logger = p.logger
	r, err := kafkabus.NewGroupReader(opts)
	if err != nil {
		return err
	}
	cfg.Health, cfg.Logger, cfg.Metrics = p.health, p.logger, consumer.NewPrometheus(p.reg)
	err = consumer.Run(ctx, r, s, cfg)
	p.alive.Store(false)
	if stopped != nil {
		stopped()
	}
	closeReader(p.logger, r)
	return err
}

// closeReader closes r, giving up after closeTimeout: the process is exiting anyway.
func closeReader(logger *slog.Logger, r *kafkabus.GroupReader) {
	done := make(chan error, 1)
	go func() { done <- r.Close() }()
	select {
	case err := <-done:
		if err != nil {
			logger.Warn("close kafka reader", "err", err)
		}
	case <-time.After(closeTimeout):
		logger.Warn("kafka reader did not close in time; exiting anyway", "timeout", closeTimeout.String())
	}
}

// serveMetrics serves /metrics and /healthz on addr until the returned stop is called.
// /healthz is 200 when the database answers a ping within 2 s, the consume loop is running and
// health reports no problem (a batch or the offset commit stuck); otherwise 503 with the reason.
func serveMetrics(ctx context.Context, logger *slog.Logger, addr string, reg *prometheus.Registry,
	db *atomic.Pointer[pgxpool.Pool], alive *atomic.Bool, health *consumer.Health) (stop func(), err error) {
	h := metricsserver.Handler(reg, func(w http.ResponseWriter, r *http.Request) {
		pctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if !alive.Load() {
			http.Error(w, "consume loop stopped", http.StatusServiceUnavailable)
			return
		}
		if problems := health.String(); problems != "" {
			http.Error(w, problems, http.StatusServiceUnavailable)
			return
		}
		if pool := db.Load(); pool == nil {
			http.Error(w, "starting: no database connection yet", http.StatusServiceUnavailable)
			return
		} else if err := pool.Ping(pctx); err != nil {
			http.Error(w, "database: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	// It serves through the consumer's drain after SIGTERM, until stop.
	stopServer, err := metricsserver.Start(context.WithoutCancel(ctx), addr, h, logger)
	if err != nil {
		return nil, err
	}
	return func() {
		if err := stopServer(); err != nil {
			logger.Error("metrics server", "err", err)
		}
	}, nil
}
