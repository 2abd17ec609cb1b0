// Command crawler crawls golf tee-time listing sites on a schedule and publishes every listing
// change as a booking event to Kafka (fire-and-forget) and optionally to a JSONL file. With
// --watches it delivers tee-time alerts itself, Kafka or not (claims in the state dir).
//
//	crawler [run] [flags]        crawl on the cron schedule until SIGINT/SIGTERM (the default)
//	crawler once [flags]         crawl every site once, exit 1 if any crawl failed or was incomplete (never for Kafka)
//	crawler try --site NAME      fetch one site's pages for one date and print what they gave
//	crawler suggest --curl FILE  write a site entry from a request copied out of the browser
//	crawler check                validate every site of the sites file (and --watches) without fetching
//	crawler notifications        list the crawler-side alerts (the claims in the state dir); resend the failed
//	crawler watches              list the watches in force: the file's and the chat's (/watch), with where each came from
//	crawler alerts test          send a test message on a channel of the watches file
//	crawler sim [flags]          serve the simulated booking site in (accelerated) real time
//	crawler sim --generate FILE  write the deterministic ~7k-event practice set
//	crawler replay FILE          publish recorded events with their original ids, acknowledged
//	crawler healthcheck --url U  exit 0 if GET U answers 200 (Docker healthchecks; the image has no curl)
//
// Every subcommand explains its flags and environment variables with --help. The crawl itself
// is package crawler (Runner, Schedule, Health); this command only wires configuration,
// the publisher, the Prometheus metrics (metrics.go, behind crawler.RunMetrics) and signals.
package main

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"strings"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notifylist"
)

func main() { cli.Main("crawler", run) }

const rootHelp = `crawler crawls golf tee-time listing sites and publishes every listing change as a booking event.

Usage:
  crawler [run] [flags]        crawl every site on the cron schedule until SIGINT/SIGTERM (the default)
  crawler once [flags]         crawl every site once; exit status 1 if any site's crawl failed or was
                               incomplete
  crawler try --site NAME [--sites FILE --date D --target T --dump]
                               fetch one site's pages for one play date (and target) and print the
                               listings, the rejected rows with their reason and, with --dump, the raw
                               response: for writing a sites file
  crawler suggest [--curl FILE | URL] [--date D --target 'id=..,name=..' --check]
                               write a site entry from one request copied out of the browser
                               ("Copy as cURL"), with its reasoning on stderr; exit status 2 when
                               it is partial (fields missing, a login to fill in)
  crawler check [--sites FILE] [--watches FILE]
                               validate every site (selectors, paths, templates, required fields)
                               without fetching, and the watches file (errors with their line)
  crawler notifications [--status S] [--watch W] [--json]
                               list the crawler-side alerts (--watches) claimed in the state dir,
                               newest first, times in Asia/Seoul
  crawler notifications resend --status failed [--watch W] [--since T] [--include-unknown]
                               send the failed alerts again (under their keys, no age check)
  crawler watches [--watches FILE] [--json]
                               list the watches in force, the file's and those made in the chat
                               (/watch in a telegram channel with commands: true), with where each came from
  crawler alerts test --channel NAME [--watches FILE]
                               send one test message on a channel and print its answer
  crawler sim [flags]          serve the simulated booking site (crawler/sitesim) in accelerated time
  crawler sim --generate FILE [--days 21 --seed 1]
                               write the deterministic ~7k-event practice set (real crawl + diff path
                               over a simulated season) as JSON lines
  crawler replay [flags] FILE  publish recorded events (JSON lines, '-' for stdin) with their original
                               event_id, waiting for acks; --dry-run, --since/--until, --rate, --max
  crawler healthcheck [flags]  GET a URL, exit 0 on 200 (Docker healthchecks)

Run "crawler <subcommand> --help" for the subcommand's flags.

`

// run is main without the process: args without the program name, the environment as getenv.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return runWith(ctx, args, getenv, stdout, stderr, faults{})
}

// runWith is run with the crawl's fault seams set (a test's child process).
func runWith(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, f faults) error {
	cmds := map[string]func(context.Context, cli.Env, []string) error{
		"run":           func(ctx context.Context, env cli.Env, args []string) error { return scheduleCmd(ctx, env, args, f) },
		"once":          func(ctx context.Context, env cli.Env, args []string) error { return onceCmd(ctx, env, args, f) },
		"sim":           simCmd,
		"healthcheck":   healthcheckCmd,
		"try":           tryCmd,
		"check":         checkCmd,
		"notifications": notificationsCmd,
		"watches":       watchesCmd,
		"suggest":       suggestCmd,
		"alerts": func(ctx context.Context, env cli.Env, args []string) error {
			return notifylist.AlertsCmd(ctx, env, args, func(name, usage string) *flag.FlagSet {
				return env.NewFlagSet(name, usage, "Environment:\n  WATCHES_FILE                the watches file (--watches)\n"+logEnvHelp)
			})
		},
	}
	env := cli.Env{Program: "crawler", Getenv: getenv, Stdout: stdout, Stderr: stderr}
	lookup := cli.Lookup(cmds, env)
	help := rootHelp + crawlEnvHelp + alertsEnvHelp + logEnvHelp
	return cli.Dispatch(ctx, args, getenv, stderr, "run", rootHelp, help, func(sub string, args []string) cli.Command {
		switch {
		case sub == "replay":
			return func(ctx context.Context, _ *slog.Logger, args []string) error {
				return runReplay(ctx, args, getenv, stdout, stderr)
			}
		case sub == "sim" && wantsGenerate(args):
			return func(ctx context.Context, logger *slog.Logger, args []string) error {
				env.Logger = logger
				return generateCmd(ctx, env, args)
			}
		}
		return lookup(sub, args)
	})
}

// wantsGenerate reports whether `crawler sim` was asked for the practice set, not to serve.
func wantsGenerate(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "generate" {
			return true
		}
	}
	return false
}

const logEnvHelp = `  LOG_LEVEL                   debug, info (default), warn or error
  LOG_FORMAT                  text on a terminal, else json (the default); logs go to stderr
`
