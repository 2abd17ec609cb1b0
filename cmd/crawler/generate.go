package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/crawler/practice"
)

const generateUsage = `Usage: crawler sim --generate FILE [--days N] [--seed N] [--interval D] [--start T]

Writes the practice set: a simulated season of crawls of the simulated booking site, run
in-process through the real crawl and diff code, as JSON lines of booking events (the format
'crawler replay' reads). The same flags always give a byte-identical file. The defaults give
about 7,000 events. '-' writes to stdout.

Flags:
`

// runGenerate is `crawler sim --generate FILE ...`: args are the sim subcommand's arguments.
func runGenerate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	_ = getenv // no environment: the set depends on its flags only
	fs := flag.NewFlagSet("sim --generate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), generateUsage)
		fs.PrintDefaults()
	}
	out := fs.String("generate", "", "write the practice set to this file ('-': stdout)")
	days := fs.Int("days", practice.DefaultDays, "length of the simulated season in days")
	seed := fs.Int64("seed", practice.DefaultSeed, "seed of the simulated site")
	interval := fs.Duration("interval", practice.DefaultInterval, "simulated time between crawls")
	start := fs.String("start", practice.DefaultStart.Format(time.RFC3339), "first crawl, RFC 3339")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("%w: sim --generate: %v", cli.ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: sim --generate: unexpected arguments %q", cli.ErrUsage, fs.Args())
	}
	if *out == "" {
		fs.Usage()
		return fmt.Errorf("%w: sim --generate: FILE is required", cli.ErrUsage)
	}
	if *days <= 0 || *interval < time.Second || *seed == 0 {
		return fmt.Errorf("%w: sim --generate: --days must be positive, --interval at least 1s, --seed non-zero", cli.ErrUsage)
	}
	at, err := time.Parse(time.RFC3339, *start)
	if err != nil {
		return fmt.Errorf("%w: sim --generate: --start %q is not an RFC 3339 time", cli.ErrUsage, *start)
	}
	opts := practice.Options{Seed: *seed, Days: *days, Interval: *interval, Start: at}

	if *out == "-" {
		st, err := practice.Generate(ctx, stdout, opts)
		if err == nil {
			printGenerated(stderr, "stdout", st)
		}
		return err
	}
	// Written to a temporary file renamed into place: an interrupted run never leaves half a set.
	tmp, err := os.CreateTemp(filepath.Dir(*out), filepath.Base(*out)+".tmp-*")
	if err != nil {
		return fmt.Errorf("sim --generate: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	st, err := practice.Generate(ctx, tmp, opts)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), *out)
	}
	if err != nil {
		return fmt.Errorf("sim --generate %s: %w", *out, err)
	}
	printGenerated(stderr, *out, st)
	return nil
}

func printGenerated(w io.Writer, where string, st practice.Stats) {
	fmt.Fprintf(w, "wrote %d events to %s (%v) from %d crawls, %s to %s, %d malformed rows skipped\n",
		st.Events, where, st.ByType, st.Crawls, st.First.Format(time.RFC3339), st.Last.Format(time.RFC3339), st.Rejected)
}
