package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
)

const deadHelp = `booking-consumer dead inspects and re-drives booking_events_dead: the Kafka messages the
consumer could not store (malformed JSON, contract violations, rows PostgreSQL refused), kept
byte for byte with the reason, one row per Kafka position.

Usage:
  booking-consumer dead list [flags]      dead letters, newest failure first: id, Kafka position,
                                          first and last failure, attempts, reason, raw value
                                          (escaped, cut to --width)
  booking-consumer dead show [flags] ID   one dead letter in full (raw key, value and Kafka
                                          headers escaped)
  booking-consumer dead retry [flags]     re-validate the selected dead letters with today's code:
                                          a valid one is stored (idempotently, at its Kafka
                                          position) and leaves the table in the same transaction;
                                          a still-invalid one stays with its new reason and one
                                          more attempt; --dry-run rolls everything back

Raw bytes are shown safely: printable text as it is, \\ \n \r \t, other control and format
characters as \uXXXX, invalid UTF-8 as \xNN.

Run "booking-consumer dead <list|show|retry> --help" for the flags.

`

// deadCmd is `booking-consumer dead list|show|retry`.
func deadCmd(ctx context.Context, env cli.Env, args []string) error {
	sub, rest, help := cli.Subcommand(args, "")
	switch sub {
	case "list":
		return deadListCmd(ctx, env, rest)
	case "show":
		return deadShowCmd(ctx, env, rest)
	case "retry":
		return deadRetryCmd(ctx, env, rest)
	case "help":
		help = true
	}
	fmt.Fprint(env.Stderr, deadHelp+envHelp)
	if help {
		return nil
	}
	if sub == "" {
		return fmt.Errorf("%w: dead: want list, show or retry", cli.ErrUsage)
	}
	return fmt.Errorf("%w: dead: unknown subcommand %q: want list, show or retry", cli.ErrUsage, sub)
}

// deadFilterFlags adds --since and --reason (the filters list and retry share) to fs.
func deadFilterFlags(fs *flag.FlagSet) (since, reason *string) {
	since = fs.String("since", "", "only dead letters whose last failure is at or after this RFC3339 `time`")
	reason = fs.String("reason", "", "only dead letters whose reason contains this `text` (case-insensitive)")
	return since, reason
}

func parseSince(s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return nil, fmt.Errorf("%w: --since %q: want RFC3339, e.g. 2026-05-01T00:00:00+09:00", cli.ErrUsage, s)
	}
	return &t, nil
}

func deadListCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := newFlagSet(env, "dead list", "List dead letters (booking_events_dead), newest failure first: id, Kafka\n"+
		"topic/partition/offset, first and last failure, attempts, reason and the raw value, escaped\n"+
		"(control characters as \\uXXXX, invalid UTF-8 as \\xNN) and cut to --width characters.")
	var dbURL, tz string
	var limit, width int
	var asJSON bool
	fs.StringVar(&dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	since, reason := deadFilterFlags(fs)
	fs.IntVar(&limit, "limit", 50, "show at most this many dead letters (0: all)")
	fs.IntVar(&width, "width", 60, "cut the reason and the escaped raw value to this many `characters` (0: never)")
	fs.BoolVar(&asJSON, "json", false, "print a JSON array (value and reason escaped and cut the same way)")
	fs.StringVar(&tz, "tz", defaultTZ, "time `zone` of the printed timestamps")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if limit < 0 || width < 0 {
		return fmt.Errorf("%w: dead list: --limit and --width must not be negative", cli.ErrUsage)
	}
	loc, err := cli.Location(tz)
	if err != nil {
		return err
	}
	f := store.DeadFilter{Reason: *reason, Limit: limit}
	if f.Since, err = parseSince(*since); err != nil {
		return err
	}
	list := func(s *store.Store) ([]store.DeadLetter, error) { return s.DeadLetters(ctx, f) }
	return printFromStore(ctx, env, dbURL, list, func(w io.Writer, ds []store.DeadLetter) error {
		if asJSON {
			out := make([]deadJSON, len(ds))
			for i, d := range ds {
				out[i] = toDeadJSON(d, loc, width, false)
			}
			return cli.WriteJSON(w, out)
		}
		var t cli.Table
		t.Add("id", "last_failed_at", "first_failed_at", "attempts", "topic/partition/offset", "reason", "value")
		for _, d := range ds {
			t.Add(strconv.FormatInt(d.ID, 10), events.FormatTimeIn(d.LastFailedAt, loc), events.FormatTimeIn(d.FirstFailedAt, loc),
				strconv.Itoa(d.Attempts), position(d), cli.Escape([]byte(d.Error), width), cli.Escape(d.Value, width))
		}
		if err := t.Write(w); err != nil {
			return err
		}
		fmt.Fprintf(w, "%d dead letters", len(ds))
		if limit > 0 && len(ds) == limit {
			fmt.Fprintf(w, " (--limit %d reached; there may be more)", limit)
		}
		fmt.Fprintln(w)
		return nil
	})
}

// printFromStore opens the database at dbURL (default $DATABASE_URL), reads v with read and
// prints it with print on a buffered stdout: the shape of the read-only dead subcommands.
func printFromStore[T any](ctx context.Context, env cli.Env, dbURL string,
	read func(*store.Store) (T, error), print func(io.Writer, T) error) error {
	pool, err := cli.OpenDatabase(ctx, cli.DatabaseURL(env.Getenv, dbURL), 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	v, err := read(store.New(pool))
	if err != nil {
		return err
	}
	w := bufio.NewWriter(env.Stdout)
	if err := print(w, v); err != nil {
		return err
	}
	return w.Flush()
}

func position(d store.DeadLetter) string {
	return fmt.Sprintf("%s/%d/%d", d.Topic, d.Partition, d.Offset)
}

// deadJSON is the --json shape of a dead letter. Key and value are escaped text (see
// cli.Escape); show --json adds the exact bytes in base64.
type deadJSON struct {
	ID            int64     `json:"id"`
	Topic         string    `json:"topic"`
	Partition     int       `json:"partition"`
	Offset        int64     `json:"offset"`
	FirstFailedAt time.Time `json:"first_failed_at"`
	LastFailedAt  time.Time `json:"last_failed_at"`
	Attempts      int       `json:"attempts"`
	Reason        string    `json:"reason"`
	Key           string    `json:"key"`
	Value         string    `json:"value"`
	ValueBytes    int       `json:"value_bytes"`
	KeyBase64     *string   `json:"key_base64,omitempty"`
	ValueBase64   *string   `json:"value_base64,omitempty"`
	// Headers are the Kafka headers, escaped (base64 too with show --json); null when the dead
	// letter predates kept headers (migration 009), [] when the message had none.
	Headers []deadHeaderJSON `json:"headers"`
}

type deadHeaderJSON struct {
	Key         string  `json:"key"`
	Value       string  `json:"value"`
	ValueBase64 *string `json:"value_base64,omitempty"`
}

func toDeadJSON(d store.DeadLetter, loc *time.Location, width int, exact bool) deadJSON {
	j := deadJSON{ID: d.ID, Topic: d.Topic, Partition: d.Partition, Offset: d.Offset,
		FirstFailedAt: d.FirstFailedAt.In(loc), LastFailedAt: d.LastFailedAt.In(loc), Attempts: d.Attempts,
		Reason: cli.Escape([]byte(d.Error), width), Key: cli.Escape(d.Key, width), Value: cli.Escape(d.Value, width),
		ValueBytes: len(d.Value)}
	if exact {
		k, v := base64.StdEncoding.EncodeToString(d.Key), base64.StdEncoding.EncodeToString(d.Value)
		j.KeyBase64, j.ValueBase64 = &k, &v
	}
	if d.HeadersKept {
		j.Headers = make([]deadHeaderJSON, len(d.Headers))
		for i, h := range d.Headers {
			j.Headers[i] = deadHeaderJSON{Key: cli.Escape([]byte(h.Key), width), Value: cli.Escape(h.Value, width)}
			if exact {
				v := base64.StdEncoding.EncodeToString(h.Value)
				j.Headers[i].ValueBase64 = &v
			}
		}
	}
	return j
}

func deadShowCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := newFlagSet(env, "dead show", "Show one dead letter in full: its Kafka position, failures, attempts, the reason,\n"+
		"the raw key and value and the Kafka headers, escaped but never cut. Usage: booking-consumer dead show [flags] ID")
	var dbURL, tz string
	var asJSON bool
	fs.StringVar(&dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	fs.BoolVar(&asJSON, "json", false, "print a JSON object, with the exact key and value in base64 as well")
	fs.StringVar(&tz, "tz", defaultTZ, "time `zone` of the printed timestamps")
	// The ID may come before or after the flags.
	idArg, err := cli.ParseOne(fs, args, "ID")
	if err != nil {
		return err
	}
	id, err := strconv.ParseInt(idArg, 10, 64)
	if err != nil || id <= 0 {
		return fmt.Errorf("%w: dead show: want the dead letter's id (a positive number, see dead list), got %q", cli.ErrUsage, idArg)
	}
	loc, err := cli.Location(tz)
	if err != nil {
		return err
	}
	show := func(s *store.Store) (store.DeadLetter, error) { return s.DeadLetterByID(ctx, id) }
	return printFromStore(ctx, env, dbURL, show, func(w io.Writer, d store.DeadLetter) error {
		if asJSON {
			return cli.WriteJSON(w, toDeadJSON(d, loc, 0, true))
		}
		var t cli.Table
		t.Add("id:", strconv.FormatInt(d.ID, 10))
		t.Add("topic:", d.Topic)
		t.Add("partition:", strconv.Itoa(d.Partition))
		t.Add("offset:", strconv.FormatInt(d.Offset, 10))
		t.Add("first_failed_at:", events.FormatTimeIn(d.FirstFailedAt, loc))
		t.Add("last_failed_at:", events.FormatTimeIn(d.LastFailedAt, loc))
		t.Add("attempts:", strconv.Itoa(d.Attempts))
		t.Add("reason:", cli.Escape([]byte(d.Error), 0))
		t.Add("key:", fmt.Sprintf("%s (%d bytes)", cli.Escape(d.Key, 0), len(d.Key)))
		t.Add("value:", fmt.Sprintf("%s (%d bytes)", cli.Escape(d.Value, 0), len(d.Value)))
		switch {
		case !d.HeadersKept:
			t.Add("headers:", "not kept (dead-lettered before headers were)")
		case len(d.Headers) == 0:
			t.Add("headers:", "none")
		}
		for _, h := range d.Headers {
			t.Add("header:", cli.Escape([]byte(h.Key), 0)+": "+cli.Escape(h.Value, 0))
		}
		return t.Write(w)
	})
}

func deadRetryCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := newFlagSet(env, "dead retry", "Re-drive dead letters: re-validate each selected one with today's event decoder\n"+
		"and its kept Kafka headers (CloudEvents ce_ headers must agree with the event).\n"+
		"A valid one is stored like the consumer stores it (INSERT ... ON CONFLICT (event_id) DO NOTHING,\n"+
		"at its Kafka position) and removed from booking_events_dead in the same transaction; an\n"+
		"invalid one (or one PostgreSQL refuses) stays, with today's reason and attempts+1. Without\n"+
		"--id, --since or --reason every dead letter is selected; given together they must all match.\n"+
		"Safe to repeat and to run while the consumer runs. Prints one line per dead letter and a summary.")
	var dbURL string
	var id int64
	var dryRun, quiet bool
	fs.StringVar(&dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	fs.Int64Var(&id, "id", 0, "only the dead letter with this `id` (see dead list)")
	since, reason := deadFilterFlags(fs)
	fs.BoolVar(&dryRun, "dry-run", false, "do all the work and roll it back: say what a retry would do, change nothing")
	fs.BoolVar(&quiet, "quiet", false, "print only the summary, not one line per dead letter")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	if id < 0 {
		return fmt.Errorf("%w: dead retry: --id must be positive", cli.ErrUsage)
	}
	f := store.DeadFilter{ID: id, Reason: *reason}
	var err error
	if f.Since, err = parseSince(*since); err != nil {
		return err
	}
	pool, err := cli.OpenDatabase(ctx, cli.DatabaseURL(env.Getenv, dbURL), 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	w := bufio.NewWriter(env.Stdout)
	defer w.Flush()
	res, err := store.New(pool).RetryDead(ctx, f, dryRun, func(o store.RetryOutcome) {
		if quiet {
			return
		}
		switch {
		case o.Stored && o.New:
			fmt.Fprintf(w, "re-driven  %d: stored event %s\n", o.ID, o.EventID)
		case o.Stored:
			fmt.Fprintf(w, "re-driven  %d: event %s was already stored\n", o.ID, o.EventID)
		default:
			fmt.Fprintf(w, "still bad  %d: %s\n", o.ID, cli.Escape([]byte(o.Reason), 200))
		}
	})
	mode := ""
	if dryRun {
		mode = " (dry run: nothing changed)"
	}
	fmt.Fprintf(w, "re-driven %d (new %d, already stored %d), still bad %d%s\n",
		res.Redriven, res.Inserted, res.AlreadyStored, res.StillBad, mode)
	if err != nil {
		return err
	}
	env.Logger.InfoContext(ctx, "dead letters retried", "redriven", res.Redriven, "inserted", res.Inserted,
		"already_stored", res.AlreadyStored, "still_bad", res.StillBad, "dry_run", dryRun)
	return w.Flush()
}
