package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/crawler/practice"
	"github.com/golfcrawler/golf-crawler/internal/atomicfile"
)

const generateUsage = `crawler sim --generate FILE [--days N] [--seed N] [--interval D] [--start T] writes the
practice set: a simulated season of crawls of the simulated booking site, run in-process through
the real crawl and diff code, as JSON lines of booking events (the format 'crawler replay' reads).
The same flags always give a byte-identical file. The defaults give about 7,000 events. '-'
writes to stdout.`

// generateCmd is `crawler sim --generate FILE ...`: args are the sim subcommand's arguments. It
// reads no environment: the set depends on its flags only.
func generateCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := env.NewFlagSet("sim --generate", generateUsage, "")
	out := fs.String("generate", "", "write the practice set to this file ('-': stdout)")
	days := fs.Int("days", practice.DefaultDays, "length of the simulated season in days")
	seed := fs.Int64("seed", practice.DefaultSeed, "seed of the simulated site")
	interval := fs.Duration("interval", practice.DefaultInterval, "simulated time between crawls")
	start := fs.String("start", practice.DefaultStart.Format(time.RFC3339), "first crawl, RFC 3339")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	switch {
	case *out == "-h" || *out == "-help" || *out == "--help":
		// `sim --generate --help`: the flag package took --help for FILE.
		fs.Usage()
		return flag.ErrHelp
	case *out == "":
		fs.Usage()
		return fmt.Errorf("%w: sim --generate: FILE is required", cli.ErrUsage)
	case strings.HasPrefix(*out, "-") && *out != "-":
		return fmt.Errorf("%w: sim --generate: FILE %q looks like a flag (write ./%s for a file of that name)", cli.ErrUsage, *out, *out)
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
		st, err := practice.Generate(ctx, env.Stdout, opts)
		if err == nil {
			printGenerated(env.Stderr, "stdout", st)
		}
		return err
	}
	// Replaced atomically (internal/atomicfile): an interrupted run never leaves half a set.
	var st practice.Stats
	err = atomicfile.Write(*out, 0o644, func(f *os.File) error {
		var genErr error
		st, genErr = practice.Generate(ctx, f, opts)
		return genErr
	})
	if err != nil {
		return fmt.Errorf("sim --generate %s: %w", *out, err)
	}
	printGenerated(env.Stderr, *out, st)
	return nil
}

func printGenerated(w io.Writer, where string, st practice.Stats) {
	fmt.Fprintf(w, "wrote %d events to %s (%v) from %d crawls, %s to %s, %d malformed rows skipped\n",
		st.Events, where, st.ByType, st.Crawls, st.First.Format(time.RFC3339), st.Last.Format(time.RFC3339), st.Rejected)
}
