package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/store"
)

func lifetimesCmd(ctx context.Context, env cli.Env, args []string) error {
	fs := newFlagSet(env, "lifetimes", "Print listings from booking_lifetimes (served from its listing_lifetimes projection): one row per listing with its status\n"+
		"(open, booked, expired), when it opened and closed, its lifetime and prices.\n"+
		"Default output is an aligned table; --summary prints counts by status and the median time\n"+
		"to book by course and weekday of the play date.")
	var (
		dbURL, source, course, from, to, status, tz string
		asJSON, asCSV, summary                      bool
		verify, rebuild                             bool
	)
	fs.StringVar(&dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	fs.StringVar(&source, "source", "", "only this source (site) name")
	fs.StringVar(&course, "course", "", "only this course name (exact)")
	fs.StringVar(&from, "from", "", "first play date, `YYYY-MM-DD`, inclusive")
	fs.StringVar(&to, "to", "", "last play date, `YYYY-MM-DD`, inclusive")
	fs.StringVar(&status, "status", "", "only listings in this status: open, booked or expired")
	fs.BoolVar(&asJSON, "json", false, "print JSON (an array of rows, or the summary object)")
	fs.BoolVar(&asCSV, "csv", false, "print CSV with a header row")
	fs.BoolVar(&summary, "summary", false, "print counts by status and median time to book by course and weekday")
	fs.BoolVar(&verify, "verify", false, "compare booking_lifetimes (the listing_lifetimes projection) with its definition booking_lifetimes_from_events for every listing; exit 1 if any differs")
	fs.BoolVar(&rebuild, "rebuild", false, "rebuild the listing_lifetimes projection from the events and swap it in (the consumer may keep running; needed after a restore with triggers disabled)")
	fs.StringVar(&tz, "tz", defaultTZ, "time `zone` of the printed timestamps (the tee times are the site's local time)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	}
	loc, err := cli.Location(tz)
	if err != nil {
		return err
	}
	f := store.LifetimeFilter{Source: source, Course: course}
	if f.From, err = parseDate("--from", from); err != nil {
		return err
	}
	if f.To, err = parseDate("--to", to); err != nil {
		return err
	}
	switch status {
	case "", store.StatusOpen, store.StatusBooked, store.StatusExpired:
		f.Status = status
	default:
		return fmt.Errorf("%w: --status %q: want open, booked or expired", cli.ErrUsage, status)
	}
	if asJSON && asCSV {
		return fmt.Errorf("%w: --json and --csv are exclusive", cli.ErrUsage)
	}
	pool, err := cli.OpenDatabase(ctx, cli.DatabaseURL(env.Getenv, dbURL), 0)
	if err != nil {
		return err
	}
	defer pool.Close()
	s := store.New(pool)
	w := bufio.NewWriter(env.Stdout)
	switch {
	case verify && rebuild:
		return fmt.Errorf("%w: --verify and --rebuild are exclusive", cli.ErrUsage)
	case verify:
		err := verifyProjection(ctx, s, w)
		return errors.Join(err, w.Flush())
	case rebuild:
		err := rebuildProjection(ctx, s, w, env.Logger)
		return errors.Join(err, w.Flush())
	}
	if summary {
		sum, err := s.LifetimeSummary(ctx, f)
		if err != nil {
			return err
		}
		if err := writeSummary(w, sum, asJSON, asCSV); err != nil {
			return err
		}
		return w.Flush()
	}
	rows, err := s.Lifetimes(ctx, f)
	if err != nil {
		return err
	}
	switch {
	case asJSON:
		err = writeLifetimesJSON(w, rows, loc)
	case asCSV:
		err = writeLifetimesCSV(w, rows, loc)
	default:
		err = writeLifetimesTable(w, rows, loc)
	}
	if err != nil {
		return fmt.Errorf("write lifetimes: %w", err)
	}
	return w.Flush()
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

// lifetimeHeader and lifetimeRecord are the store's CSV cells (store/lifetimes_csv.go), shared
// with the dashboard's CSV download so the two always agree.
var lifetimeHeader = store.LifetimeCSVHeader

// defaultTZ is the zone timestamps are printed in: the booking sites are Korean, so their tee
// times and the moments listings opened and closed read best side by side in Korean time.
const defaultTZ = "Asia/Seoul"

func lifetimeRecord(l store.Lifetime, loc *time.Location) []string {
	return store.LifetimeRecord(l, loc)
}

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
	addRow(lifetimeHeader)
	for _, l := range rows {
		addRow(lifetimeRecord(l, loc))
	}
	if err := t.Write(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d listings\n", len(rows))
	return err
}

func writeLifetimesCSV(w io.Writer, rows []store.Lifetime, loc *time.Location) error {
	return store.WriteLifetimesCSV(w, rows, loc)
}

// lifetimeJSON is the --json shape of a row: snake_case, lifetime in seconds.
type lifetimeJSON struct {
	ListingKey      string     `json:"listing_key"`
	Source          string     `json:"source"`
	CourseName      string     `json:"course_name"`
	CoursePart      string     `json:"course_part"`
	PlayDate        string     `json:"play_date"`
	TeeTime         string     `json:"tee_time"`
	Status          string     `json:"status"`
	OpenedAt        time.Time  `json:"opened_at"`
	ClosedAt        *time.Time `json:"closed_at"`
	LastEventType   string     `json:"last_event_type"`
	LastEventAt     time.Time  `json:"last_event_at"`
	LifetimeSeconds float64    `json:"lifetime_seconds"`
	OpenPriceKRW    *int64     `json:"open_price_krw"`
	LastPriceKRW    *int64     `json:"last_price_krw"`
	ChangeCount     int        `json:"change_count"`
	ReopenCount     int        `json:"reopen_count"`
}

func writeLifetimesJSON(w io.Writer, rows []store.Lifetime, loc *time.Location) error {
	out := make([]lifetimeJSON, len(rows))
	for i, l := range rows {
		var closed *time.Time
		if l.ClosedAt != nil {
			c := l.ClosedAt.In(loc)
			closed = &c
		}
		out[i] = lifetimeJSON{l.ListingKey, l.Source, l.CourseName, l.CoursePart, l.PlayDate, l.TeeTime, l.Status,
			l.OpenedAt.In(loc), closed, l.LastEventType, l.LastEventAt.In(loc), l.Lifetime.Seconds(), l.OpenPriceKRW,
			l.LastPriceKRW, l.ChangeCount, l.ReopenCount}
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
