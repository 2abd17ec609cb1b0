package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// env returns a getenv over m.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// devSites is compose/dev/sites.yaml with every site pointed at base and without politeness
// delays.
func devSites(t *testing.T, base string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "compose", "dev", "sites.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "http://"+sitesim.DefaultAddr, base)
	s = strings.ReplaceAll(s, `allowed_domains: ["127.0.0.1"]`, "")
	return strings.ReplaceAll(s, "      delay: 100ms\n      random_delay: 50ms\n", "      no_delay: true\n")
}

// sitesFile writes a sites file: the first (HTML) site of devSites, looking one day ahead,
// without retries.
func sitesFile(t *testing.T, base string) string {
	t.Helper()
	s, _, _ := strings.Cut(devSites(t, base), "\n\n  - name: sim-api-get") // the HTML site only
	s = strings.Replace(s, "days_ahead: 14", "days_ahead: 1", 1)
	s = strings.Replace(s, "      retries: 3\n", "      no_retry: true\n", 1)
	if !strings.Contains(s, base) || !strings.Contains(s, "no_delay: true") || !strings.Contains(s, "no_retry: true") {
		t.Fatalf("compose/dev/sites.yaml changed shape; update the test's rewrite:\n%s", s)
	}
	return testkit.WriteTemp(t, "sites.yaml", s)
}

func TestHelpMentionsEveryFlagAndEnv(t *testing.T) {
	t.Parallel()
	envs := []string{"CRAWLER_SITES", "CRAWLER_STATE_DIR", "CRAWL_SCHEDULE", "METRICS_ADDR", "KAFKA_BOOTSTRAP",
		"KAFKA_TOPIC", "CRAWLER_SPOOL_MAX_BYTES", "KAFKA_UNSENT_ALARM_AFTER", "LOG_LEVEL", "LOG_FORMAT", "CRAWLER_UNHEALTHY_AFTER", "CRAWLER_MAX_SITES",
		"WATCHES_FILE"}
	crawlFlags := []string{"-sites", "-state-dir", "-events-out", "-misses-to-close", "-kafka-bootstrap", "-topic",
		"-spool-max-bytes", "-collapse-crawls", "-max-sites", "-site-deadline", "-watches", "-alert-max-age",
		"-alert-max-attempts", "-alert-retry-backoff", "-alert-retention"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, append([]string{"run", "once", "sim", "healthcheck", "suggest", "notifications"}, envs...)},
		{[]string{"notifications", "--help"}, []string{"-state-dir", "-status", "-watch", "-json", "-tz", "-limit", "CRAWLER_STATE_DIR", "unknown"}},
		{[]string{"check", "--help"}, []string{"-sites", "-watches", "WATCHES_FILE", "line number"}},
		{[]string{"run", "--help"}, append(append([]string{"-alert-failing-after", "-schedule", "-metrics-addr", "-shutdown-timeout", "default 30s", "-unhealthy-after", "-no-initial-crawl", "-kafka-alarm-after"}, crawlFlags...), envs...)},
		{[]string{"once", "--help"}, append(append([]string{"-alert-wait"}, crawlFlags...), envs...)},
		{[]string{"sim", "--help"}, []string{"-addr", "-seed", "-speed", sitesim.DefaultAddr, "LOG_LEVEL"}},
		{[]string{"healthcheck", "--help"}, []string{"-url", "-timeout", "LOG_FORMAT"}},
		{[]string{"sim", "--help", "--generate"}, []string{"-generate", "-days", "-seed", "-interval", "-start"}},
		{[]string{"sim", "--generate", "--help"}, []string{"-generate", "-days", "-seed", "-interval", "-start"}},
		{[]string{"replay", "--help"}, []string{"-since", "-until", "-rate", "-max", "-dry-run", "-batch-size", "-topic-wait",
			"KAFKA_BOOTSTRAP", "KAFKA_TOPIC", "DATABASE_URL", "'-' reads stdin"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(t.Context(), tc.args, env(nil), &stdout, &stderr); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("help lacks %q:\n%s", w, stderr.String())
				}
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"bogus"}, {"once", "--no-such-flag"}, {"once", "extra"}, {"once", "--misses-to-close", "0"},
		{"once", "--max-sites", "0"}, {"run", "--site-deadline", "-1s"}, {"once", "--site-deadline", "25h"},
		{"sim", "--generate", ""}, {"sim", "--generate", "x", "--days", "0"}, {"sim", "--generate", "x", "--start", "yesterday"},
		{"sim", "--generate", "x", "extra"}, {"sim", "--days", "1", "--generate", "-x"},
		{"replay"}, {"replay", "a", "b"}, {"replay", "--since", "monday", "f"}, {"replay", "--batch-size", "0", "f"},
		{"replay", "--topic-wait", "0s", "f"}, {"replay", "f"},
		{"once", "--watches", "/no/such/watches.yaml"}, {"once", "--watches", "w.yaml", "--alert-max-age", "0s"},
		{"notifications", "--status", "bogus"}, {"notifications", "--limit", "0"},
	} {
		err := run(t.Context(), args, env(nil), &bytes.Buffer{}, &bytes.Buffer{})
		if !errors.Is(err, cli.ErrUsage) {
			t.Errorf("%q: err %v, want a usage error", args, err)
		}
	}
	err := run(t.Context(), []string{"once"}, env(map[string]string{"LOG_FORMAT": "xml"}), &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.Is(err, cli.ErrUsage) {
		t.Errorf("LOG_FORMAT=xml: err %v, want a usage error", err)
	}
}

// TestOnceWritesEvents: `crawler once` with KAFKA_BOOTSTRAP empty crawls the sim, writes its
// events to --events-out and exits 0; a second run against the same state opens nothing again.
func TestOnceWritesEvents(t *testing.T) {
	t.Parallel()
	sim := sitesim.New(sitesim.Config{Seed: 3, TeeTimesPerDay: 6, DaysAhead: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	out := filepath.Join(dir, "events.jsonl")
	args := []string{"once", "--state-dir", filepath.Join(dir, "state"), "--events-out", out}
	getenv := env(map[string]string{"CRAWLER_SITES": sitesFile(t, srv.URL), "KAFKA_BOOTSTRAP": "", "LOG_LEVEL": "warn"})
	var stderr bytes.Buffer
	if err := run(t.Context(), args, getenv, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("once: %v\n%s", err, stderr.String())
	}
	evs := eventstest.ReadEvents(t, out)
	if len(evs) == 0 {
		t.Fatal("no events written")
	}
	for _, e := range evs {
		if e.EventType != events.ListingOpened || e.Source != "sim-golf" {
			t.Fatalf("first crawl wrote %s of %s, want only listing_opened of sim-golf", e.EventType, e.Source)
		}
	}
	// The sim runs on the real clock; a second crawl a second later sees (almost) the same site.
	time.Sleep(1100 * time.Millisecond) // crawl ids have second resolution
	if err := run(t.Context(), args, getenv, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("second once: %v\n%s", err, stderr.String())
	}
	for _, e := range eventstest.ReadEvents(t, out)[len(evs):] {
		if e.EventType == events.ListingOpened {
			t.Errorf("second crawl opened %s again: the snapshot was not used", e.ListingKey)
		}
	}
}

// TestOnceFailsWhenSiteDown: a site that refuses connections makes `once` exit non-zero.
func TestOnceFailsWhenSiteDown(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close()
	dir := t.TempDir()
	err := run(t.Context(), []string{"once", "--state-dir", dir, "--sites", sitesFile(t, base)},
		env(map[string]string{"LOG_LEVEL": "error"}), &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.Is(err, crawler.ErrCrawlFailed) {
		t.Fatalf("once against a dead site: err %v, want ErrCrawlFailed", err)
	}
}

// TestHealthcheck against a server that answers 200, then 503.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
	t.Cleanup(srv.Close)
	if err := run(t.Context(), []string{"healthcheck", "--url", srv.URL}, env(nil), &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatalf("healthy: %v", err)
	}
	status = http.StatusServiceUnavailable
	if err := run(t.Context(), []string{"healthcheck", "--url", srv.URL}, env(nil), &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Fatal("503 passed the healthcheck")
	}
}

// TestRunServesHealthzAndStops: `crawler run` serves /healthz on --metrics-addr and returns
// when its context is cancelled.
func TestRunServesHealthzAndStops(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(sitesim.New(sitesim.Config{Seed: 5, TeeTimesPerDay: 4, DaysAhead: 1}))
	t.Cleanup(srv.Close)
	addr := testkit.FreeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"run", "--schedule", "@every 1s", "--metrics-addr", addr, "--state-dir", t.TempDir(),
			"--sites", sitesFile(t, srv.URL)}, env(map[string]string{"LOG_LEVEL": "warn"}), &bytes.Buffer{}, &bytes.Buffer{})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := run(t.Context(), []string{"healthcheck", "--url", "http://" + addr + "/healthz", "--timeout", "1s"},
			env(nil), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	testkit.NoErr(t, errc, 20*time.Second, "run after cancel")
}

// TestSimAndOnceWithoutLoginVariables: on a fresh machine `crawler sim` and
// `crawler once` with the shipped sites file failed (exit 1) because the login-guarded simulator
// site needed SIM_CLUB_PASSWORD. The simulator's login has a documented development default
// that `crawler sim` and compose/dev/sites.yaml share, so neither needs the variable.
func TestSimAndOnceWithoutLoginVariables(t *testing.T) {
	t.Parallel()
	addr := testkit.FreeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"sim", "--addr", addr}, env(map[string]string{"LOG_LEVEL": "error"}), &bytes.Buffer{}, &bytes.Buffer{})
	}()
	testkit.WaitFor(t, 10*time.Second, "crawler sim serving", func() bool {
		return run(t.Context(), []string{"healthcheck", "--url", "http://" + addr + "/healthz", "--timeout", "1s"},
			env(nil), &bytes.Buffer{}, &bytes.Buffer{}) == nil
	})
	all := devSites(t, "http://"+addr)
	_, login, _ := strings.Cut(all, "\n  - name: sim-club-login\n")
	login, _, _ = strings.Cut(login, "\n\n  - name: sim-club-page")
	login = strings.NewReplacer("days_ahead: 6", "days_ahead: 1", "targets: *clubs", "targets: [{id: 137, name: 파인힐스 CC}]",
		"politeness: *simPoliteness", "politeness: {no_delay: true}").Replace(login)
	sites := "sites:\n  - name: sim-club-login\n" + login + "\n"
	dir := t.TempDir()
	out := filepath.Join(dir, "events.jsonl")
	var stderr bytes.Buffer
	err := run(t.Context(), []string{"once", "--sites", testkit.WriteTemp(t, "sites.yaml", sites), "--state-dir", filepath.Join(dir, "state"),
		"--events-out", out}, env(map[string]string{"LOG_LEVEL": "warn"}), &bytes.Buffer{}, &stderr)
	if err != nil {
		t.Fatalf("once with neither SIM_CLUB_USER nor SIM_CLUB_PASSWORD set: %v\n%s", err, stderr.String())
	}
	if evs := eventstest.ReadEvents(t, out); len(evs) == 0 || evs[0].Source != "sim-club-login" {
		t.Errorf("%d events written, want the login site's openings", len(evs))
	}
	cancel()
	testkit.NoErr(t, errc, 10*time.Second, "sim after cancel")
}

// TestRunSiteOwnSchedule: a site with a schedule of its own is crawled on it, not on --schedule
// (hourly here, with no start-up crawl): /metrics shows its next crawl time and two runs.
func TestRunSiteOwnSchedule(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(sitesim.New(sitesim.Config{Seed: 5, TeeTimesPerDay: 4, DaysAhead: 1}))
	t.Cleanup(srv.Close)
	b, err := os.ReadFile(sitesFile(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	sites := strings.Replace(string(b), "  - name: sim-golf\n", "  - name: sim-golf\n    schedule: \"@every 1s\"\n", 1)
	addr := testkit.FreeAddr(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"run", "--schedule", "@hourly", "--no-initial-crawl", "--metrics-addr", addr, "--state-dir", t.TempDir(),
			"--sites", testkit.WriteTemp(t, "sites.yaml", sites)}, env(map[string]string{"LOG_LEVEL": "warn"}), &bytes.Buffer{}, &bytes.Buffer{})
	}()
	var body string
	testkit.WaitForf(t, 30*time.Second, func() string { return "two runs of the site's own schedule in /metrics:\n" + body }, func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		body = string(raw)
		runs := 0.0
		for _, line := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(line, "crawler_runs_total{"); ok {
				_, n, _ := strings.Cut(v, "} ")
				f, _ := strconv.ParseFloat(n, 64)
				runs += f
			}
		}
		return strings.Contains(body, `crawler_site_next_crawl_timestamp_seconds{source="sim-golf"}`) && runs >= 2
	})
	cancel()
	testkit.NoErr(t, errc, 20*time.Second, "run after cancel")
}

// TestRunJitterOverSiteDeadline: a site's jitter longer than --site-deadline stops crawler run
// before any crawl, naming the site.
func TestRunJitterOverSiteDeadline(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(sitesFile(t, "http://127.0.0.1:1"))
	if err != nil {
		t.Fatal(err)
	}
	sites := strings.Replace(string(b), "  - name: sim-golf\n", "  - name: sim-golf\n    jitter: 2m\n", 1)
	err = run(t.Context(), []string{"run", "--site-deadline", "1m", "--metrics-addr", "off", "--state-dir", t.TempDir(),
		"--sites", testkit.WriteTemp(t, "sites.yaml", sites)}, env(map[string]string{"LOG_LEVEL": "warn"}), &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.Is(err, cli.ErrUsage) || !strings.Contains(errString(err), `site "sim-golf": jitter 2m0s is longer than its deadline 1m0s`) {
		t.Fatalf("err %v, want a usage error naming the jitter and the deadline", err)
	}
}

// TestRunRefusesScheduleThatNeverFires (review 4, F6): crawler run stops at start-up, before any
// crawl, on a site whose schedule never fires inside its active hours, naming the site and both
// keys.
func TestRunRefusesScheduleThatNeverFires(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	err := run(ctx, []string{"run", "--metrics-addr", "off", "--state-dir", t.TempDir(), "--sites", neverSites(t)},
		env(map[string]string{"LOG_LEVEL": "warn"}), &bytes.Buffer{}, &bytes.Buffer{})
	if ctx.Err() != nil {
		t.Fatal("crawler run started and kept running")
	}
	if !strings.Contains(errString(err), `site "never": schedule "0 3 * * *" never fires inside active_hours 05:00-23:00`) {
		t.Fatalf("err %v, want one naming the site, its schedule and its active_hours", err)
	}
}
