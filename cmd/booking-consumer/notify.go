package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts/alertsink"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notifylist"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
)

// Defaults of the notify subcommand.
const (
	defaultNotifyGroup       = "booking-notifier"
	defaultNotifyMetricsAddr = "127.0.0.1:9466"
	// defaultClaimBatch is notify's batch: its claim transactions were sized and measured at
	// 1000 messages; the consumer's own default (consumer.DefaultBatchSize) follows the
	// projection's per-listing locks, which claims do not take.
	defaultClaimBatch = 1000
	// defaultNotifyBatchWait is notify's consume-loop batch wait: an alert waits at most this long
	// for company in its claim transaction (the booking consumer's 200 ms would add latency).
	defaultNotifyBatchWait = 50 * time.Millisecond
	// defaultFailingAfter is how long a command channel's polls may fail before /healthz says so.
	defaultFailingAfter = 30 * time.Minute
)

// notifyDefaults are notify's consumingFlags defaults.
var notifyDefaults = consumingDefaults{groupEnv: "NOTIFY_GROUP", group: defaultNotifyGroup,
	metricsEnv: "NOTIFY_METRICS_ADDR", metricsAddr: defaultNotifyMetricsAddr,
	fromHelp: "before consuming, set the group's offsets to `earliest|RFC3339-time` (as run --from)"}

type notifyConfig struct {
	consumingFlags
	alerts      alerts.Config // its flags; the rest is set by runNotifier
	watchesFile string
	lease       time.Duration
	dryRun      bool
	batchSize   int
	batchWait   time.Duration
	shutdown    time.Duration
	secrets     []string
}

// notifyCmd is `booking-consumer notify`: the tee-time alert consumer group (package internal/notify).
func notifyCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := newFlagSet(env, "notify", "Tee-time alerts: consume booking events in a consumer group of their own, match them\n"+
		"against the watches file, claim each (watch, channel, event) match in the notifications table\n"+
		"(offsets are committed after the claims), and deliver the claims through one rate-limited sender\n"+
		"per channel (webhook, slack, discord, telegram). Matches older than --max-age at claim time, or\n"+
		"whose listing already closed later, are recorded as skipped: replays send nothing stale.\n"+
		"A watch is a query: at start, a watch that is new or whose conditions changed (its fingerprint,\n"+
		"kept in notification_fingerprints) is first answered with the listings open now in\n"+
		"booking_lifetimes, once per watch, channel and listing, worded as already open (--no-backlog,\n"+
		"or backlog: false on the watch, skips that); a restart with the same watches sends nothing again.")
	var cfg notifyConfig
	cfg.define(fs, env.Getenv, notifyDefaults)
	fs.StringVar(&cfg.watchesFile, "watches", env.Getenv("WATCHES_FILE"), "watches YAML file ($WATCHES_FILE; required)")
	fs.DurationVar(&cfg.alerts.MaxAge, "max-age", notify.DefaultMaxAge, "freshness window: a match whose event occurred longer ago at claim time, or before a send, is skipped (stale)")
	fs.DurationVar(&cfg.lease, "lease", pgclaims.DefaultLease, "how long a sender holds a claim it is sending; after a crash another sender takes it once this expired")
	fs.IntVar(&cfg.alerts.MaxAttempts, "max-attempts", notify.DefaultMaxAttempts, "attempts per message on transient errors (timeouts, 5xx, 429) before it is marked failed")
	fs.DurationVar(&cfg.alerts.RetryBase, "retry-backoff", time.Second, "first wait before a retry; doubles per attempt up to 1m (a Retry-After answer wins)")
	fs.DurationVar(&cfg.alerts.Settle, "settle", pgclaims.DefaultSettle, "how long a watch's matches from one crawl wait for more after the newest, to go out as one message")
	fs.BoolVar(&cfg.dryRun, "dry-run", false, "print what would be sent to stdout; write nothing, send nothing (reads as group <group>-dry-run)")
	fs.BoolVar(&cfg.alerts.NoBacklog, "no-backlog", false, "a new or changed watch claims nothing of what is open now (its fingerprint is recorded all the same); "+
		"without it, its first answer is the listings open in booking_lifetimes, worded as already open and exempt from --max-age")
	fs.IntVar(&cfg.batchSize, "batch-size", defaultClaimBatch, "max messages per claim transaction")
	fs.DurationVar(&cfg.batchWait, "batch-wait", defaultNotifyBatchWait, "how long to fill a batch after its first message")
	fs.DurationVar(&cfg.shutdown, "shutdown-timeout", consumer.DefaultShutdownTimeout, "on SIGTERM, how long the claim transactions in flight may take to finish")
	fs.DurationVar(&cfg.alerts.FailingAfter, "failing-after", defaultFailingAfter, "/healthz answers 503 when a channel's every send, or a command channel's "+
		"every getUpdates, has failed for longer than this (crawler run's --alert-failing-after); 0 never")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	cfg.fromEnv(env.Getenv)
	errs := cfg.validate() // the consumingFlags
	if cfg.watchesFile == "" {
		errs = append(errs, errors.New("WATCHES_FILE is not set (or pass --watches)"))
	}
	a := cfg.alerts
	if a.MaxAge <= 0 || cfg.lease <= 0 || a.RetryBase <= 0 || cfg.batchWait <= 0 || a.Settle <= 0 || a.FailingAfter < 0 {
		errs = append(errs, errors.New("--max-age, --lease, --retry-backoff, --batch-wait and --settle must be positive, --failing-after not negative"))
	}
	if a.MaxAttempts < 1 || cfg.batchSize < 1 || cfg.batchSize > 100_000 {
		errs = append(errs, errors.New("--max-attempts must be at least 1 and --batch-size in 1..100000"))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: notify: %w", cli.ErrUsage, err)
	}
	// Channel URLs and tokens never reach the logs, the errors or stdout.
	watches, secrets, err := notifylist.LoadWatches(&env, cfg.watchesFile)
	if err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	cfg.alerts.Watches, cfg.secrets = watches, secrets
	err = runNotifier(ctx, env, cfg)
	if stoppedBySignal(ctx, err) {
		env.Logger.Info("stopped during start-up", "err", err)
		return nil
	}
	return cli.ScrubError(err, cfg.secrets)
}

func runNotifier(ctx context.Context, env cli.Env, cfg notifyConfig) error {
	logger := env.Logger
	group := cfg.group
	if cfg.dryRun {
		group += "-dry-run"
	}
	channels := cfg.alerts.Watches.UsedChannels()
	logger.InfoContext(ctx, "booking-notifier starting", "database_url", redact(cfg.databaseURL), "brokers", cfg.brokers,
		"topic", cfg.topic, "group", group, "watches", len(cfg.alerts.Watches.Watches), "channels", channels,
		"max_age", cfg.alerts.MaxAge.String(), "lease", cfg.lease.String(), "dry_run", cfg.dryRun)
	p := newConsumerProcess(logger)
	// A command channel's poller holds a connection of its own (its bot's lock).
	pool, stop, err := p.start(ctx, cfg.metricsAddr, cfg.startUpConfig(group, int32(consumer.DefaultInflight+3*len(channels)+2)))
	if err != nil {
		return err
	}
	defer stop()
	host, _ := os.Hostname()
	owner := fmt.Sprintf("%s/%d/%s", host, os.Getpid(), strconv.FormatInt(time.Now().UnixNano()%1e9, 36))
	claims := &pgclaims.Store{Pool: pool, Owner: owner, Lease: cfg.lease, Settle: cfg.alerts.Settle}
	a := cfg.alerts
	a.Open, a.Commands, a.Logger, a.Registerer = claims, !cfg.dryRun, logger, p.reg // booking_lifetimes answers the asking watches
	if cfg.dryRun {
		a.DryRun = env.Stdout
	}
	svc, err := alerts.New(claims, a)
	if err != nil {
		return err
	}
	p.health.Check("alerts", svc.Problems)
	// Refused before consuming anything: another process polls a command channel's bot.
	if err := svc.Start(ctx); err != nil {
		return err
	}
	err = p.consume(ctx, kafkabus.GroupReaderOptions{Brokers: cfg.brokers, Topic: cfg.topic, Group: group},
		alertsink.Sink{Service: svc, Logger: logger}, consumer.Config{BatchSize: cfg.batchSize, BatchWait: cfg.batchWait, ShutdownTimeout: cfg.shutdown},
		func() {
			// The sends in flight get --shutdown-timeout; one abandoned then is sent again, same key,
			// once its lease expired.
			sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdown)
			defer cancel()
			_ = svc.Stop(sctx)
		})
	if err != nil {
		return fmt.Errorf("notify %s: %w", cfg.topic, err)
	}
	return nil
}
