package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/booking-consumer/internal/dashboard"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/store"
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
	fetchStuck time.Duration
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
			"or of one offset commit before /healthz answers 503 and booking_consumer_stuck rises; failed\n"+
			"fetches as many times in a row and for --fetch-stuck-after too")
	fs.DurationVar(&cfg.fetchStuck, "fetch-stuck-after", consumer.DefaultFetchStuckAfter,
		"how long fetches must have been failing (and --alarm-after times in a row) before /healthz\n"+
			"answers 503 \"stuck: fetch failed\": longer than a broker's restart")
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
	if c.fetchStuck <= 0 {
		errs = append(errs, fmt.Errorf("--fetch-stuck-after %v must be positive", c.fetchStuck))
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
		ShutdownTimeout: cfg.shutdown, AlarmAfter: cfg.alarmAfter, FetchStuckAfter: cfg.fetchStuck,
	}, nil)
	if err != nil {
		return fmt.Errorf("consume %s: %w", cfg.topic, err)
	}
	return nil
}

// redact says where a database URL points (user@host:port/database) without its password, whatever
// its form (cli.DescribeDatabase).
func redact(s string) string {
	return cli.DescribeDatabase(s)
}
