package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/store"
)

// lifetimesOptions are the flags of the lifetimes command.
type lifetimesOptions struct {
	dbURL, source, course, from, to, status, tz string
	asJSON, asCSV, summary, verify, rebuild     bool
}

func lifetimesFlags(env cli.Env, o *lifetimesOptions) *flag.FlagSet {
	fs := newFlagSet(env, "lifetimes", "Print listings from booking_lifetimes (served from its listing_lifetimes projection): one row per listing with its status\n"+
		"(open, booked, expired), when it opened and closed, its lifetime and prices.\n"+
		"Default output is an aligned table; --summary prints counts by status and the median time\n"+
		"to book by course and weekday of the play date.")
	fs.StringVar(&o.dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	fs.StringVar(&o.source, "source", "", "only this source (site) name")
	fs.StringVar(&o.course, "course", "", "only this course name (exact)")
	fs.StringVar(&o.from, "from", "", "first play date, `YYYY-MM-DD`, inclusive")
	fs.StringVar(&o.to, "to", "", "last play date, `YYYY-MM-DD`, inclusive")
	fs.StringVar(&o.status, "status", "", "only listings in this status: open, booked or expired")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON (an array of rows, or the summary object)")
	fs.BoolVar(&o.asCSV, "csv", false, "print CSV with a header row")
	fs.BoolVar(&o.summary, "summary", false, "print counts by status and median time to book by course and weekday")
	fs.BoolVar(&o.verify, "verify", false, "compare booking_lifetimes (the listing_lifetimes projection) with its definition booking_lifetimes_from_events for every listing; exit 1 if any differs")
	fs.BoolVar(&o.rebuild, "rebuild", false, "rebuild the listing_lifetimes projection from the events and swap it in (the consumer may keep running; needed after a restore with triggers disabled)")
	fs.StringVar(&o.tz, "tz", defaultTZ, "time `zone` of the printed timestamps (the tee times are the site's local time)")
	return fs
}

// filter checks the options and returns the rows they select.
func (o lifetimesOptions) filter() (store.LifetimeFilter, error) {
	f := store.LifetimeFilter{Source: o.source, Course: o.course}
	var err error
	if f.From, err = parseDate("--from", o.from); err != nil {
		return f, err
	}
	if f.To, err = parseDate("--to", o.to); err != nil {
		return f, err
	}
	switch o.status {
	case "", store.StatusOpen, store.StatusBooked, store.StatusExpired:
		f.Status = o.status
	default:
		return f, fmt.Errorf("%w: --status %q: want open, booked or expired", cli.ErrUsage, o.status)
	}
	switch {
	case o.asJSON && o.asCSV:
		return f, fmt.Errorf("%w: --json and --csv are exclusive", cli.ErrUsage)
	case o.verify && o.rebuild:
		return f, fmt.Errorf("%w: --verify and --rebuild are exclusive", cli.ErrUsage)
	}
	return f, nil
}

func lifetimesCmd(ctx context.Context, env cli.Env, args []string) error {
	var o lifetimesOptions
	if err := cli.Parse(lifetimesFlags(env, &o), args); err != nil {
		return err
	}
	loc, err := cli.Location(o.tz)
	if err != nil {
		return err
	}
	f, err := o.filter()
	if err != nil {
		return err
	}
	pool, err := cli.OpenDatabase(ctx, cli.DatabaseURL(env.Getenv, o.dbURL), 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	s := store.New(pool)
	w := bufio.NewWriter(env.Stdout)
	switch {
	case o.verify:
		err = verifyProjection(ctx, s, w)
	case o.rebuild:
		err = rebuildProjection(ctx, s, w, env.Logger)
	case o.summary:
		var sum store.Summary
		if sum, err = s.LifetimeSummary(ctx, f); err == nil {
			err = writeSummary(w, sum, o.asJSON, o.asCSV)
		}
	default:
		err = writeLifetimes(ctx, s, w, f, o, loc)
	}
	return errors.Join(err, w.Flush())
}

// writeLifetimes writes the rows f selects as the options say: JSON, CSV or a table.
func writeLifetimes(ctx context.Context, s *store.Store, w io.Writer, f store.LifetimeFilter, o lifetimesOptions, loc *time.Location) error {
	rows, err := s.Lifetimes(ctx, f)
	if err != nil {
		return err
	}
	switch {
	case o.asJSON:
		err = writeLifetimesJSON(w, rows, loc)
	case o.asCSV:
		err = store.WriteLifetimesCSV(w, rows, loc)
	default:
		err = writeLifetimesTable(w, rows, loc)
	}
	if err != nil {
		return fmt.Errorf("write lifetimes: %w", err)
	}
	return nil
}

func parseDate(flag, s string) (*time.Time, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return nil, fmt.Errorf("%w: %s %q: want YYYY-MM-DD", cli.ErrUsage, flag, s)
	}
	return &t, nil
}

// defaultTZ is the zone timestamps are printed in: the booking sites are Korean, so their tee
// times and the moments listings opened and closed read best side by side in Korean time.
const defaultTZ = "Asia/Seoul"

// writeLifetimesTable prints the CSV's cells (store.LifetimeRecord, shared with the dashboard's
// download) as an aligned table, without the listing key.
func writeLifetimesTable(w io.Writer, rows []store.Lifetime, loc *time.Location) error {
	var t cli.Table
	addRow := func(r []string) {
		r = slices.Clone(r[:len(r)-1]) // the listing key is long and repeats the rest: CSV and JSON only
		for i, c := range r {
			if c == "" {
				r[i] = "-"
			}
		}
		t.Add(r...)
	}
	addRow(store.LifetimeCSVHeader)
	for _, l := range rows {
		addRow(store.LifetimeRecord(l, loc))
	}
	if err := t.Write(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d listings\n", len(rows))
	return err
}

// writeLifetimesJSON writes the --json shape of the rows (store.LifetimesJSON: the json tags of
// store.Lifetime, lifetime in seconds, times in loc).
func writeLifetimesJSON(w io.Writer, rows []store.Lifetime, loc *time.Location) error {
	out, err := store.LifetimesJSON(rows, loc)
	if err != nil {
		return err
	}
	return cli.WriteJSON(w, out)
}

func writeSummary(w io.Writer, sum store.Summary, asJSON, asCSV bool) error {
	statuses := make([]string, 0, len(sum.ByStatus))
	for s := range sum.ByStatus {
		statuses = append(statuses, s)
	}
	slices.Sort(statuses)
	switch {
	case asJSON:
		type ttb struct {
			Course        string  `json:"course"`
			Weekday       string  `json:"weekday"`
			Booked        int     `json:"booked"`
			MedianSeconds float64 `json:"median_seconds"`
		}
		out := struct {
			ByStatus   map[string]int `json:"by_status"`
			TimeToBook []ttb          `json:"time_to_book"`
		}{ByStatus: sum.ByStatus, TimeToBook: []ttb{}}
		for _, b := range sum.TimeToBook {
			out.TimeToBook = append(out.TimeToBook, ttb{b.Course, b.Weekday.String(), b.Booked, b.Median.Seconds()})
		}
		return cli.WriteJSON(w, out)
	case asCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"kind", "key", "weekday", "count", "median_seconds"})
		for _, s := range statuses {
			_ = cw.Write([]string{"status", s, "", strconv.Itoa(sum.ByStatus[s]), ""})
		}
		for _, b := range sum.TimeToBook {
			_ = cw.Write([]string{"time_to_book", b.Course, b.Weekday.String(), strconv.Itoa(b.Booked),
				strconv.FormatFloat(b.Median.Seconds(), 'f', 0, 64)})
		}
		cw.Flush()
		return cw.Error()
	}
	var counts cli.Table
	counts.Add("status", "listings")
	for _, s := range statuses {
		counts.Add(s, strconv.Itoa(sum.ByStatus[s]))
	}
	if err := counts.Write(w); err != nil {
		return err
	}
	var books cli.Table
	books.Add("course", "weekday", "booked", "median time to book")
	for _, b := range sum.TimeToBook {
		books.Add(b.Course, b.Weekday.String(), strconv.Itoa(b.Booked), b.Median.Round(time.Second).String())
	}
	fmt.Fprintln(w)
	return books.Write(w)
}

func exportCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := newFlagSet(env, "export", "Write the stored events as JSON lines (one event payload per line) ordered by occurred_at.")
	var dbURL, since, until, source, out string
	fs.StringVar(&dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	fs.StringVar(&since, "since", "", "only events with occurred_at >= this RFC3339 `time`")
	fs.StringVar(&until, "until", "", "only events with occurred_at < this RFC3339 `time`")
	fs.StringVar(&source, "source", "", "only this source (site) name")
	fs.StringVar(&out, "out", "", "write to this `file` instead of stdout, atomically: a temporary file of its own in the same\n"+
		"directory, fsynced, then renamed over it (readers see the old or the whole new file)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	f := store.ExportFilter{Source: source}
	for _, b := range []struct {
		name, v string
		dst     **time.Time
	}{{"--since", since, &f.Since}, {"--until", until, &f.Until}} {
		if b.v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, b.v)
		if err != nil {
			return fmt.Errorf("%w: %s %q: want RFC3339, e.g. 2026-05-01T00:00:00+09:00", cli.ErrUsage, b.name, b.v)
		}
		*b.dst = &t
	}
	pool, err := cli.OpenDatabase(ctx, cli.DatabaseURL(env.Getenv, dbURL), 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	s := store.New(pool)
	if out == "" {
		w := bufio.NewWriter(env.Stdout)
		n, err := s.Export(ctx, w, f)
		if err != nil {
			return err
		}
		env.Logger.InfoContext(ctx, "exported", "events", n)
		return w.Flush()
	}
	n, err := s.ExportFile(ctx, out, f)
	if err != nil {
		return err
	}
	env.Logger.InfoContext(ctx, "exported", "events", n, "file", out)
	return nil
}
