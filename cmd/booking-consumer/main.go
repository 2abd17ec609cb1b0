// Command booking-consumer stores the crawler's booking events from Kafka in PostgreSQL exactly
// once in effect, and reads them back.
//
//	booking-consumer [run] [flags]    consume (the default): migrate, then Kafka -> booking_events
//	booking-consumer migrate          apply migrations and (re)install the views, then exit
//	booking-consumer lifetimes        query booking_lifetimes, served from its projection (table, --json, --csv, --summary;
//	                                  --verify compares it with the definition, --rebuild rebuilds the projection)
//	booking-consumer export           stored events as JSON lines, by occurred_at
//	booking-consumer dead ...         list, show and re-drive dead letters (dead.go)
//	booking-consumer serve            the read-only web dashboard (internal/dashboard)
//	booking-consumer healthcheck      GET a URL, exit 0 on 200 (container healthchecks)
//	booking-consumer notify           tee-time alerts: a second consumer group (internal/notify)
//	booking-consumer notifications    list the alerts: sending, sent, failed, skipped; resend the failed
//	booking-consumer alerts test      send a test message on a channel of the watches file
//
// Every subcommand explains its flags with --help. The consume loop itself is package
// internal/consumer; this command only wires configuration, connections, metrics and signals.
package main

import (
	"context"
	"flag"
	"io"
	_ "time/tzdata" // --tz works on machines without a zoneinfo database

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notifylist"
)

func main() { cli.Main("booking-consumer", run) }

const envHelp = `Environment:
  DATABASE_URL     PostgreSQL URL, e.g. postgres://golf@127.0.0.1:55432/golf?sslmode=disable
                   (required; --database-url overrides it)
  KAFKA_BOOTSTRAP  comma-separated Kafka brokers, e.g. 127.0.0.1:19092 (required by run;
                   --kafka-bootstrap overrides it)
  KAFKA_TOPIC      topic to consume (default booking-events; --topic overrides it)
  KAFKA_GROUP      consumer group (default booking-consumer; --group overrides it)
  BATCH_MAX_BYTES  bytes per batch of run (default 8388608; --max-batch-bytes overrides it)
  METRICS_ADDR     listen address of /metrics and /healthz for run (default 127.0.0.1:9464;
                   --metrics-addr overrides it; --metrics-addr= turns it off)
  WATCHES_FILE     notify: the watches YAML file (--watches overrides it)
  NOTIFY_GROUP     notify: consumer group (default booking-notifier; --group overrides it)
  NOTIFY_METRICS_ADDR
                   notify: /metrics and /healthz (default 127.0.0.1:9466)
  LOG_LEVEL        debug, info (default), warn or error
  LOG_FORMAT       text on a terminal, else json (the default); logs go to stderr
`

const rootHelp = `booking-consumer stores booking events from Kafka in PostgreSQL, exactly once in effect.

Usage:
  booking-consumer [run] [flags]   consume until SIGINT/SIGTERM (the default subcommand)
  booking-consumer migrate [flags] apply database migrations and install the views, then exit
  booking-consumer lifetimes [flags]
                                   print the booking_lifetimes view: aligned table, --json or --csv;
                                   --summary for counts by status and median time to book;
                                   --verify: projection == definition?  --rebuild: rebuild it
  booking-consumer export [flags]  write stored events as JSON lines ordered by occurred_at
  booking-consumer dead list|show|retry [flags]
                                   inspect the dead letters (booking_events_dead) and re-drive them
                                   through today's validation (stored ones leave the table)
  booking-consumer serve [flags]   the read-only lifetimes dashboard on http://127.0.0.1:8080/
                                   (HTTP_ADDR; any other address needs DASHBOARD_TOKEN or
                                   DASHBOARD_USER/DASHBOARD_PASSWORD)
  booking-consumer healthcheck --url URL
                                   exit 0 only if URL answers 200 (container healthchecks)
  booking-consumer notify --watches FILE [flags]
                                   tee-time alerts: consumer group booking-notifier matches events
                                   against watches, claims and delivers each match once
  booking-consumer watches --watches FILE [--json]
                                   list the watches notify uses: the file's and the chat's (/watch)
  booking-consumer notifications [--status S] [--watch W] [--json]
                                   list the alerts (sending, sent, failed with error, skipped with reason)
  booking-consumer notifications resend --status failed [--watch W] [--since T] [--include-unknown]
                                   send the failed alerts again (under their keys, no age check)
  booking-consumer alerts test --channel NAME [--watches FILE]
                                   send one test message on a channel and print its answer

Run "booking-consumer <subcommand> --help" for the subcommand's flags.

`

// run is main without the process: args without the program name, the environment as getenv.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	// No password reaches the logs or the error, whichever path printed it (cli/database.go).
	secrets := cli.DatabaseSecretsFrom(getenv, args)
	stderr = cli.ScrubWriter(stderr, secrets)
	err := dispatch(ctx, args, getenv, stdout, stderr)
	return cli.ScrubError(err, secrets)
}

func dispatch(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmds := map[string]func(context.Context, cli.Env, []string) error{
		"run":           consumeCmd,
		"migrate":       migrateCmd,
		"lifetimes":     lifetimesCmd,
		"export":        exportCmd,
		"dead":          deadCmd,
		"healthcheck":   healthcheckCmd,
		"serve":         serveCmd,
		"notify":        notifyCmd,
		"notifications": notificationsCmd,
		"watches":       watchesCmd,
		"alerts": func(ctx context.Context, env cli.Env, args []string) error {
			return notifylist.AlertsCmd(ctx, env, args, func(name, usage string) *flag.FlagSet { return newFlagSet(env, name, usage) })
		},
	}
	env := cli.Env{Program: "booking-consumer", Getenv: getenv, Stdout: stdout, Stderr: stderr}
	return cli.Dispatch(ctx, args, getenv, stderr, "run", rootHelp, rootHelp+envHelp, cli.Lookup(cmds, env))
}

// newFlagSet returns a FlagSet whose --help prints usage (the subcommand's synopsis), every
// flag, and the environment variables.
func newFlagSet(env cli.Env, name, usage string) *flag.FlagSet {
	return env.NewFlagSet(name, usage, envHelp)
}
