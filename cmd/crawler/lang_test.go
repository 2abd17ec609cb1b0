package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// langSites is a sites file of the sites language's hand-written entries (sitesim.CorpusEntry,
// crawler/sitesim/corpus.yaml) against base, without delays.
func langSites(t *testing.T, base string, names ...string) string {
	t.Helper()
	text := "sites:\n"
	for _, name := range names {
		text += sitesim.CorpusEntry(name, base) + "    politeness: {no_delay: true}\n"
	}
	return testkit.WriteTemp(t, "sites.yaml", text)
}

// `crawler try` shows which source gave each value of a field with fallbacks, and with --dump the
// rows of a grid table as the grid shows them, the cells a row inherits marked.
func TestTryShowsSourcesAndGrid(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 12, 3, 10, 0, 0, 0, sitesim.KST) // the discounts of 12-05 have come
	sim := sitesim.New(sitesim.Config{Seed: 5, Now: func() time.Time { return at }, DaysAhead: 4})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	sites := langSites(t, srv.URL, "lang-sale-else-list", "lang-rowspan")
	var stdout bytes.Buffer
	if err := run(t.Context(), []string{"try", "--sites", sites, "--site", "lang-sale-else-list", "--date", "2025-12-05", "--target", "138"},
		env(nil), &stdout, &bytes.Buffer{}); err != nil {
		t.Fatalf("try: %v\n%s", err, stdout.String())
	}
	for _, want := range []string{"price from", "  BK_S_CHARGE_NM\n", "  BK_B_CHARGE_NM\n"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("try's output lacks %q:\n%s", want, stdout.String())
		}
	}
	stdout.Reset()
	if err := run(t.Context(), []string{"try", "--sites", sites, "--site", "lang-rowspan", "--date", "2025-12-05", "--target", "138", "--dump"},
		env(nil), &stdout, &bytes.Buffer{}); err != nil {
		t.Fatalf("try: %v\n%s", err, stdout.String())
	}
	for _, want := range []string{"--- the rows as the grid shows them", "   동코스 | 06:00 | 18홀 | ", "   ↑동코스 | 06:08 | 18홀 | ",
		"레이크&힐스 CC  동코스  2025-12-05  2025-12-05  06:08"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("try --dump's output lacks %q:\n%s", want, stdout.String())
		}
	}
}

// A value captured from an earlier answer is a secret: after `crawler run` crawled the CSRF and
// session-id sites and `crawler try --dump` showed them (debug logging on), none of the tokens and
// session ids the simulator issued is in the events file, try's output, the log or /metrics, and
// the events' URLs carry no sid parameter.
func TestCapturedValuesStaySecret(t *testing.T) {
	t.Parallel()
	// Tomorrow is crawled too (days_ahead 1), released since yesterday (DaysAhead 2): today's
	// tee times alone were all past from late morning KST on (4 a day), so the crawl opened
	// nothing and the events file was empty until midnight KST.
	sim := sitesim.New(sitesim.Config{Seed: 9, TeeTimesPerDay: 4, DaysAhead: 2})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	names := []string{"lang-csrf", "lang-csrf-json", "lang-sid"}
	text := "sites:\n"
	for _, name := range names {
		text += sitesim.CorpusEntry(name, srv.URL) + "    politeness: {no_delay: true}\n    days_ahead: 1\n"
	}
	sites := testkit.WriteTemp(t, "sites.yaml", text)
	dir := t.TempDir()
	events := filepath.Join(dir, "events.jsonl")
	addr := testkit.FreeAddr(t)
	var logs testkit.SyncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		errc <- run(ctx, []string{"run", "--schedule", "@every 1s", "--metrics-addr", addr, "--state-dir", filepath.Join(dir, "state"),
			"--events-out", events, "--sites", sites}, env(map[string]string{"LOG_LEVEL": "debug", "KAFKA_BOOTSTRAP": ""}), &bytes.Buffer{}, &logs)
	}()
	var metrics string
	testkit.WaitFor(t, 60*time.Second, "a run that crawled every site", func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false // not listening yet
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		metrics = string(body)
		return strings.Contains(metrics, `crawler_runs_total{outcome="ok"}`)
	})
	cancel()
	testkit.NoErr(t, errc, 20*time.Second, "run after cancel")
	var try bytes.Buffer
	for _, name := range names {
		if err := run(t.Context(), []string{"try", "--sites", sites, "--site", name, "--dump"},
			env(map[string]string{"LOG_LEVEL": "debug"}), &try, &try); err != nil {
			t.Fatalf("try %s: %v\n%s", name, err, try.String())
		}
	}
	if !strings.Contains(try.String(), "captured csrf for the requests after it (a secret: never shown)") || !strings.Contains(try.String(), "sid=***") {
		t.Errorf("try does not say what it captured, or shows the sid:\n%s", try.String())
	}
	written, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(written, []byte(`"listing_opened"`)) || bytes.Contains(written, []byte("sid=")) {
		t.Errorf("the events file has no openings, or a URL with a sid:\n%.2000s\nthe run's log:\n%.6000s", written, logs.String())
	}
	secrets := sim.IssuedSecrets()
	if len(secrets) < 6 {
		t.Fatalf("the simulator issued %d session ids and tokens; want the run's and try's", len(secrets))
	}
	for _, s := range secrets {
		for what, text := range map[string]string{"the events file": string(written), "try's output": try.String(), "the log": logs.String(), "/metrics": metrics} {
			if strings.Contains(text, s) {
				t.Errorf("the captured value %s is in %s", s, what)
			}
		}
	}
}
