package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/golfcrawler/golf-crawler/cmd/booking-consumer/internal/dashboard"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/store"
)

const serveHelp = `Serve the read-only lifetimes dashboard (Overview, Listings with CSV download, one listing,
Pipeline) over HTTP until SIGINT/SIGTERM. Pages are rendered on the server, charts are SVG, every
asset is in the binary. It binds 127.0.0.1:8080 by default; on any other address it requires a
login (DASHBOARD_TOKEN as a bearer token, or DASHBOARD_USER and DASHBOARD_PASSWORD for basic auth)
and refuses to start without one. A configured login is required on loopback too, and half a
login (DASHBOARD_USER without DASHBOARD_PASSWORD, or the reverse) is refused on any address.

Dashboard environment:
  HTTP_ADDR           listen address (default 127.0.0.1:8080; --http-addr overrides it)
  DASHBOARD_TOKEN     bearer token: "Authorization: Bearer <token>" (the scheme in any case)
  DASHBOARD_USER, DASHBOARD_PASSWORD
                      HTTP basic auth (the browser asks for them)`

// dashboardAuth reads the login from the environment.
func dashboardAuth(getenv func(string) string) dashboard.Auth {
	return dashboard.Auth{Token: getenv("DASHBOARD_TOKEN"), User: getenv("DASHBOARD_USER"), Password: getenv("DASHBOARD_PASSWORD")}
}

func serveCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := newFlagSet(env, "serve", serveHelp)
	var dbURL, addr, tz, asOf, bootstrap, topic, group string
	var days int
	var queryTimeout time.Duration
	fs.StringVar(&dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	fs.StringVar(&addr, "http-addr", cli.EnvOr(env.Getenv, "HTTP_ADDR", dashboard.DefaultAddr), "listen `address` ($HTTP_ADDR); not loopback: a login is required")
	fs.StringVar(&tz, "tz", defaultTZ, "time `zone` of every time shown")
	fs.StringVar(&asOf, "as-of", "", "show every page as of this `time`: RFC3339 or YYYY-MM-DD (the end of that day in --tz); the\n"+
		"\"last days\" charts end then and statuses, expiries and lifetimes are computed at then.\n"+
		"Default now. Recorded data such as the practice set (April 2026) needs it, e.g. --as-of 2026-04-21")
	fs.IntVar(&days, "days", dashboard.DefaultDays, "how many days the events-per-hour chart covers")
	fs.DurationVar(&queryTimeout, "query-timeout", dashboard.DefaultQueryTimeout, "statement_timeout of every dashboard query")
	fs.StringVar(&bootstrap, "bootstrap", "", "Kafka brokers for the consumer lag (default $KAFKA_BOOTSTRAP; unset: the pipeline page says so)")
	fs.StringVar(&topic, "topic", cli.EnvOr(env.Getenv, "KAFKA_TOPIC", kafkabus.DefaultTopic), "Kafka topic ($KAFKA_TOPIC)")
	fs.StringVar(&group, "group", cli.EnvOr(env.Getenv, "KAFKA_GROUP", defaultGroup), "consumer group whose lag is shown ($KAFKA_GROUP)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	loc, err := cli.Location(tz)
	if err != nil {
		return err
	}
	anchor, err := parseAsOf(asOf, loc)
	if err != nil {
		return err
	}
	if days < 1 || days > 60 {
		return fmt.Errorf("%w: --days %d is out of range 1..60", cli.ErrUsage, days)
	}
	if queryTimeout <= 0 {
		return fmt.Errorf("%w: --query-timeout must be positive", cli.ErrUsage)
	}
	auth := dashboardAuth(env.Getenv)
	if err := dashboard.CheckAddr(addr, auth); err != nil {
		return fmt.Errorf("%w: %w", cli.ErrUsage, err)
	}
	if bootstrap == "" {
		bootstrap = env.Getenv("KAFKA_BOOTSTRAP")
	}
	pool, err := cli.OpenDatabase(ctx, cli.DatabaseURL(env.Getenv, dbURL), 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	cfg := dashboard.Config{Store: store.New(pool), Loc: loc, AsOf: anchor, Days: days, QueryTimeout: queryTimeout,
		Auth: auth, Logger: env.Logger}
	if brokers := kafkabus.ParseBrokers(bootstrap); len(brokers) > 0 {
		cfg.Lag = kafkabus.GroupLag(brokers, topic, group)
	}
	h, err := dashboard.New(cfg)
	if err != nil {
		return err
	}
	return dashboard.Serve(ctx, addr, h, func(a net.Addr) {
		env.Logger.InfoContext(ctx, "dashboard serving", "url", "http://"+a.String()+"/", "login", auth.Enabled())
		fmt.Fprintf(env.Stdout, "dashboard: http://%s/\n", a.String())
	})
}

// parseAsOf reads --as-of: empty is nil (live: the dashboard's clock and the database's),
// otherwise a fixed time.
func parseAsOf(s string, loc *time.Location) (func() time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return func() time.Time { return t }, nil
	}
	if d, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil {
		t := d.AddDate(0, 0, 1).Add(-time.Second)
		return func() time.Time { return t }, nil
	}
	return nil, fmt.Errorf("%w: --as-of %q: want RFC3339 (2026-04-21T18:00:00+09:00) or YYYY-MM-DD", cli.ErrUsage, s)
}

// startDashboard serves the dashboard inside `run --http-addr` (its pipeline page shows the
// consumer's own metrics and lag) until ctx ends or stop is called.
func startDashboard(ctx context.Context, logger *slog.Logger, cfg consumeConfig, pool *pgxpool.Pool, reg *prometheus.Registry) (stop func(), err error) {
	loc, err := time.LoadLocation(defaultTZ)
	if err != nil {
		return nil, err
	}
	h, err := dashboard.New(dashboard.Config{Store: store.New(pool), Loc: loc, Auth: cfg.dashAuth, Logger: logger,
		Lag: kafkabus.GroupLag(cfg.brokers, cfg.topic, cfg.group), Metrics: reg})
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithCancel(ctx)
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- dashboard.Serve(dctx, cfg.httpAddr, h, func(a net.Addr) { ready <- a }) }()
	select {
	case a := <-ready:
		logger.InfoContext(ctx, "dashboard serving", "url", "http://"+a.String()+"/", "login", cfg.dashAuth.Enabled())
	case err := <-done:
		cancel()
		return nil, errors.Join(errors.New("dashboard did not start"), err)
	}
	return func() {
		cancel()
		if err := <-done; err != nil {
			logger.Warn("dashboard", "err", err)
		}
	}, nil
}
