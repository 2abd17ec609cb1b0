package main

import (
	"bytes"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestOnceExitStatusIgnoresKafka: `crawler once` whose crawl was complete
// exits 0 whatever Kafka did. It exited 1 ("drain cut short") with a black-holed or refusing
// broker; now the unsent events stay in the spool for the next run, said in one line.
func TestOnceExitStatusIgnoresKafka(t *testing.T) {
	t.Parallel()
	sim := sitesim.New(sitesim.Config{Seed: 3, TeeTimesPerDay: 6, DaysAhead: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	sites := sitesFile(t, srv.URL)
	for name, broker := range map[string]string{"refused": "127.0.0.1:1", "blackholed": testkit.BlackHole(t)} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var stderr bytes.Buffer
			err := run(t.Context(), []string{"once", "--state-dir", filepath.Join(dir, "state")},
				env(map[string]string{"CRAWLER_SITES": sites, "KAFKA_BOOTSTRAP": broker, "LOG_FORMAT": "text"}),
				&bytes.Buffer{}, &stderr)
			if err != nil {
				t.Fatalf("once with Kafka %s at %s: %v\n%s", name, broker, err, tail(stderr.String()))
			}
			log := stderr.String()
			if !strings.Contains(log, "msg=\"events not yet acknowledged by Kafka stay in the spool\"") ||
				!regexp.MustCompile(`(?m)^[1-9][0-9]* events spooled for the next run$`).MatchString(log) {
				t.Errorf("no line saying the unsent events stay in the spool:\n%s", tail(log))
			}
		})
	}
}

// TestSecondCrawlerOnOneStateDirExits: `crawler once` on a state dir another crawler holds exits
// with a clear message and does not crawl.
func TestSecondCrawlerOnOneStateDirExits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lock, err := crawler.StateDir{Dir: dir}.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock()
	out := filepath.Join(t.TempDir(), "events.jsonl")
	sim := sitesim.New(sitesim.Config{Seed: 3, TeeTimesPerDay: 6, DaysAhead: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	err = run(t.Context(), []string{"once", "--state-dir", dir, "--events-out", out, "--sites", sitesFile(t, srv.URL)},
		env(map[string]string{"LOG_LEVEL": "error"}), &bytes.Buffer{}, &bytes.Buffer{})
	if !errors.Is(err, crawler.ErrStateLocked) || !strings.Contains(err.Error(), dir+" is in use by another crawler") {
		t.Fatalf("second crawler: %v, want ErrStateLocked naming %s", err, dir)
	}
	if evs := eventstest.ReadEvents(t, out); len(evs) != 0 {
		t.Errorf("the refused crawler wrote %d events", len(evs))
	}
}

func tail(s string) string {
	if len(s) > 3000 {
		return "…" + s[len(s)-3000:]
	}
	return s
}
