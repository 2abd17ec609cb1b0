package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/replay"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/store"
)

const replayUsage = `Usage: crawler replay [flags] FILE

Publishes the booking events in FILE (JSON lines, as written by 'booking-consumer export',
'crawler --events-out' or 'crawler sim --generate'; '-' reads stdin) to Kafka with their
original event_id and key, in batches, waiting for every batch's acknowledgements from all
in-sync replicas. The topic must exist: replay waits for it (--topic-wait; booking-consumer run
creates it when it starts). The consumer ignores events it already stored, so replaying a file
twice adds no rows. Invalid lines are reported with their line number and skipped. Ctrl-C stops after the
batch in flight is acknowledged and reports how far the replay got.

Exit status: 0 when every selected event was published (invalid lines do not count), 1 when
any was not (failed or interrupted), 2 for a usage error.

Flags:
`

const replayEnvHelp = `
Environment:
  KAFKA_BOOTSTRAP   comma-separated brokers, host:port (required unless --dry-run)
  KAFKA_TOPIC       topic to publish to (default booking-events)
  KAFKA_CLIENT_ID   client id in broker logs (default golf-crawler)
  DATABASE_URL      PostgreSQL URL, optional: a --dry-run then says how many events are already
                    stored and how many would be new
`

// runReplay is `crawler replay`: args after the subcommand name.
func runReplay(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (err error) {
	// DATABASE_URL's password never reaches stderr or the error (cmd/internal/cli/database.go).
	secrets := cli.DatabaseSecrets(cli.DatabaseURL(getenv, ""))
	stderr = cli.ScrubWriter(stderr, secrets)
	defer func() { err = cli.ScrubError(err, secrets) }()
	f, err := parseReplayFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}

	// Warnings as text by default (a person reads them at a terminal); LOG_LEVEL and LOG_FORMAT
	// apply as in every subcommand.
	logger, err := cli.NewLoggerDefault(getenv, stderr, slog.LevelWarn, "text")
	if err != nil {
		return err
	}
	deps := replay.Deps{Progress: stderr, Terminal: isTerminal(stderr), Logger: logger}

	if !f.opts.DryRun {
		w, err := replayWriter(ctx, getenv, logger, stderr, f)
		if err != nil {
			return err
		}
		defer func() {
			if err := w.Close(); err != nil {
				logger.Warn("close kafka writer", "err", err)
			}
		}()
		deps.Writer = w
	} else if u := cli.DatabaseURL(getenv, ""); u != "" {
		pool, err := cli.OpenDatabase(ctx, u, 0)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		defer pool.Close()
		deps.Store = store.New(pool)
	}

	in := io.Reader(os.Stdin)
	if f.file != "-" {
		file, err := os.Open(f.file)
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		defer file.Close()
		if st, err := file.Stat(); err == nil && st.Mode().IsRegular() {
			deps.Size = st.Size()
		}
		in = file
	}

	rep, err := replay.Run(ctx, in, f.opts, deps)
	printReport(stdout, rep)
	return err
}

// replayFlags are `crawler replay`'s arguments.
type replayFlags struct {
	file      string // "-": stdin
	opts      replay.Options
	topicWait time.Duration
}

// parseReplayFlags parses args (flags may follow FILE); --help returns flag.ErrHelp after the usage.
func parseReplayFlags(args []string, stderr io.Writer) (replayFlags, error) {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), replayUsage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), replayEnvHelp)
	}
	since := fs.String("since", "", "publish only events with occurred_at at or after this RFC 3339 time")
	until := fs.String("until", "", "publish only events with occurred_at before this RFC 3339 time")
	rate := fs.Float64("rate", 0, "at most this many events per second (0: as fast as acknowledged)")
	maxN := fs.Int("max", 0, "publish at most this many events (0: all)")
	dry := fs.Bool("dry-run", false, "read and validate only, publish nothing (with DATABASE_URL: count stored and new)")
	batch := fs.Int("batch-size", replay.DefaultBatchSize, "events per acknowledged write")
	topicWait := fs.Duration("topic-wait", 30*time.Second, "how long to wait for the topic to exist before giving up")
	// Flags may follow the file name: crawler replay FILE --dry-run.
	file, err := cli.ParseOne(fs, args, "FILE")
	if err != nil {
		return replayFlags{}, err
	}
	if file == "" {
		fs.Usage()
		return replayFlags{}, fmt.Errorf("%w: replay: FILE is required ('-' for stdin)", cli.ErrUsage)
	}
	f := replayFlags{file: file, topicWait: *topicWait,
		opts: replay.Options{Rate: *rate, Max: *maxN, DryRun: *dry, BatchSize: *batch}}
	for _, t := range []struct {
		name, v string
		dst     *time.Time
	}{{"since", *since, &f.opts.Since}, {"until", *until, &f.opts.Until}} {
		if t.v == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339, t.v)
		if err != nil {
			return replayFlags{}, fmt.Errorf("%w: replay: --%s %q is not an RFC 3339 time such as 2026-04-01T00:00:00+09:00", cli.ErrUsage, t.name, t.v)
		}
		*t.dst = at
	}
	if *rate < 0 || *maxN < 0 || *batch <= 0 || *topicWait <= 0 {
		return replayFlags{}, fmt.Errorf("%w: replay: --rate and --max must not be negative, --batch-size and --topic-wait must be positive", cli.ErrUsage)
	}
	return f, nil
}

// replayWriter is the acknowledged writer of a replay that publishes: the publisher configuration
// from the environment, once the topic exists (waiting up to --topic-wait for it).
func replayWriter(ctx context.Context, getenv func(string) string, logger *slog.Logger, stderr io.Writer, f replayFlags) (*kafkabus.SyncWriter, error) {
	cfg := kafkabus.PublisherConfigFromEnv(getenv)
	if len(cfg.Brokers) == 0 {
		return nil, fmt.Errorf("%w: replay: KAFKA_BOOTSTRAP is empty; set it to the brokers (host:port) or use --dry-run", cli.ErrUsage)
	}
	cfg.Logger = logger
	// A consumer started a moment ago may still be creating the topic: wait for it rather
	// than fail every write with "unknown topic" for the writer's metadata lifetime.
	wctx, cancel := context.WithTimeout(ctx, f.topicWait)
	_, err := kafkabus.WaitForTopic(wctx, cfg.Brokers, topicOr(cfg.Topic), func() {
		fmt.Fprintf(stderr, "replay: waiting up to %v for topic %s to exist (booking-consumer run creates it)\n", f.topicWait, topicOr(cfg.Topic))
	})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("replay: %w; start booking-consumer run, which creates it, or create it", err)
	}
	fmt.Fprintf(stderr, "replay: publishing %s to topic %s at %s\n", f.file, topicOr(cfg.Topic), strings.Join(cfg.Brokers, ","))
	return kafkabus.NewSyncWriter(cfg), nil
}

func topicOr(t string) string {
	if t == "" {
		return kafkabus.DefaultTopic
	}
	return t
}

// printReport writes the final report, one "key: value" per line.
func printReport(w io.Writer, r replay.Report) {
	mode := "replay"
	if r.DryRun {
		mode = "dry run (nothing published)"
	}
	fmt.Fprintf(w, "%s finished in %s\n", mode, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "  read:       %d lines (%d blank)\n", r.Read, r.Blank)
	fmt.Fprintf(w, "  invalid:    %d\n", r.Invalid)
	fmt.Fprintf(w, "  skipped:    %d (outside --since/--until)\n", r.Skipped)
	fmt.Fprintf(w, "  selected:   %d\n", r.Selected)
	if r.DryRun {
		if r.StoreChecked {
			fmt.Fprintf(w, "  already stored: %d\n  new:        %d\n", r.AlreadyStored, r.New)
		} else {
			fmt.Fprintln(w, "  already stored: unknown (set DATABASE_URL to check)")
		}
		if n := r.DuplicateIDs + r.Superseded; n > 0 {
			fmt.Fprintf(w, "  repeated ids in the file: %d%s\n", n, map[bool]string{true: " (the last line of each id is published)"}[r.LastWins])
		}
	} else {
		fmt.Fprintf(w, "  published:  %d\n  failed:     %d\n", r.Published, r.Failed)
		if r.Unsent > 0 {
			fmt.Fprintf(w, "  unsent:     %d\n", r.Unsent)
		}
	}
	if r.Interrupted {
		fmt.Fprintf(w, "  interrupted after line %d (last event %s); run again to finish: already stored events are ignored\n",
			r.LastLine, r.LastEventID)
	}
	if r.Superseded > 0 && !r.DryRun {
		fmt.Fprintf(w, "  superseded: %d (an earlier line of an id published later in the file)\n", r.Superseded)
	}
	if r.TwoContentIDs > 0 {
		fmt.Fprintf(w, "  ids with two contents: %d (the last line of each is the one published)\n", r.TwoContentIDs)
		for _, id := range r.TwoContents {
			fmt.Fprintf(w, "    %s\n", id)
		}
	}
	for _, l := range r.InvalidLines {
		fmt.Fprintf(w, "  invalid line %d: %v\n", l.Line, l.Err)
	}
	if r.Invalid > len(r.InvalidLines) {
		fmt.Fprintf(w, "  ... and %d more invalid lines\n", r.Invalid-len(r.InvalidLines))
	}
	for _, f := range r.FailedEvents {
		fmt.Fprintf(w, "  not published: event %s (listing %s): %v\n", f.EventID, f.ListingKey, f.Err)
	}
	if r.Failed > len(r.FailedEvents) {
		fmt.Fprintf(w, "  ... and %d more not published\n", r.Failed-len(r.FailedEvents))
	}
}

// isTerminal reports whether w is a character device (a terminal), for the progress bar.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
