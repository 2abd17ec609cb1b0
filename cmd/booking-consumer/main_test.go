package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// envMap is a getenv over a map.
func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func runCLI(t *testing.T, ctx context.Context, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	err = run(ctx, args, envMap(env), &o, &e)
	return o.String(), e.String(), err
}

func TestHelpMentionsEveryFlagAndEnvVar(t *testing.T) {
	t.Parallel()
	envVars := []string{"DATABASE_URL", "KAFKA_BOOTSTRAP", "KAFKA_TOPIC", "KAFKA_GROUP", "LOG_LEVEL", "LOG_FORMAT"}
	for _, tc := range []struct {
		args  []string
		flags []string
	}{
		{[]string{"--help"}, []string{"run", "migrate", "lifetimes", "export", "dead list|show|retry"}},
		{[]string{"dead", "--help"}, []string{"list", "show", "retry", "--dry-run"}},
		{[]string{"dead", "list", "--help"}, []string{"-database-url", "-since", "-reason", "-limit", "-width", "-json", "-tz"}},
		{[]string{"dead", "show", "--help"}, []string{"-database-url", "-json", "-tz", "ID"}},
		{[]string{"dead", "retry", "--help"}, []string{"-database-url", "-id", "-since", "-reason", "-dry-run", "-quiet"}},
		{[]string{"run", "--help"}, []string{"-database-url", "-bootstrap", "-topic", "-group", "-no-migrate",
			"-batch-size", "-batch-wait", "-inflight", "-from", "-force-reset", "-metrics-addr", "-shutdown-timeout"}},
		{[]string{"migrate", "-h"}, []string{"-database-url"}},
		{[]string{"lifetimes", "--help"}, []string{"-database-url", "-source", "-course", "-from", "-to",
			"-status", "-json", "-csv", "-summary", "-verify", "-rebuild"}},
		{[]string{"export", "--help"}, []string{"-database-url", "-since", "-until", "-source", "-out"}},
	} {
		t.Run(strings.Join(tc.args, "_"), func(t *testing.T) {
			out, help, err := runCLI(t, t.Context(), nil, tc.args...)
			if err != nil {
				t.Fatalf("run %v = %v, want nil", tc.args, err)
			}
			if out != "" {
				t.Errorf("help went to stdout: %q", out)
			}
			for _, w := range append(tc.flags, envVars...) {
				if !strings.Contains(help, w) {
					t.Errorf("help for %v does not mention %s:\n%s", tc.args, w, help)
				}
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"RunWithoutBootstrap", map[string]string{"DATABASE_URL": "postgres://x/y"}, []string{"run"}, "KAFKA_BOOTSTRAP is not set"},
		{"RunWithoutDatabase", map[string]string{"KAFKA_BOOTSTRAP": "127.0.0.1:1"}, nil, "DATABASE_URL is not set"},
		{"BlankBootstrap", map[string]string{"DATABASE_URL": "postgres://x/y", "KAFKA_BOOTSTRAP": " , "}, nil, "KAFKA_BOOTSTRAP is not set"},
		{"BadFrom", map[string]string{"DATABASE_URL": "postgres://x/y", "KAFKA_BOOTSTRAP": "h:1"}, []string{"run", "--from", "yesterday"}, "want earliest or an RFC3339"},
		{"InflightZero", map[string]string{"DATABASE_URL": "postgres://x/y", "KAFKA_BOOTSTRAP": "h:1"}, []string{"run", "--inflight", "0"}, "--inflight 0 is out of range 1..16"},
		{"ForceWithoutFrom", map[string]string{"DATABASE_URL": "postgres://x/y", "KAFKA_BOOTSTRAP": "h:1"}, []string{"--force-reset"}, "--force-reset needs --from"},
		{"NotifySettleZero", map[string]string{"DATABASE_URL": "postgres://x/y", "KAFKA_BOOTSTRAP": "h:1", "WATCHES_FILE": "w.yaml"}, []string{"notify", "--settle", "0s"}, "--settle must be positive"},
		{"UnknownSubcommand", nil, []string{"frobnicate"}, `unknown subcommand "frobnicate"`},
		{"UnknownFlag", nil, []string{"lifetimes", "--colour"}, "flag provided but not defined"},
		{"BadStatus", map[string]string{"DATABASE_URL": "postgres://x/y"}, []string{"lifetimes", "--status", "sold"}, "want open, booked or expired"},
		{"BadDate", map[string]string{"DATABASE_URL": "postgres://x/y"}, []string{"lifetimes", "--from", "2026-02-30"}, "want YYYY-MM-DD"},
		{"BadSince", map[string]string{"DATABASE_URL": "postgres://x/y"}, []string{"export", "--since", "2026-05-01"}, "want RFC3339"},
		{"BadLogLevel", map[string]string{"LOG_LEVEL": "loud"}, []string{"migrate"}, "LOG_LEVEL"},
		{"MigrateWithoutDatabase", nil, []string{"migrate"}, "DATABASE_URL is not set"},
		{"DeadWithoutSubcommand", nil, []string{"dead"}, "want list, show or retry"},
		{"DeadUnknownSubcommand", nil, []string{"dead", "purge"}, `unknown subcommand "purge"`},
		{"DeadShowWithoutID", map[string]string{"DATABASE_URL": "postgres://x/y"}, []string{"dead", "show"}, "want the dead letter's id"},
		{"DeadShowBadID", map[string]string{"DATABASE_URL": "postgres://x/y"}, []string{"dead", "show", "12x"}, "want the dead letter's id"},
		{"DeadListBadSince", map[string]string{"DATABASE_URL": "postgres://x/y"}, []string{"dead", "list", "--since", "yesterday"}, "want RFC3339"},
		{"DeadRetryBadSince", map[string]string{"DATABASE_URL": "postgres://x/y"}, []string{"dead", "retry", "--since", "2026-05-01"}, "want RFC3339"},
		{"DeadRetryWithoutDatabase", nil, []string{"dead", "retry"}, "DATABASE_URL is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runCLI(t, t.Context(), tc.env, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("run %v = %v, want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// seedPlayDate is the play date of seed's listings: a Monday far ahead, so that B and C stay open
// (booking_lifetimes expires a listing without a close once its tee time has passed).
const seedPlayDate = "2099-05-04"

// seed stores a small history: A opened then booked, B open, C opened then re-priced, D expired.
func seed(t *testing.T) (dbURL string) {
	t.Helper()
	pool, dbURL := storetest.NewDBURL(t)
	at := time.Date(2026, 4, 27, 9, 0, 0, 0, time.UTC) // a Monday
	listing := func(course, tee string, price int64) events.Listing {
		players := 4
		return events.Listing{Source: "golfsite", CourseName: course, RoundDate: seedPlayDate, PlayDate: seedPlayDate,
			TeeTime: tee, Values: events.Values{PriceKRW: &price, Players: &players}}
	}
	a, b, c, d := listing("Alpha CC", "07:00", 150000), listing("Alpha CC", "07:10", 150000),
		listing("Beta CC", "08:00", 120000), listing("Beta CC", "08:10", 90000)
	c2 := c
	p := int64(110000)
	c2.PriceKRW = &p
	evs := []events.Event{
		events.Opened(a, "c1", at), events.Opened(b, "c1", at), events.Opened(c, "c1", at), events.Opened(d, "c1", at),
		events.Closed(a, "c2", at.Add(90*time.Minute), events.Booked),
		events.Changed(c, c2, "c2", at.Add(30*time.Minute)),
		events.Closed(d, "c3", at.Add(48*time.Hour), events.Expired),
	}
	msgs := make([]store.Message, len(evs))
	for i := range evs {
		msgs[i] = store.Message{Topic: "seed", Offset: int64(i), Event: &evs[i]}
	}
	if _, err := store.New(pool).Ingest(t.Context(), msgs); err != nil {
		t.Fatalf("seed: %v", err)
	}
	return dbURL
}

func TestLifetimesOutputFormats(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": seed(t)}

	table, _, err := runCLI(t, t.Context(), env, "lifetimes")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	if len(lines) != 6 || !strings.HasPrefix(lines[0], "play_date") || lines[5] != "4 listings" {
		t.Fatalf("table: want a header, 4 rows and a count line:\n%s", table)
	}
	statusCol := strings.Index(lines[0], "status")
	for _, l := range lines[1:5] { // aligned: every status starts under its header
		if got := strings.Fields(l[statusCol:])[0]; got != "booked" && got != "open" && got != "expired" {
			t.Errorf("misaligned row (status column reads %q):\n%s", got, table)
		}
	}

	if !strings.Contains(table, "+09:00") || strings.Contains(table, "Z ") {
		t.Errorf("table timestamps are not in Asia/Seoul by default:\n%s", table)
	}
	utc, _, err := runCLI(t, t.Context(), env, "lifetimes", "--tz", "UTC")
	if err != nil || strings.Contains(utc, "+09:00") || !strings.Contains(utc, "Z ") {
		t.Errorf("--tz UTC: err %v, output:\n%s", err, utc)
	}
	if _, _, err := runCLI(t, t.Context(), env, "lifetimes", "--tz", "Mars/Olympus"); err == nil {
		t.Error("--tz with an unknown zone was accepted")
	}

	js, _, err := runCLI(t, t.Context(), env, "lifetimes", "--json", "--status", "booked")
	if err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		CourseName      string  `json:"course_name"`
		TeeTime         string  `json:"tee_time"`
		LifetimeSeconds float64 `json:"lifetime_seconds"`
	}
	if err := json.Unmarshal([]byte(js), &rows); err != nil {
		t.Fatalf("--json output is not a JSON array: %v\n%s", err, js)
	}
	if len(rows) != 1 || rows[0].CourseName != "Alpha CC" || rows[0].TeeTime != "07:00" || rows[0].LifetimeSeconds != 5400 {
		t.Errorf("--json --status booked = %+v, want Alpha CC 07:00 booked after 5400 s", rows)
	}

	cs, _, err := runCLI(t, t.Context(), env, "lifetimes", "--csv", "--course", "Beta CC", "--from", seedPlayDate, "--to", seedPlayDate)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(cs)).ReadAll()
	if err != nil {
		t.Fatalf("--csv: %v", err)
	}
	if len(recs) != 3 || len(recs[0]) != len(store.LifetimeCSVHeader) || recs[1][3] != "Beta CC" {
		t.Errorf("--csv --course 'Beta CC' = %q, want a header and 2 Beta CC rows", recs)
	}

	none, _, err := runCLI(t, t.Context(), env, "lifetimes", "--from", "2100-01-01")
	if err != nil || !strings.Contains(none, "0 listings") {
		t.Errorf("lifetimes --from 2100-01-01 = %q, %v; want 0 listings", none, err)
	}
}

func TestLifetimesSummaryFormats(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": seed(t)}
	sum, _, err := runCLI(t, t.Context(), env, "lifetimes", "--summary")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"booked   1", "expired  1", "open     2", "course_weekday  Alpha CC, Mon  2  1        1h30m0s"} {
		if !strings.Contains(sum, want) {
			t.Errorf("--summary lacks %q:\n%s", want, sum)
		}
	}
	sj, _, err := runCLI(t, t.Context(), env, "lifetimes", "--summary", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		ByStatus map[string]int `json:"by_status"`
		Groups   []struct {
			Kind          string   `json:"kind"`
			Course        string   `json:"course"`
			Weekday       string   `json:"weekday"`
			N             int      `json:"n"`
			AtRisk        int      `json:"at_risk"`
			MedianSeconds *float64 `json:"median_seconds"`
			Points        []struct {
				Incidence float64 `json:"incidence"`
			} `json:"points"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(sj), &s); err != nil {
		t.Fatalf("--summary --json: %v\n%s", err, sj)
	}
	found := false
	for _, g := range s.Groups {
		if g.Kind == "course_weekday" && g.Course == "Alpha CC" {
			found = g.Weekday == "Monday" && g.N == 2 && g.MedianSeconds != nil && *g.MedianSeconds == 5400 && len(g.Points) > 0
		}
	}
	if s.ByStatus["open"] != 2 || len(s.Groups) == 0 || s.Groups[0].Kind != "overall" || s.Groups[0].N != 4 || !found {
		t.Errorf("--summary --json = %+v", s)
	}
}

func TestExportWritesJSONLinesInOrder(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": seed(t)}
	out := filepath.Join(t.TempDir(), "events.jsonl")
	if _, _, err := runCLI(t, t.Context(), env, "export", "--out", out, "--since", "2026-04-27T09:00:00Z", "--until", "2026-04-29T00:00:00Z"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) != 6 { // the expiry at +48 h is after --until
		t.Fatalf("exported %d lines, want 6:\n%s", len(lines), b)
	}
	var prev time.Time
	for i, l := range lines {
		e, err := events.Decode([]byte(l))
		if err != nil {
			t.Fatalf("line %d does not decode: %v", i+1, err)
		}
		if e.OccurredAt.Before(prev) {
			t.Errorf("line %d occurred at %v, before the previous line (%v)", i+1, e.OccurredAt, prev)
		}
		prev = e.OccurredAt
	}
	stdout, _, err := runCLI(t, t.Context(), env, "export", "--source", "nosuchsite")
	if err != nil || stdout != "" {
		t.Errorf("export --source nosuchsite = %q, %v; want nothing", stdout, err)
	}
}

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	_, dbURL := storetest.NewDBURL(t)
	for range 2 {
		if _, errOut, err := runCLI(t, t.Context(), map[string]string{"DATABASE_URL": dbURL}, "migrate"); err != nil {
			t.Fatalf("migrate: %v\n%s", err, errOut)
		}
	}
}
