package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/spool"
)

// Defaults of the crawl flags that have no constant in package crawler or events.
const (
	// defaultStateDir is relative to the working directory so that a checkout's runs keep their
	// snapshots next to it; the Docker image sets CRAWLER_STATE_DIR=/var/lib/golf-crawler.
	defaultStateDir = ".crawler-state"
	// defaultMetricsAddr is loopback: the metrics are not for the world. Docker sets 0.0.0.0:9465.
	defaultMetricsAddr = "127.0.0.1:9465"
	// publisherCloseTimeout bounds the publisher's drain at exit; with Kafka down it is what the
	// exit waits, and the events left stay in the spool for the next run.
	publisherCloseTimeout = 10 * time.Second
	// defaultKafkaAlarmAfter is how old the oldest unsent event may get before /healthz says so.
	defaultKafkaAlarmAfter = 10 * time.Minute
	// defaultUnhealthyAfter is how many crawls in a row without a complete one make /healthz 503:
	// an hour at the default 10-minute schedule.
	defaultUnhealthyAfter = 6
)

const crawlEnvHelp = `Environment (a flag overrides its variable):
  CRAWLER_SITES               sites file (--sites; default ` + site.DefaultSitesFile + `)
  CRAWLER_STATE_DIR           snapshot directory (--state-dir; default ` + defaultStateDir + `)
  CRAWL_SCHEDULE              run only: cron spec in Asia/Seoul (--schedule; default "` + crawler.DefaultSchedule + `"); a
                              site's schedule: key overrides it for that site
  CRAWLER_MAX_SITES           sites crawled at the same time (--max-sites; default 4); sites on one host
                              share one politeness limit whatever this is
  CRAWLER_UNHEALTHY_AFTER     run only: /healthz answers 503 when a site has had no complete crawl for this
                              many crawls in a row (--unhealthy-after; default 6; 0 never)
  METRICS_ADDR                run only: /metrics and /healthz listen address (--metrics-addr;
                              default ` + defaultMetricsAddr + `; "off" disables)
  KAFKA_BOOTSTRAP             comma-separated Kafka brokers (--kafka-bootstrap); unset or empty: events
                              are not published (one log line says so), only written to --events-out
  KAFKA_TOPIC                 topic (--topic; default ` + kafkabus.DefaultTopic + `)
  KAFKA_CLIENT_ID             Kafka client id (default ` + kafkabus.DefaultClientID + `)
  CRAWLER_SPOOL_MAX_BYTES     cap of <state-dir>/spool, the events not yet acknowledged by Kafka
                              (--spool-max-bytes; default 1 GiB); when full the newest are dropped and
                              counted, never the crawl
  KAFKA_UNSENT_ALARM_AFTER    run only: /healthz answers 503 (checks.kafka) when the oldest unsent event
                              is older than this (--kafka-alarm-after; default 10m)
  CRAWLER_DEMAND              run only: a watches file read for demand only (--demand): the page sets its
                              watches can match are crawled every watched_every; nothing is sent
`

// crawlConfig is the configuration of `crawler run` and `crawler once`.
type crawlConfig struct {
	Sites          string
	StateDir       string
	EventsOut      string
	Schedule       string
	MetricsAddr    string
	MissesToClose  int
	CollapseCrawls int
	UnhealthyAfter int
	MaxSites       int
	SiteDeadline   time.Duration
	// siteDeadlineDefault: --site-deadline was not given (run): a site with a schedule of its own
	// gets 0.8 × its own interval.
	siteDeadlineDefault bool
	ShutdownTimeout     time.Duration
	NoInitialCrawl      bool
	Publisher           kafkabus.PublisherConfig
	SpoolMaxBytes       int64
	KafkaAlarmAfter     time.Duration
	Alerts              alertsConfig
	// Demand is --demand: a watches file whose watches only make page sets watched (#51).
	Demand string
}

// crawlFlags defines the crawl flags on fs with defaults from the environment; the returned
// func validates after parsing.
func crawlFlags(fs *flag.FlagSet, getenv func(string) string, scheduled bool) (*crawlConfig, func() error) {
	cfg := &crawlConfig{}
	var envErr error
	pub := kafkabus.PublisherConfigFromEnv(getenv)
	cfg.Publisher = pub
	bootstrap := strings.Join(pub.Brokers, ",")
	fs.StringVar(&cfg.Sites, "sites", cli.EnvOr(getenv, "CRAWLER_SITES", site.DefaultSitesFile), "sites file (YAML; see crawler/site/site.go) `path` [CRAWLER_SITES]")
	fs.StringVar(&cfg.StateDir, "state-dir", cli.EnvOr(getenv, "CRAWLER_STATE_DIR", defaultStateDir), "`directory` of the per-site snapshots the next crawl diffs against [CRAWLER_STATE_DIR]")
	fs.StringVar(&cfg.EventsOut, "events-out", "", "append every event as a JSON line to `file` once the snapshot recording it is saved (O_APPEND, synced per site crawl; fed from <state-dir>/spool); empty: none")
	fs.IntVar(&cfg.MissesToClose, "misses-to-close", crawler.DefaultMissesToClose, "complete crawls in a row that must miss a listing before it closes as booked")
	fs.IntVar(&cfg.CollapseCrawls, "collapse-crawls", crawler.DefaultCollapseCrawls, "complete crawls in a row that must collapse (below half the last complete crawl's listings) with the same listings before the collapse is believed and its missing listings count as missed")
	fs.IntVar(&cfg.MaxSites, "max-sites", envInt(getenv, "CRAWLER_MAX_SITES", crawler.DefaultMaxSites, &envErr), "`sites` crawled at the same time; the sites on one host share one politeness limit (the strictest of theirs) [CRAWLER_MAX_SITES]")
	deadlineHelp := "0: " + onceDeadlineHelp
	if scheduled {
		deadlineHelp = "0: 0.8 × the site's schedule's interval (its schedule: key, else --schedule; 8m for the default schedule)"
	}
	fs.DurationVar(&cfg.SiteDeadline, "site-deadline", 0, "bound of one site's crawl, after which it is cancelled and incomplete (reason deadline), closing nothing; a site's deadline: key overrides it; "+deadlineHelp)
	cli.BrokersVar(fs, &bootstrap, bootstrap, "comma-separated Kafka `brokers`; empty: no publishing [KAFKA_BOOTSTRAP]", false)
	fs.StringVar(&cfg.Publisher.Topic, "topic", cli.EnvOr(getenv, "KAFKA_TOPIC", kafkabus.DefaultTopic), "Kafka `topic` of the booking events [KAFKA_TOPIC]")
	fs.Int64Var(&cfg.SpoolMaxBytes, "spool-max-bytes", int64(envInt(getenv, "CRAWLER_SPOOL_MAX_BYTES", int(spool.DefaultMaxBytes), &envErr)), "cap in `bytes` of <state-dir>/spool (the events Kafka has not acknowledged); when full the newest events are dropped and counted, never the crawl [CRAWLER_SPOOL_MAX_BYTES]")
	cfg.Alerts.define(fs, getenv, scheduled)
	if scheduled {
		fs.StringVar(&cfg.Schedule, "schedule", cli.EnvOr(getenv, "CRAWL_SCHEDULE", crawler.DefaultSchedule), "cron `spec` in Asia/Seoul: 5 fields, or @every 5s, @hourly, ... [CRAWL_SCHEDULE]")
		fs.StringVar(&cfg.MetricsAddr, "metrics-addr", cli.EnvOr(getenv, "METRICS_ADDR", defaultMetricsAddr), "`address` serving /metrics and /healthz; empty or \"off\" disables [METRICS_ADDR]")
		fs.DurationVar(&cfg.KafkaAlarmAfter, "kafka-alarm-after", envDur(getenv, "KAFKA_UNSENT_ALARM_AFTER", defaultKafkaAlarmAfter, &envErr), "/healthz answers 503 (checks.kafka, naming the cause) when the oldest event not acknowledged by Kafka is older than this `duration` [KAFKA_UNSENT_ALARM_AFTER]")
		fs.IntVar(&cfg.UnhealthyAfter, "unhealthy-after", envInt(getenv, "CRAWLER_UNHEALTHY_AFTER", defaultUnhealthyAfter, &envErr), "/healthz answers 503 when a site has had no complete crawl for this many `crawls` in a row; 0 never [CRAWLER_UNHEALTHY_AFTER]")
		fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", crawler.DefaultShutdownTimeout, "on SIGTERM, how long a running crawl may go on before it is cancelled")
		fs.BoolVar(&cfg.NoInitialCrawl, "no-initial-crawl", false, "do not crawl at start-up; wait for the schedule's first time")
		fs.StringVar(&cfg.Demand, "demand", getenv("CRAWLER_DEMAND"), "watches `file` read for demand only (the Kafka path, where booking-consumer notify sends): the page sets its watches "+
			"can match are crawled every watched_every of their site; nothing is sent and no channel's secret is read. --watches does the same with its own watches [CRAWLER_DEMAND]")
	}
	return cfg, func() error {
		if envErr != nil {
			return fmt.Errorf("%w: %v", cli.ErrUsage, envErr)
		}
		cfg.Publisher.Brokers = kafkabus.ParseBrokers(bootstrap)
		if cfg.MetricsAddr == "off" {
			cfg.MetricsAddr = ""
		}
		switch {
		case cfg.StateDir == "":
			return fmt.Errorf("%w: --state-dir is empty; the crawler needs a directory for its snapshots", cli.ErrUsage)
		case cfg.MissesToClose < 1:
			return fmt.Errorf("%w: --misses-to-close is %d; it must be at least 1", cli.ErrUsage, cfg.MissesToClose)
		case cfg.CollapseCrawls < 1:
			return fmt.Errorf("%w: --collapse-crawls is %d; it must be at least 1", cli.ErrUsage, cfg.CollapseCrawls)
		case cfg.MaxSites < 1:
			return fmt.Errorf("%w: --max-sites is %d; it must be at least 1", cli.ErrUsage, cfg.MaxSites)
		case cfg.SiteDeadline < 0 || cfg.SiteDeadline > site.MaxSiteDeadline:
			return fmt.Errorf("%w: --site-deadline is %s; it must be between 0 (the default) and %s", cli.ErrUsage, cfg.SiteDeadline, site.MaxSiteDeadline)
		case cfg.UnhealthyAfter < 0:
			return fmt.Errorf("%w: --unhealthy-after is %d; it must be 0 (never) or more", cli.ErrUsage, cfg.UnhealthyAfter)
		case cfg.SpoolMaxBytes <= 0:
			return fmt.Errorf("%w: --spool-max-bytes must be positive", cli.ErrUsage)
		case scheduled && cfg.KafkaAlarmAfter <= 0:
			return fmt.Errorf("%w: --kafka-alarm-after must be positive", cli.ErrUsage)
		case scheduled && cfg.ShutdownTimeout <= 0:
			return fmt.Errorf("%w: --shutdown-timeout must be positive", cli.ErrUsage)
		case cfg.Demand != "" && cfg.Alerts.WatchesFile != "":
			return fmt.Errorf("%w: --demand and --watches together: --watches already makes its watches (and the chat's) the demand; give one", cli.ErrUsage)
		}
		if cfg.SiteDeadline == 0 {
			cfg.SiteDeadline = defaultSiteDeadline(cfg.Schedule, scheduled)
			cfg.siteDeadlineDefault = scheduled
		}
		return cfg.Alerts.validate(scheduled)
	}
}

// onceDeadlineHelp is the default --site-deadline of `crawler once`.
const onceDeadlineHelp = "8m, 0.8 × the default schedule's 10 minutes"

// defaultSiteDeadline is --site-deadline's default: 0.8 × the schedule's interval for `run`, and
// for `once` (no schedule) that of the default schedule, 8 minutes. An invalid schedule gives 0
// here; the schedule reports it when it starts.
func defaultSiteDeadline(spec string, scheduled bool) time.Duration {
	if !scheduled {
		spec = crawler.DefaultSchedule
	}
	d, err := site.DefaultSiteDeadline(spec, site.Seoul(), time.Now())
	if err != nil {
		return 0
	}
	return d
}

// envInt is the integer in the environment variable name, def when it is unset or empty; a value
// that is not an integer sets *errp (unless it holds an error already) and gives 0.
func envInt(getenv func(string) string, name string, def int, errp *error) int {
	v := getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil && *errp == nil {
		*errp = fmt.Errorf("%s=%q: not an integer", name, v)
	}
	return n
}

// envDur is envInt for a Go duration.
func envDur(getenv func(string) string, name string, def time.Duration, errp *error) time.Duration {
	v := getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil && *errp == nil {
		*errp = fmt.Errorf("%s=%q: not a duration such as 10m", name, v)
	}
	return d
}

// faults are the crawl's fault seams: zero in the product; a test that re-executes its binary as
// the crawler sets them in the child (replay_crash_test.go).
type faults struct {
	onStep  func(step string)      // spool.Options.OnStep: called at each step of a site crawl's commit
	syncDir func(dir string) error // crawler.StateDir.SyncDir: the state dir's sync after a snapshot's rename
}

// crawlDeps are the pieces both crawl subcommands build from a crawlConfig.
type crawlDeps struct {
	runner  *crawler.Runner
	pub     interface{ Close(context.Context) error }
	spool   *spool.Spool
	kafka   bool
	metrics *crawlerMetrics
	out     *crawler.EventLog
	alerts  *alertsRuntime // nil: no --watches
	demand  crawler.Demand // the watched page sets (--watches or --demand); nil: none
}

// prepare is what once and run share: their flag set (name, usage and the crawl environment
// help), their flags (schedule ones too when scheduled), parsed and validated, the watches file
// loaded (its channels' secrets are scrubbed from env's output and logs from here on), then
// setup.
func prepare(env *cli.Env, name, usage string, args []string, scheduled bool, f faults) (*crawlConfig, *crawlDeps, error) {
	fs := env.NewFlagSet(name, usage, crawlEnvHelp+alertsEnvHelp+logEnvHelp)
	cfg, validate := crawlFlags(fs, env.Getenv, scheduled)
	if err := cli.Parse(fs, args); err != nil {
		return nil, nil, removedFlag(err)
	}
	if err := validate(); err != nil {
		return nil, nil, err
	}
	var watches *notify.Config
	if cfg.Alerts.WatchesFile != "" {
		w, _, err := loadWatches(env, cfg.Alerts.WatchesFile)
		if err != nil {
			return nil, nil, err
		}
		watches = w
	}
	var demand *notify.Config
	if cfg.Demand != "" {
		var err error
		if demand, err = notify.LoadFile(cfg.Demand, demandOnlyEnv); err != nil {
			return nil, nil, fmt.Errorf("--demand: %w", err)
		}
	}
	d, err := setup(*env, cfg, watches, f)
	if err == nil && demand != nil {
		d.demand = watchDemand{func() *notify.Config { return demand }}
	}
	return cfg, d, err
}

// removedFlag adds why to a parse error about a flag of the publisher the spool replaced.
func removedFlag(err error) error {
	for _, f := range kafkabus.RemovedSettings {
		if strings.Contains(err.Error(), "flag provided but not defined: -"+f.Flag) {
			return fmt.Errorf("%w (--%s is gone: %s; see docs/spool.md)", err, f.Flag, f.Why)
		}
	}
	return err
}

// setup loads the sites and builds the publisher, metrics, events file, runner and, with
// watches, the alerts.
func setup(env cli.Env, cfg *crawlConfig, watches *notify.Config, f faults) (*crawlDeps, error) {
	env.Logger.Info("crawler config", "sites", cfg.Sites, "state_dir", cfg.StateDir, "events_out", cfg.EventsOut,
		"schedule", cfg.Schedule, "metrics_addr", cfg.MetricsAddr, "misses_to_close", cfg.MissesToClose,
		"collapse_crawls", cfg.CollapseCrawls, "unhealthy_after", cfg.UnhealthyAfter,
		"max_sites", cfg.MaxSites, "site_deadline", cfg.SiteDeadline,
		"shutdown_timeout", cfg.ShutdownTimeout, "kafka_bootstrap", cfg.Publisher.Brokers, "topic", cfg.Publisher.Topic,
		"spool_max_bytes", cfg.SpoolMaxBytes, "kafka_alarm_after", cfg.KafkaAlarmAfter, "watches", cfg.Alerts.WatchesFile)
	for _, msg := range kafkabus.RemovedEnv(env.Getenv) {
		env.Logger.Warn(msg + " (remove it from the configuration; see docs/spool.md)")
	}
	sites, err := site.LoadSites(cfg.Sites)
	if err != nil {
		return nil, err
	}
	d := &crawlDeps{metrics: newCrawlerMetrics(time.Now)}
	d.metrics.health.UnhealthyAfter = cfg.UnhealthyAfter
	if cfg.EventsOut != "" {
		if d.out, err = crawler.OpenEventLog(cfg.EventsOut); err != nil {
			return nil, err
		}
	}
	d.runner = &crawler.Runner{
		Sites: sites, State: crawler.StateDir{Dir: cfg.StateDir, SyncDir: f.syncDir}, Logger: env.Logger,
		Metrics: d.metrics, Now: time.Now,
		Diff:     crawler.DiffOptions{MissesToClose: cfg.MissesToClose, CollapseCrawls: cfg.CollapseCrawls},
		MaxSites: cfg.MaxSites, SiteDeadline: cfg.SiteDeadline,
	}
	// One crawler per state dir, for the life of the process: a second one exits here, before
	// crawling (crawler.ErrStateLocked says which dir and which pid holds it).
	if err := d.runner.Lock(); err != nil {
		return nil, errors.Join(err, closeLog(d.out))
	}
	if err := d.openSpool(env, cfg, f); err != nil {
		d.runner.Unlock()
		return nil, errors.Join(err, closeLog(d.out))
	}
	if watches != nil {
		if d.alerts, err = openAlerts(context.Background(), env, cfg.StateDir, cfg.Alerts, watches, d.metrics); err != nil {
			return nil, errors.Join(err, d.close(context.Background(), env, 0))
		}
		d.runner.Alerts = d.alerts.hook
		d.demand = watchDemand{d.alerts.svc.InForce}
	}
	return d, nil
}

// openSpool opens <state-dir>/spool (under the lock), the crawl's one way out, and starts the
// publisher that sends it: with KAFKA_BOOTSTRAP set the spool keeps every event until Kafka
// acknowledges it; unset, nothing is kept for Kafka (the spool holds a batch only until it is
// committed and, with --events-out, in the events file).
func (d *crawlDeps) openSpool(env cli.Env, cfg *crawlConfig, f faults) error {
	d.kafka = len(cfg.Publisher.Brokers) > 0
	if !d.kafka {
		env.Logger.Info("kafka publishing disabled: KAFKA_BOOTSTRAP is empty, booking events are not published or spooled for Kafka")
	}
	d.runner.EventsOut = d.out
	sp, err := d.runner.OpenSpool(spool.Options{MaxBytes: cfg.SpoolMaxBytes, Retain: d.kafka, Logger: env.Logger, OnStep: f.onStep})
	if err != nil {
		return err
	}
	d.spool = sp
	if d.kafka {
		pcfg := cfg.Publisher
		pcfg.Logger, pcfg.Metrics = env.Logger, d.metrics
		pub := kafkabus.NewSpoolPublisher(pcfg, sp)
		d.pub = pub
		d.metrics.watchSpool(sp, pub, cfg.KafkaAlarmAfter)
	} else {
		d.metrics.watchSpool(sp, nil, 0)
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func closeLog(out *crawler.EventLog) error {
	if out == nil {
		return nil
	}
	return out.Close()
}

// close sends what the spool holds for up to publisherCloseTimeout and closes the spool and the
// events file. Kafka never fails it: what is still unsent stays in the spool for the next run
// (said in one line, "N events spooled for the next run"), so the exit status of `once` stays
// about the crawl; the error is about the files only.
//
// alertGrace is how long after SIGTERM (or now) the alerts' sends in flight may take to be
// answered and marked.
func (d *crawlDeps) close(ctx context.Context, env cli.Env, alertGrace time.Duration) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publisherCloseTimeout)
	defer cancel()
	var errs []error
	if d.pub != nil {
		_ = d.pub.Close(cctx) // the unsent part is reported from the spool below
	}
	if d.spool != nil {
		if st := d.spool.Stats(); d.kafka && st.Unsent > 0 {
			env.Logger.Warn("events not yet acknowledged by Kafka stay in the spool", "unsent", st.Unsent,
				"oldest_unsent", st.OldestUnsent, "spool", d.spool.Dir(), "flush_timeout", publisherCloseTimeout)
			fmt.Fprintf(env.Stderr, "%d events spooled for the next run\n", st.Unsent)
		}
		if err := d.spool.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if d.out != nil {
		if err := d.out.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if d.alerts != nil {
		if err := d.alerts.close(alertGrace); err != nil {
			errs = append(errs, err)
		}
	}
	// The state dir's lock goes last, once nothing of this process writes there any more.
	d.runner.Unlock()
	if err := errors.Join(errs...); err != nil {
		env.Logger.Error("shutdown incomplete", "err", err)
		return err
	}
	return nil
}

// onceCmd is `crawler once`.
func onceCmd(ctx context.Context, env cli.Env, args []string, f faults) error {
	cfg, d, err := prepare(&env, "once", "Crawl every site of the sites file once, publish the events, save the snapshots and\n"+
		"exit: status 0 when every site's crawl was complete, 1 when any errored or was incomplete, whatever\n"+
		"Kafka did (events Kafka has not acknowledged after the 10s flush stay in <state-dir>/spool for the next run).\n"+
		"With --watches, the crawl's alerts are claimed in the state dir and sent during the crawl and for up\n"+
		"to --alert-wait after it; the ones still unsent stay claimed and go out at the next run (logged). The\n"+
		"alerts never change the exit status.",
		args, false, f)
	if err != nil {
		return err
	}
	if d.alerts != nil {
		if err := d.alerts.svc.Start(ctx); err != nil {
			return errors.Join(err, d.close(ctx, env, 0))
		}
	}
	_, runErr := d.runner.Run(ctx)
	grace := time.Duration(0) // the wait below was the alerts' time
	if d.alerts != nil {
		_, _ = d.alerts.svc.Wait(ctx, cfg.Alerts.Wait)
		if ctx.Err() != nil {
			grace = cfg.Alerts.Wait // SIGTERM: the sends in flight get --alert-wait from it
		}
	}
	return errors.Join(runErr, d.close(ctx, env, grace))
}

// scheduleCmd is `crawler run`.
func scheduleCmd(ctx context.Context, env cli.Env, args []string, f faults) error {
	cfg, d, err := prepare(&env, "run", "Crawl every site of the sites file once at start-up (unless --no-initial-crawl), then on\n"+
		"the cron schedule (Asia/Seoul) until SIGINT or SIGTERM. A run still going when the next is due makes that one skip (logged, counted in\n"+
		"crawler_skipped_runs_total). A site with schedule:, active_hours:, jitter: or burst: keys is crawled on its own\n"+
		"times (crawler check prints its next five; docs/sites.md, \"Schedules per site\"), the others on --schedule;\n"+
		"a site still crawling when its time comes skips it. On SIGTERM the schedule stops, a running crawl gets\n"+
		"--shutdown-timeout to finish and is then cancelled, and the publisher gets 10s to flush. With\n"+
		"--watches, the crawler delivers the alerts itself: each site crawl's matches are claimed in\n"+
		"<state-dir>/alerts.db before its snapshot is saved, and one sender per channel delivers them beside\n"+
		"the crawl (a slow or dead channel never slows the crawl); at start-up every alert still unsent is\n"+
		"sent again under its Idempotency-Key. A telegram channel with commands: true takes /watch, /watches,\n"+
		"/mute, /unmute, /remove, /test and /help from its chat (getUpdates, offset in alerts.db; docs/alerts.md,\n"+
		"\"Watches from the chat\").",
		args, true, f)
	if err != nil {
		return err
	}
	var metricsDone chan error
	mctx, stopMetrics := context.WithCancel(context.WithoutCancel(ctx))
	defer stopMetrics()
	if cfg.MetricsAddr != "" {
		ln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			return errors.Join(fmt.Errorf("metrics: listen on %s: %w", cfg.MetricsAddr, err), d.close(ctx, env, 0))
		}
		metricsDone = make(chan error, 1)
		go func() { metricsDone <- d.metrics.Serve(mctx, ln, env.Logger) }()
	}
	var schedErr error
	if d.alerts != nil {
		schedErr = d.alerts.svc.Start(ctx)
	}
	if schedErr == nil {
		schedErr = runSchedule(ctx, env, cfg, d)
	}
	closeErr := d.close(ctx, env, cfg.ShutdownTimeout)
	stopMetrics()
	var metricsErr error
	if metricsDone != nil {
		metricsErr = <-metricsDone
	}
	env.Logger.Info("crawler stopped")
	return errors.Join(schedErr, closeErr, metricsErr)
}

// runSchedule is the run loop of `crawler run`: the global cron schedule (crawler.Schedule) when
// no site times its own crawls and no watch makes demand, else every site on its own times
// (crawler.SiteSchedule; the sites without keys on --schedule) and, with watches (--watches,
// --demand) and a site of page sets, each site's watched page sets on theirs; with each site's
// default deadline 0.8 × its own interval and its misses bounded in a burst
// (SiteTimes.MissesMinInterval).
func runSchedule(ctx context.Context, env cli.Env, cfg *crawlConfig, d *crawlDeps) error {
	crawl := func(ctx context.Context, jobs []crawler.Job, done func(int, crawler.SiteSummary)) {
		// The runner has logged each site's failure; the schedule goes on.
		_, _ = d.runner.RunJobs(ctx, jobs, done)
		if d.alerts != nil {
			d.alerts.svc.Prune(ctx)
		}
	}
	sites := d.runner.Sites
	times, perSite, err := siteRuns(cfg, sites)
	if err != nil {
		return err
	}
	demand := d.demand
	if !slices.ContainsFunc(sites, func(s *site.Site) bool { return len(crawler.PageSets(s, time.Now())) > 0 }) {
		demand = nil // no site's pages are page sets: the watches change no schedule
	}
	for i, s := range sites {
		// Alerts wait for a confirm crawl only where one comes: a site whose page sets the
		// schedule runs (a demand); elsewhere they go out at their first sighting.
		if run := perSite[s.Name]; demand != nil && len(crawler.PageSets(s, time.Now())) > 0 {
			run.ConfirmAfter = times[i].ConfirmAfter()
			perSite[s.Name] = run
		}
	}
	d.runner.PerSite = perSite
	if !slices.ContainsFunc(sites, (*site.Site).HasTimes) && demand == nil {
		sched := crawler.Schedule{
			Spec: cfg.Schedule, Location: site.Seoul(), Logger: env.Logger, ShutdownTimeout: cfg.ShutdownTimeout,
			OnSkip: d.metrics.SkippedRun, RunAtStart: !cfg.NoInitialCrawl,
			Job: func(ctx context.Context) { crawl(ctx, crawler.Jobs(sites), nil) },
		}
		return sched.Run(ctx)
	}
	sched := crawler.SiteSchedule{
		Sites: sites, Times: times, Logger: env.Logger, Crawl: crawl, ShutdownTimeout: cfg.ShutdownTimeout,
		RunAtStart: !cfg.NoInitialCrawl, OnSkip: d.metrics.SiteSkipped, OnNext: d.metrics.NextCrawl,
		Demand: demand, OnWatched: d.metrics.Watched,
	}
	return sched.Run(ctx)
}

// siteRuns is every site's SiteTimes under the global schedule, and what the runner takes from
// them per site: the default deadline (unless --site-deadline was given) and the misses bound
// (misses_min_interval holds on the global schedule too). A jitter longer than the site's
// deadline is a usage error.
func siteRuns(cfg *crawlConfig, sites []*site.Site) ([]*site.SiteTimes, map[string]crawler.SiteRun, error) {
	global, err := site.ScheduleInterval(cfg.Schedule, site.Seoul(), time.Now())
	if err != nil {
		return nil, nil, err
	}
	times := make([]*site.SiteTimes, len(sites))
	perSite := map[string]crawler.SiteRun{}
	for i, s := range sites {
		if times[i], err = s.Times(cfg.Schedule); err != nil {
			return nil, nil, err
		}
		run := crawler.SiteRun{MissesMinInterval: times[i].MissesMinInterval(global)}
		if cfg.siteDeadlineDefault {
			run.Deadline = times[i].Deadline()
		}
		if dl := cmp.Or(s.Deadline.D(), run.Deadline, cfg.SiteDeadline); dl > 0 && s.Jitter.D() > dl {
			return nil, nil, fmt.Errorf("%w: site %q: jitter %s is longer than its deadline %s (--site-deadline); it must be at most the deadline",
				cli.ErrUsage, s.Name, s.Jitter.D(), dl)
		}
		perSite[s.Name] = run
	}
	return times, perSite, nil
}
