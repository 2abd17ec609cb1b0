package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/cmd/booking-consumer/internal/dashboard"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/migrations"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/ingest"
	"github.com/golfcrawler/golf-crawler/views"
)

// Defaults of the run subcommand.
const (
	defaultTopic       = "booking-events"
	defaultGroup       = "booking-consumer"
	defaultMetricsAddr = "127.0.0.1:9464"
	defaultPartitions  = 3
	// closeTimeout bounds Reader.Close: it blocks ~10 s on a black-holed broker (notes §3).
	closeTimeout = 10 * time.Second
	// sessionTimeout is how long the group waits for a silent member before giving its
	// partitions to others. After a crash (no LeaveGroup) a restarted consumer waits this long,
	// so lower means faster takeover; too low and a GC or network pause longer than it causes a
	// needless rebalance (and duplicate, harmless redeliveries). 10 s with 1 s heartbeats
	// tolerates ~9 missed heartbeats; a clean shutdown leaves the group at once either way.
	sessionTimeout    = 10 * time.Second
	heartbeatInterval = time.Second
	// maxInflight bounds --inflight: each batch in flight holds a connection and a batch of memory.
	maxInflight = 16
)

type consumeConfig struct {
	databaseURL string
	brokers     []string
	topic       string
	group       string
	noMigrate   bool
	batchSize   int
	batchWait   time.Duration
	inflight    int
	from        string
	forceReset  bool
	metricsAddr string
	httpAddr    string // the dashboard inside run (serve.go); "" = off
	shutdown    time.Duration
	partitions  int
	dashAuth    dashboard.Auth
}

func consumeCmd(ctx context.Context, env environment, args []string) error {
	fs := env.newFlagSet("run", "Consume booking events from Kafka into PostgreSQL until SIGINT or SIGTERM.\n"+
		"Migrations and views are applied first. Offsets are committed only after the database commit;\n"+
		"redeliveries are harmless (ON CONFLICT (event_id) DO NOTHING). Poison messages go to\n"+
		"booking_events_dead. Exit status 0 after a clean stop.")
	var cfg consumeConfig
	var bootstrap string
	fs.StringVar(&cfg.databaseURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	fs.StringVar(&bootstrap, "bootstrap", "", "comma-separated Kafka brokers (default $KAFKA_BOOTSTRAP)")
	fs.StringVar(&cfg.topic, "topic", cli.EnvOr(env.getenv, "KAFKA_TOPIC", defaultTopic), "Kafka topic ($KAFKA_TOPIC)")
	fs.StringVar(&cfg.group, "group", cli.EnvOr(env.getenv, "KAFKA_GROUP", defaultGroup), "Kafka consumer group ($KAFKA_GROUP)")
	fs.BoolVar(&cfg.noMigrate, "no-migrate", false, "skip migrations and view installation at start")
	fs.IntVar(&cfg.batchSize, "batch-size", ingest.DefaultBatchSize, "max messages per database transaction")
	fs.DurationVar(&cfg.batchWait, "batch-wait", ingest.DefaultBatchWait, "how long to fill a batch after its first message")
	fs.IntVar(&cfg.inflight, "inflight", ingest.DefaultInflight, "batches in the database at once, each in its own transaction;\n"+
		"offsets are still committed in order, each batch's after its rows")
	fs.StringVar(&cfg.from, "from", "", "replay: before consuming, set the group's offsets to `earliest|RFC3339-time`: the start of\n"+
		"each partition, or its first message at or after the time; refused if the group has\n"+
		"committed offsets (unless --force-reset) or active members")
	fs.BoolVar(&cfg.forceReset, "force-reset", false, "let --from overwrite the group's committed offsets")
	fs.StringVar(&cfg.metricsAddr, "metrics-addr", cli.EnvOr(env.getenv, "METRICS_ADDR", defaultMetricsAddr),
		"listen address for /metrics and /healthz ($METRICS_ADDR); --metrics-addr= turns it off")
	fs.StringVar(&cfg.httpAddr, "http-addr", "", "also serve the read-only dashboard on this `address` (as `booking-consumer serve`, with the\n"+
		"consumer's metrics on its pipeline page); off by default; not loopback: DASHBOARD_TOKEN or\n"+
		"DASHBOARD_USER/DASHBOARD_PASSWORD is required")
	fs.IntVar(&cfg.partitions, "create-partitions", defaultPartitions,
		"create the topic with this many partitions when it does not exist; 0: never create it")
	fs.DurationVar(&cfg.shutdown, "shutdown-timeout", ingest.DefaultShutdownTimeout, "on SIGTERM, how long the batches in the database may take to finish")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if cfg.databaseURL == "" {
		cfg.databaseURL = strings.TrimSpace(env.getenv("DATABASE_URL"))
	}
	if bootstrap == "" {
		bootstrap = env.getenv("KAFKA_BOOTSTRAP")
	}
	cfg.brokers = splitList(bootstrap)
	cfg.dashAuth = dashboardAuth(env.getenv)
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("%w: run: %w", cli.ErrUsage, err)
	}
	err := consume(ctx, env.logger, cfg)
	if err != nil && ctx.Err() != nil {
		// SIGTERM while connecting, migrating or checking the topic: a clean stop, not a failure.
		env.logger.Info("stopped during start-up", "err", err)
		return nil
	}
	return err
}

func (c consumeConfig) validate() error {
	var errs []error
	if c.databaseURL == "" {
		errs = append(errs, errors.New("DATABASE_URL is not set (or pass --database-url)"))
	}
	if len(c.brokers) == 0 {
		errs = append(errs, errors.New("KAFKA_BOOTSTRAP is not set: give the Kafka brokers as host:port[,host:port] (or pass --bootstrap)"))
	}
	if c.topic == "" || c.group == "" {
		errs = append(errs, errors.New("the topic and the group must not be empty"))
	}
	if c.batchSize < 1 || c.batchSize > 100_000 {
		errs = append(errs, fmt.Errorf("--batch-size %d is out of range 1..100000", c.batchSize))
	}
	if c.batchWait <= 0 {
		errs = append(errs, fmt.Errorf("--batch-wait %v must be positive", c.batchWait))
	}
	if c.inflight < 1 || c.inflight > maxInflight {
		errs = append(errs, fmt.Errorf("--inflight %d is out of range 1..%d", c.inflight, maxInflight))
	}
	if c.forceReset && c.from == "" {
		errs = append(errs, errors.New("--force-reset needs --from"))
	}
	if _, err := parseFrom(c.from); c.from != "" && err != nil {
		errs = append(errs, err)
	}
	if c.httpAddr != "" {
		if err := dashboard.CheckAddr(c.httpAddr, c.dashAuth); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func consume(ctx context.Context, logger *slog.Logger, cfg consumeConfig) error {
	logger.InfoContext(ctx, "booking-consumer starting", "database_url", redact(cfg.databaseURL),
		"brokers", cfg.brokers, "topic", cfg.topic, "group", cfg.group, "batch_size", cfg.batchSize,
		"batch_wait", cfg.batchWait.String(), "inflight", cfg.inflight, "migrate", !cfg.noMigrate, "from", cfg.from)
	conns := int32(cfg.inflight) + 2 // + migrations and /healthz
	if cfg.httpAddr != "" {
		conns += 2 // the dashboard's pages
	}
	pool, err := openDB(ctx, cfg.databaseURL, conns)
	if err != nil {
		return err
	}
	defer pool.Close()
	if !cfg.noMigrate {
		if err := migrate(ctx, pool); err != nil {
			return err
		}
	}
	if err := ensureTopic(ctx, logger, cfg.brokers, cfg.topic, cfg.partitions); err != nil {
		return err
	}
	if cfg.from != "" {
		if err := resetOffsets(ctx, logger, cfg.brokers, cfg.group, cfg.topic, cfg.from, cfg.forceReset); err != nil {
			return err
		}
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	var alive atomic.Bool
	alive.Store(true)
	if cfg.metricsAddr != "" {
		stopHTTP, err := serveMetrics(ctx, logger, cfg.metricsAddr, reg, pool, &alive)
		if err != nil {
			return err
		}
		defer stopHTTP()
	}
	if cfg.httpAddr != "" {
		stop, err := startDashboard(ctx, logger, cfg, pool, reg)
		if err != nil {
			return err
		}
		defer stop()
	}

	r := kafka.NewReader(kafka.ReaderConfig{
		Brokers: cfg.brokers, GroupID: cfg.group, Topic: cfg.topic,
		StartOffset:    kafka.FirstOffset, // a new group reads the topic from its start
		CommitInterval: 0,                 // synchronous: CommitMessages returns the broker's answer
		MinBytes:       1, MaxBytes: 10 << 20, MaxWait: 500 * time.Millisecond, QueueCapacity: 1000,
		HeartbeatInterval: heartbeatInterval, SessionTimeout: sessionTimeout,
		WatchPartitionChanges: true,
		ErrorLogger: kafka.LoggerFunc(func(msg string, a ...any) {
			logger.Warn(fmt.Sprintf(msg, a...), "topic", cfg.topic)
		}),
	})
	err = ingest.Run(ctx, r, store.New(pool), ingest.Config{
		BatchSize: cfg.batchSize, BatchWait: cfg.batchWait, Inflight: cfg.inflight, ShutdownTimeout: cfg.shutdown,
		Logger: logger, Metrics: ingest.NewPrometheus(reg),
	})
	alive.Store(false)
	closeReader(logger, r)
	if err != nil {
		return fmt.Errorf("consume %s: %w", cfg.topic, err)
	}
	return nil
}

// closeReader closes r, giving up after closeTimeout: the process is exiting anyway.
func closeReader(logger *slog.Logger, r *kafka.Reader) {
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
// /healthz is 200 when the database answers a ping within 2 s and the consume loop is running.
func serveMetrics(ctx context.Context, logger *slog.Logger, addr string, reg *prometheus.Registry,
	pool *pgxpool.Pool, alive *atomic.Bool) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for metrics on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		pctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if !alive.Load() {
			http.Error(w, "consume loop stopped", http.StatusServiceUnavailable)
			return
		}
		if err := pool.Ping(pctx); err != nil {
			http.Error(w, "database: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics server", "err", err)
		}
	}()
	logger.InfoContext(ctx, "serving /metrics and /healthz", "addr", ln.Addr().String())
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}

func migrateCmd(ctx context.Context, env environment, args []string) error {
	fs := env.newFlagSet("migrate", "Apply the database migrations (tern, under an advisory lock) and re-install the views, then exit.")
	var dbURL string
	fs.StringVar(&dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	pool, err := openFromEnv(ctx, env, dbURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := migrate(ctx, pool); err != nil {
		return err
	}
	env.logger.InfoContext(ctx, "migrations and views applied")
	return nil
}

// migrate applies the migrations, then the views, on one connection, then builds the
// listing_lifetimes projection if it is missing or was built from other view definitions.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if err := migrations.ApplyPool(ctx, pool); err != nil {
		return err
	}
	c, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire connection for views: %w", err)
	}
	defer c.Release()
	if err := views.Install(ctx, c.Conn()); err != nil {
		return err
	}
	return ensureProjection(ctx, pool)
}

// openFromEnv opens the pool at dbURL, or at $DATABASE_URL when dbURL is empty.
func openFromEnv(ctx context.Context, env environment, dbURL string) (*pgxpool.Pool, error) {
	if dbURL == "" {
		dbURL = strings.TrimSpace(env.getenv("DATABASE_URL"))
	}
	if dbURL == "" {
		return nil, fmt.Errorf("%w: DATABASE_URL is not set (or pass --database-url)", cli.ErrUsage)
	}
	return openDB(ctx, dbURL, 0)
}

// openDB opens a pool with room for at least minConns connections (more if the URL's
// pool_max_conns says so) and checks within 10 s that the database answers.
func openDB(ctx context.Context, dbURL string, minConns int32) (*pgxpool.Pool, error) {
	pcfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("database URL %s: %w", redact(dbURL), err)
	}
	pcfg.MaxConns = max(pcfg.MaxConns, minConns)
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", redact(dbURL), err)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database %s: %w", redact(dbURL), err)
	}
	return pool, nil
}

// redact says where a database URL points (user@host:port/database) without its password, whatever
// its form (cli.DescribeDatabase).
func redact(s string) string {
	return cli.DescribeDatabase(s)
}

// splitList splits a comma-separated list, dropping empty entries (an empty KAFKA_BOOTSTRAP must
// not become kafka-go's implicit localhost:9092).
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
