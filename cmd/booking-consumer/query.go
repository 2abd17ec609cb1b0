package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/store"
)

// lifetimesOptions are the flags of the lifetimes command.
type lifetimesOptions struct {
	dbURL, source, course, from, to, status, tz, asOf string
	asJSON, asCSV, summary, verify, rebuild           bool
}

func lifetimesFlags(env cli.Env, o *lifetimesOptions) *flag.FlagSet {
	fs := newFlagSet(env, "lifetimes", "Print listings from booking_lifetimes (served from its listing_lifetimes projection): one row per listing with its status\n"+
		"(open, booked, expired), when it opened and closed, its lifetime and prices.\n"+
		"Default output is an aligned table; --summary prints counts by status and the time to book as\n"+
		"the cumulative incidence of booking (expiry competing, open listings censored; each listing's\n"+
		"latest lifetime, see docs/time-to-book.md) overall, by course, by course and weekday and by lead time.")
	fs.StringVar(&o.dbURL, "database-url", "", "PostgreSQL URL (default $DATABASE_URL)")
	fs.StringVar(&o.source, "source", "", "only this source (site) name")
	fs.StringVar(&o.course, "course", "", "only this course name (exact)")
	fs.StringVar(&o.from, "from", "", "first play date, `YYYY-MM-DD`, inclusive")
	fs.StringVar(&o.to, "to", "", "last play date, `YYYY-MM-DD`, inclusive")
	fs.StringVar(&o.status, "status", "", "only listings in this status: open, booked or expired")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON (an array of rows, or the summary object)")
	fs.BoolVar(&o.asCSV, "csv", false, "print CSV with a header row")
	fs.BoolVar(&o.summary, "summary", false, "print counts by status and, per group, the median time to book read from the cumulative\n"+
		"incidence curve, the share booked within 1 h, 24 h and 7 d, the share expired unbooked, n and n at risk\n"+
		"(with --json, also the curve's points and its 95% band)")
	fs.StringVar(&o.asOf, "as-of", "", "answer as of this `time`, as `serve --as-of` does: RFC3339 or YYYY-MM-DD (the end of that day\n"+
		"in --tz); statuses, expiries and lifetimes are as of then")
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
	case o.asOf != "" && (o.verify || o.rebuild):
		return f, fmt.Errorf("%w: --as-of does not apply to --verify or --rebuild", cli.ErrUsage)
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
	var read store.ReadOptions
	if asOf, err := parseAsOf(o.asOf, loc); err != nil {
		return err
	} else if asOf != nil {
		read.AsOf = asOf()
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
		err = s.ReadOnly(ctx, read, func(r *store.Reader) (err error) { sum, err = r.Summary(ctx, f); return err })
		if err == nil {
			err = writeSummary(w, sum, o.asJSON, o.asCSV)
		}
	default:
		var rows []store.Lifetime
		err = s.ReadOnly(ctx, read, func(r *store.Reader) (err error) { rows, err = r.Lifetimes(ctx, f); return err })
		if err == nil {
			err = writeLifetimes(w, rows, o, loc)
		}
	}
	return errors.Join(err, w.Flush())
}

// writeLifetimes writes the rows as the options say: JSON, CSV or a table. They were read in a
// read-only transaction at the options' clock (store.ReadOnly, as the dashboard reads), so that
// `lifetimes --csv --as-of T` is the /listings.csv of `serve --as-of T`.
func writeLifetimes(w io.Writer, rows []store.Lifetime, o lifetimesOptions, loc *time.Location) error {
	var err error
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
// download) as an aligned table, the columns of store.LifetimeTableColumns: all but the listing
// key (tagged table:"-"), which is long and repeats the rest (CSV and JSON only).
func writeLifetimesTable(w io.Writer, rows []store.Lifetime, loc *time.Location) error {
	var t cli.Table
	addRow := func(r []string) {
		cells := make([]string, 0, len(store.LifetimeTableColumns))
		for _, i := range store.LifetimeTableColumns {
			cells = append(cells, cmp.Or(r[i], "-"))
		}
		t.Add(cells...)
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

// The checkpoints of the summary's shares booked within.
var summaryWithin = []struct {
	name string
	d    time.Duration
}{{"1h", time.Hour}, {"24h", 24 * time.Hour}, {"7d", 7 * 24 * time.Hour}}

// summaryGroup is one group of the summary as --json and --csv write it (points with --json only).
type summaryGroup struct {
	Kind            string              `json:"kind"`
	Key             string              `json:"key"`
	Course          string              `json:"course,omitempty"`
	Weekday         string              `json:"weekday,omitempty"`
	Lead            string              `json:"lead,omitempty"`
	N               int                 `json:"n"`
	AtRisk          int                 `json:"at_risk"`
	Booked          int                 `json:"booked"`
	Expired         int                 `json:"expired"`
	Reopened        int                 `json:"reopened"`
	Median          string              `json:"median"`
	MedianSeconds   *float64            `json:"median_seconds"`
	BookedWithin    map[string]*float64 `json:"booked_within"`
	ExpiredUnbooked float64             `json:"expired_unbooked"`
	Points          []summaryPoint      `json:"points,omitempty"`
}

// summaryPoint is one point of a curve in --summary --json: the estimate right after t_seconds;
// lower/upper null where the band is undefined.
type summaryPoint struct {
	TSeconds         float64  `json:"t_seconds"`
	AtRisk           int      `json:"at_risk"`
	Booked           int      `json:"booked"`
	Expired          int      `json:"expired"`
	Censored         int      `json:"censored"`
	Incidence        float64  `json:"incidence"`
	ExpiredIncidence float64  `json:"expired_incidence"`
	Lower            *float64 `json:"lower"`
	Upper            *float64 `json:"upper"`
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

// medianLabel is the median time to book read from the curve, or why there is none.
func medianLabel(g store.IncidenceGroup) (string, *float64) {
	m, ok, never := store.Median(g.Curve)
	switch {
	case ok:
		s := m.Seconds()
		return m.Round(time.Second).String(), &s
	case never:
		return "never: most expire", nil
	}
	return "not reached: still open", nil
}

func summaryGroups(sum store.Summary, points bool) []summaryGroup {
	out := []summaryGroup{}
	for _, g := range sum.Groups {
		sg := summaryGroup{Kind: g.Kind, Key: g.Key(), Course: g.Course, Lead: g.Lead, N: g.N, AtRisk: g.Open,
			Booked: g.Booked, Expired: g.Expired, Reopened: g.Reopened, BookedWithin: map[string]*float64{},
			ExpiredUnbooked: g.ExpiredUnbooked()}
		if g.Kind == store.GroupCourseWeekday {
			sg.Weekday = g.Weekday.String()
		}
		sg.Median, sg.MedianSeconds = medianLabel(g)
		for _, c := range summaryWithin {
			if v, ok := g.BookedWithin(c.d); ok {
				sg.BookedWithin[c.name] = &v
			} else {
				sg.BookedWithin[c.name] = nil
			}
		}
		if points {
			sg.Points = make([]summaryPoint, len(g.Curve))
			for i, p := range g.Curve {
				sg.Points[i] = summaryPoint{TSeconds: p.Time.Seconds(), AtRisk: p.AtRisk, Booked: p.Booked, Expired: p.Expired,
					Censored: p.Censored, Incidence: p.Incidence, ExpiredIncidence: p.ExpiredIncidence, Lower: finite(p.Lower), Upper: finite(p.Upper)}
			}
		}
		out = append(out, sg)
	}
	return out
}

// share writes a share as a percentage with one decimal, "-" where it is undetermined.
func share(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v*100, 'f', 1, 64) + "%"
}

func shareCSV(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

// writeSummary writes the counts by status and the cumulative incidence of booking per group
// (docs/time-to-book.md): a table, CSV (one row per status, then per group) or JSON (with the
// curves' points).
func writeSummary(w io.Writer, sum store.Summary, asJSON, asCSV bool) error {
	statuses := make([]string, 0, len(sum.ByStatus))
	for s := range sum.ByStatus {
		statuses = append(statuses, s)
	}
	slices.Sort(statuses)
	switch {
	case asJSON:
		out := struct {
			ByStatus map[string]int `json:"by_status"`
			Groups   []summaryGroup `json:"groups"`
		}{ByStatus: sum.ByStatus, Groups: summaryGroups(sum, true)}
		return cli.WriteJSON(w, out)
	case asCSV:
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"kind", "key", "n", "at_risk", "booked", "expired", "reopened", "median", "median_seconds",
			"booked_1h", "booked_24h", "booked_7d", "expired_unbooked"})
		for _, s := range statuses {
			_ = cw.Write([]string{"status", s, strconv.Itoa(sum.ByStatus[s]), "", "", "", "", "", "", "", "", "", ""})
		}
		for _, g := range summaryGroups(sum, false) {
			_ = cw.Write([]string{g.Kind, store.NeutraliseCSVCell(g.Key), strconv.Itoa(g.N), strconv.Itoa(g.AtRisk),
				strconv.Itoa(g.Booked), strconv.Itoa(g.Expired), strconv.Itoa(g.Reopened), g.Median, shareCSV(g.MedianSeconds),
				shareCSV(g.BookedWithin["1h"]), shareCSV(g.BookedWithin["24h"]), shareCSV(g.BookedWithin["7d"]),
				strconv.FormatFloat(g.ExpiredUnbooked, 'f', -1, 64)})
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
	var t cli.Table
	t.Add("group", "", "n", "at risk", "median time to book", "booked ≤1h", "≤24h", "≤7d", "expired unbooked")
	reopened := 0
	for _, g := range summaryGroups(sum, false) {
		if g.Kind == store.GroupOverall {
			reopened = g.Reopened
		}
		t.Add(g.Kind, g.Key, strconv.Itoa(g.N), strconv.Itoa(g.AtRisk), g.Median, share(g.BookedWithin["1h"]),
			share(g.BookedWithin["24h"]), share(g.BookedWithin["7d"]), share(&g.ExpiredUnbooked))
	}
	fmt.Fprintf(w, "\nTime to book: cumulative incidence of booking (Aalen-Johansen; expiry competes, open listings are\n"+
		"censored at their lifetime; at risk = still open). Each listing counts once, by its latest lifetime\n"+
		"(%d reopened after a close count from their last reopening). - : undetermined (listings still open).\n", reopened)
	return t.Write(w)
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
