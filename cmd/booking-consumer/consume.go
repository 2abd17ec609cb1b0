package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/golfcrawler/golf-crawler/cmd/booking-consumer/internal/dashboard"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/internal/metricsserver"
	"github.com/golfcrawler/golf-crawler/internal/retry"
	"github.com/golfcrawler/golf-crawler/migrations"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/views"
)

// Defaults of the run subcommand.
const (
	defaultGroup       = "booking-consumer"
	defaultMetricsAddr = "127.0.0.1:9464"
	defaultPartitions  = 3
	// closeTimeout bounds Reader.Close: it blocks ~10 s on a black-holed broker (measured against kafka-go's Reader).
	closeTimeout = 10 * time.Second
	// maxInflight bounds --inflight: each batch in flight holds a connection and a batch of memory.
	maxInflight = 16
	// defaultQueueCapacity: see kafkabus.DefaultQueueCapacity.
	defaultQueueCapacity = kafkabus.DefaultQueueCapacity
)

// runDefaults are run's consumingFlags defaults.
var runDefaults = consumingDefaults{groupEnv: "KAFKA_GROUP", group: defaultGroup,
	metricsEnv: "METRICS_ADDR", metricsAddr: defaultMetricsAddr,
	fromHelp: "replay: before consuming, set the group's offsets to `earliest|RFC3339-time`: the start of\n" +
		"each partition, or its first message at or after the time; refused if the group has\n" +
		"committed offsets (unless --force-reset) or active members"}

type consumeConfig struct {
	consumingFlags
	batchSize  int
	batchBytes int
	queue      int
	batchWait  time.Duration
	inflight   int
	httpAddr   string // the dashboard inside run (serve.go); "" = off
	shutdown   time.Duration
	alarmAfter int
	dashAuth   dashboard.Auth
}

func consumeCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := newFlagSet(env, "run", "Consume booking events from Kafka into PostgreSQL until SIGINT or SIGTERM.\n"+
		"Migrations and views are applied first. Offsets are committed only after the database commit;\n"+
		"redeliveries are harmless (ON CONFLICT (event_id) DO NOTHING). Poison messages go to\n"+
		"booking_events_dead. Exit status 0 after a clean stop.")
	var cfg consumeConfig
	cfg.define(fs, env.Getenv, runDefaults)
	fs.IntVar(&cfg.batchSize, "batch-size", consumer.DefaultBatchSize, "max messages per database transaction")
	batchBytes := consumer.DefaultMaxBatchBytes
	if v := strings.TrimSpace(env.Getenv("BATCH_MAX_BYTES")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%w: run: BATCH_MAX_BYTES %q is not a whole number of bytes", cli.ErrUsage, v)
		}
		batchBytes = n
	}
	fs.IntVar(&cfg.batchBytes, "max-batch-bytes", batchBytes,
		"max bytes (keys and values) per database transaction ($BATCH_MAX_BYTES); a batch closes at\n"+
			"--batch-size messages or this many bytes, whichever comes first")
	fs.IntVar(&cfg.queue, "queue-capacity", defaultQueueCapacity,
		"messages kafka-go may fetch ahead of the batches (it counts messages, not bytes: each can be\n"+
			"as large as the topic's max.message.bytes)")
	fs.DurationVar(&cfg.batchWait, "batch-wait", consumer.DefaultBatchWait, "how long to fill a batch after its first message")
	fs.IntVar(&cfg.inflight, "inflight", consumer.DefaultInflight, "batches in the database at once, each in its own transaction;\n"+
		"offsets are still committed in order, each batch's after its rows")
	fs.StringVar(&cfg.httpAddr, "http-addr", "", "also serve the read-only dashboard on this `address` (as `booking-consumer serve`, with the\n"+
		"consumer's metrics on its pipeline page); off by default; not loopback: DASHBOARD_TOKEN or\n"+
		"DASHBOARD_USER/DASHBOARD_PASSWORD is required")
	fs.IntVar(&cfg.alarmAfter, "alarm-after", consumer.DefaultAlarmAfter,
		"failed attempts in a row of one batch (for an error that is neither transient nor a row's fault)\n"+
			"or of one offset commit before /healthz answers 503 and booking_consumer_stuck rises")
	fs.DurationVar(&cfg.shutdown, "shutdown-timeout", consumer.DefaultShutdownTimeout, "on SIGTERM, how long the batches in the database may take to finish")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	cfg.fromEnv(env.Getenv)
	cfg.dashAuth = dashboardAuth(env.Getenv)
	if err := cfg.validate(); err != nil {
		return fmt.Errorf("%w: run: %w", cli.ErrUsage, err)
	}
	err := consume(ctx, env.Logger, cfg)
	if stoppedBySignal(ctx, err) {
		// SIGTERM while connecting, migrating or waiting for a dependency: a clean stop.
		env.Logger.Info("stopped during start-up", "err", err)
		return nil
	}
	return err
}

// stoppedBySignal reports whether err is only the signal's cancellation coming back. Any other
// error is reported, even when a signal arrived meanwhile: exit status 0 means a clean stop.
func stoppedBySignal(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && errors.Is(err, context.Canceled)
}

func (c consumeConfig) validate() error {
	errs := c.consumingFlags.validate()
	if c.topic == "" || c.group == "" {
		errs = append(errs, errors.New("the topic and the group must not be empty"))
	}
	if c.batchSize < 1 || c.batchSize > 100_000 {
		errs = append(errs, fmt.Errorf("--batch-size %d is out of range 1..100000", c.batchSize))
	}
	if c.batchBytes < 64<<10 || c.batchBytes > 1<<30 {
		errs = append(errs, fmt.Errorf("--max-batch-bytes %d is out of range 65536..1073741824", c.batchBytes))
	}
	if c.queue < 1 || c.queue > 100_000 {
		errs = append(errs, fmt.Errorf("--queue-capacity %d is out of range 1..100000", c.queue))
	}
	if c.batchWait <= 0 {
		errs = append(errs, fmt.Errorf("--batch-wait %v must be positive", c.batchWait))
	}
	if c.alarmAfter < 1 {
		errs = append(errs, fmt.Errorf("--alarm-after %d must be at least 1", c.alarmAfter))
	}
	if c.inflight < 1 || c.inflight > maxInflight {
		errs = append(errs, fmt.Errorf("--inflight %d is out of range 1..%d", c.inflight, maxInflight))
	}
	if _, err := kafkabus.ParseFrom(c.from); c.from != "" && err != nil {
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
		"max_batch_bytes", cfg.batchBytes, "queue_capacity", cfg.queue,
		"batch_wait", cfg.batchWait.String(), "inflight", cfg.inflight, "migrate", !cfg.noMigrate, "from", cfg.from)
	conns := int32(cfg.inflight) + 2 // + migrations and /healthz
	if cfg.httpAddr != "" {
		conns += 2 // the dashboard's pages
	}
	p := newConsumerProcess(logger)
	pool, stop, err := p.start(ctx, cfg.metricsAddr, cfg.startUpConfig(cfg.group, conns))
	if err != nil {
		return err
	}
	defer stop()
	if cfg.httpAddr != "" {
		stop, err := startDashboard(ctx, logger, cfg, pool, p.reg)
		if err != nil {
			return err
		}
		defer stop()
	}

	err = p.consume(ctx, kafkabus.GroupReaderOptions{
		Brokers: cfg.brokers, Topic: cfg.topic, Group: cfg.group, QueueCapacity: cfg.queue,
	}, store.New(pool), consumer.Config{
		BatchSize: cfg.batchSize, MaxBatchBytes: cfg.batchBytes, BatchWait: cfg.batchWait, Inflight: cfg.inflight,
		ShutdownTimeout: cfg.shutdown, AlarmAfter: cfg.alarmAfter,
	}, nil)
	if err != nil {
		return fmt.Errorf("consume %s: %w", cfg.topic, err)
	}
	return nil
}

// consumerProcess is the frame of a consuming subcommand (`run`, `notify`): its Prometheus
// registry (with the Go and process collectors), /metrics and /healthz, the start-up and the
// consume loop. /healthz answers from the start: 503 "starting: waiting for ..." until the loop runs.
type consumerProcess struct {
	logger *slog.Logger
	reg    *prometheus.Registry
	health *consumer.Health
	alive  atomic.Bool                  // the consume loop runs (or has yet to start)
	db     atomic.Pointer[pgxpool.Pool] // for /healthz, once open
}

func newConsumerProcess(logger *slog.Logger) *consumerProcess {
	p := &consumerProcess{logger: logger, reg: prometheus.NewRegistry(), health: &consumer.Health{}}
	p.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	p.alive.Store(true)
	p.health.Set(startingKey, "starting: connecting to PostgreSQL")
	return p
}

// start checks the database URL (a typo: no use waiting), serves /metrics and /healthz on
// metricsAddr ("" = off), then runs startUp: PostgreSQL or Kafka down at start-up waits and
// retries (logged, /healthz 503) instead of exiting. stop closes the pool, then the server.
func (p *consumerProcess) start(ctx context.Context, metricsAddr string, cfg startUpConfig) (pool *pgxpool.Pool, stop func(), err error) {
	if _, err := pgxpool.ParseConfig(cfg.databaseURL); err != nil {
		return nil, nil, fmt.Errorf("database URL %s: %w", redact(cfg.databaseURL), err)
	}
	stopHTTP := func() {}
	if metricsAddr != "" {
		if stopHTTP, err = serveMetrics(ctx, p.logger, metricsAddr, p.reg, &p.db, &p.alive, p.health); err != nil {
			return nil, nil, err
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

// startingKey names the start-up problem in consumer.Health.
const startingKey = "starting"

// Start-up retries: capped exponential backoff, 0.5 s doubling to 10 s (jittered).
const (
	startBackoffBase = 500 * time.Millisecond
	startBackoffMax  = 10 * time.Second
)

// consumingFlags are the flags of a consuming subcommand (`run`, `notify`): where to connect, what
// to read, and what to do at start-up.
type consumingFlags struct {
	databaseURL  string
	bootstrap    string // as given; brokers once parsed (fromEnv)
	brokers      []string
	topic, group string
	noMigrate    bool
	from         string
	forceReset   bool
	metricsAddr  string
	partitions   int
	replication  int
}

// consumingDefaults is what differs between the subcommands' consumingFlags: the group's and the
// metrics address's variables and defaults, and the help of --from.
type consumingDefaults struct {
	groupEnv, group, metricsEnv, metricsAddr, fromHelp string
}

func (c *consumingFlags) define(fs *flag.FlagSet, getenv func(string) string, d consumingDefaults) {
	fs.StringVar(&c.databaseURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	cli.BrokersVar(fs, &c.bootstrap, "", "comma-separated Kafka `brokers` (default $KAFKA_BOOTSTRAP)", true)
	fs.StringVar(&c.topic, "topic", cli.EnvOr(getenv, "KAFKA_TOPIC", kafkabus.DefaultTopic), "Kafka topic ($KAFKA_TOPIC)")
	fs.StringVar(&c.group, "group", cli.EnvOr(getenv, d.groupEnv, d.group), "Kafka consumer group ($"+d.groupEnv+")")
	fs.BoolVar(&c.noMigrate, "no-migrate", false, "skip migrations and view installation at start")
	fs.StringVar(&c.from, "from", "", d.fromHelp)
	fs.BoolVar(&c.forceReset, "force-reset", false, "let --from overwrite the group's committed offsets")
	fs.StringVar(&c.metricsAddr, "metrics-addr", cli.EnvOr(getenv, d.metricsEnv, d.metricsAddr),
		"listen address for /metrics and /healthz ($"+d.metricsEnv+"); --metrics-addr= turns it off")
	fs.IntVar(&c.partitions, "create-partitions", defaultPartitions,
		"create the topic with this many partitions when it does not exist; 0: never create it")
	fs.IntVar(&c.replication, "replication-factor", 0,
		"replicas per partition of a topic it creates; 0: 3 when the cluster has at least three brokers, else 1")
}

// fromEnv fills what the flags left empty from DATABASE_URL and KAFKA_BOOTSTRAP (a flag
// overrides its variable) and parses the brokers.
func (c *consumingFlags) fromEnv(getenv func(string) string) {
	if c.databaseURL == "" {
		c.databaseURL = strings.TrimSpace(getenv("DATABASE_URL"))
	}
	if c.bootstrap == "" {
		c.bootstrap = getenv("KAFKA_BOOTSTRAP")
	}
	c.brokers = kafkabus.ParseBrokers(c.bootstrap)
}

// validate returns what is wrong with the flags both subcommands check alike.
func (c *consumingFlags) validate() []error {
	var errs []error
	if c.databaseURL == "" {
		errs = append(errs, errors.New("DATABASE_URL is not set (or pass --database-url)"))
	}
	if len(c.brokers) == 0 {
		errs = append(errs, errors.New("KAFKA_BOOTSTRAP is not set: give the Kafka brokers as host:port[,host:port] (or pass --kafka-bootstrap)"))
	}
	if c.forceReset && c.from == "" {
		errs = append(errs, errors.New("--force-reset needs --from"))
	}
	return errs
}

// startUpConfig is what startUp needs to read as group with a pool of conns connections.
func (c *consumingFlags) startUpConfig(group string, conns int32) startUpConfig {
	return startUpConfig{databaseURL: c.databaseURL, conns: conns, noMigrate: c.noMigrate, brokers: c.brokers,
		topic: c.topic, group: group, from: c.from, partitions: c.partitions, replication: c.replication, forceReset: c.forceReset}
}

// startUpConfig is what startUp needs of a consuming subcommand's configuration.
type startUpConfig struct {
	databaseURL        string
	conns              int32
	noMigrate          bool
	brokers            []string
	topic, group, from string
	partitions         int
	replication        int
	forceReset         bool
}

// startUp is what `run` and `notify` do before consuming: open the pool (published in db for
// /healthz), migrate unless told not to, reach Kafka (creating the topic when missing) and reset the
// group's offsets for --from. PostgreSQL or Kafka down waits and retries (logged, /healthz 503 via
// health) instead of exiting. The caller closes the pool.
func startUp(ctx context.Context, logger *slog.Logger, health *consumer.Health, db *atomic.Pointer[pgxpool.Pool],
	cfg startUpConfig) (*pgxpool.Pool, error) {
	var pool *pgxpool.Pool
	err := waitFor(ctx, logger, health, "PostgreSQL", store.IsTransient, func(ctx context.Context) error {
		var err error
		pool, err = openDB(ctx, cfg.databaseURL, cfg.conns)
		return err
	})
	if err != nil {
		return nil, err
	}
	db.Store(pool)
	fail := func(err error) (*pgxpool.Pool, error) {
		pool.Close()
		return nil, err
	}
	if !cfg.noMigrate {
		if err := waitFor(ctx, logger, health, "PostgreSQL (migrations)", store.IsTransient, func(ctx context.Context) error {
			return migrate(ctx, pool)
		}); err != nil {
			return fail(err)
		}
	}
	if err := waitFor(ctx, logger, health, "Kafka", kafkabus.Reachable, func(ctx context.Context) error {
		return reachKafka(ctx, logger, cfg.brokers, cfg.topic, cfg.partitions, cfg.replication)
	}); err != nil {
		return fail(err)
	}
	if cfg.from != "" {
		if err := kafkabus.ResetOffsets(ctx, logger, cfg.brokers, cfg.group, cfg.topic, cfg.from, cfg.forceReset); err != nil {
			return fail(err)
		}
	}
	return pool, nil
}

// waitFor calls try until it succeeds, fails with an error retriable rejects (a configuration
// problem: wrong password, unknown database, a topic the cluster refuses), or ctx ends (then it
// returns an error wrapping context.Canceled: a clean stop). Each failure is logged and shown by
// /healthz as "starting: waiting for WHAT".
func waitFor(ctx context.Context, logger *slog.Logger, health *consumer.Health, what string,
	retriable func(error) bool, try func(context.Context) error) error {
	b := consumer.Backoff{Base: startBackoffBase, Max: startBackoffMax}
	health.Set(startingKey, "starting: waiting for "+what)
	for attempt := 1; ; attempt++ {
		err := try(ctx)
		switch {
		case err == nil:
			if attempt > 1 {
				logger.InfoContext(ctx, what+" is reachable", "attempts", attempt)
			}
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("stopped while waiting for %s: %w (last error: %v)", what, ctx.Err(), err)
		case !retriable(err):
			return err
		}
		d := b.Delay(attempt)
		health.Set(startingKey, fmt.Sprintf("starting: waiting for %s (attempt %d): %v", what, attempt, err))
		logger.WarnContext(ctx, "start-up: waiting for "+what+"; retrying", "attempt", attempt, "backoff", d.String(), "err", err)
		if retry.Sleep(ctx, d) != nil {
			return fmt.Errorf("stopped while waiting for %s: %w (last error: %v)", what, ctx.Err(), err)
		}
	}
}

// reachKafka creates the topic if asked to (partitions > 0; replication as ensureTopic takes it),
// or else asks for its metadata: either way one of the brokers answered. A topic that does not
// exist yet is not waited for here; the Reader picks it up once it appears.
func reachKafka(ctx context.Context, logger *slog.Logger, brokers []string, topic string, partitions, replication int) error {
	if partitions > 0 {
		return ensureTopic(ctx, logger, brokers, topic, partitions, replication)
	}
	if _, err := kafkabus.TopicPartitions(ctx, brokers, topic); err != nil && !errors.Is(err, kafkabus.ErrTopicNotReady) {
		return err
	}
	return nil
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

func migrateCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := newFlagSet(env, "migrate", "Apply the database migrations (tern, under an advisory lock) and re-install the views, then exit.")
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
	env.Logger.InfoContext(ctx, "migrations and views applied")
	return nil
}

// migrate applies the migrations, then the views, on one connection, then builds the
// listing_lifetimes projection if it is missing or was built from other view definitions.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire connection for migrations: %w", err)
	}
	err = migrations.Apply(ctx, c.Conn())
	if err == nil {
		err = views.Install(ctx, c.Conn())
	}
	c.Release()
	if err != nil {
		return err
	}
	return ensureProjection(ctx, pool)
}

// openFromEnv opens the pool at dbURL, or at $DATABASE_URL when dbURL is empty.
func openFromEnv(ctx context.Context, env cli.Env, dbURL string) (*pgxpool.Pool, error) {
	if dbURL == "" {
		dbURL = strings.TrimSpace(env.Getenv("DATABASE_URL"))
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
