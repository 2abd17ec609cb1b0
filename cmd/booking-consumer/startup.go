package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/internal/retry"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/jackc/pgx/v5/pgxpool"
)

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
	allowUnsafe  bool
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
	fs.BoolVar(&c.allowUnsafe, "allow-unsafe-replication", false,
		"create the topic even with a --replication-factor below the cluster's min.insync.replicas\n"+
			"(acknowledged writes are then on that many nodes only)")
}

// fromEnv fills what the flags left empty from DATABASE_URL and KAFKA_BOOTSTRAP (a flag
// overrides its variable) and parses the brokers.
func (c *consumingFlags) fromEnv(getenv func(string) string) {
	c.databaseURL = cli.DatabaseURL(getenv, c.databaseURL)
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
		topic: c.topic, group: group, from: c.from, partitions: c.partitions, replication: c.replication, forceReset: c.forceReset,
		policy: topicPolicy{allowUnsafe: c.allowUnsafe}}
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
	policy             topicPolicy
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
		pool, err = cli.OpenDatabase(ctx, cfg.databaseURL, cfg.conns)
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
		return reachKafka(ctx, logger, cfg.brokers, cfg.topic, cfg.partitions, cfg.replication, cfg.policy)
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
func reachKafka(ctx context.Context, logger *slog.Logger, brokers []string, topic string, partitions, replication int, policy topicPolicy) error {
	if partitions > 0 {
		return ensureTopic(ctx, logger, brokers, topic, partitions, replication, policy)
	}
	if _, err := kafkabus.TopicPartitions(ctx, brokers, topic); err != nil && !errors.Is(err, kafkabus.ErrTopicNotReady) {
		return err
	}
	return nil
}
