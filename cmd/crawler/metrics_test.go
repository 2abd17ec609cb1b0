package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"log/slog"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestMetricsServe serves /metrics and /healthz on a real listener: the metric names the issue
// asks for are there (with the names, labels and help texts they had in package crawler), and
// /healthz reports the last run.
func TestMetricsServe(t *testing.T) {
	t.Parallel()
	start := time.Date(2025, 12, 1, 10, 0, 0, 0, site.Seoul())
	m := newCrawlerMetrics(func() time.Time { return start })
	m.PageFetched("s", 200)
	m.RowRejected("s", site.RejectBadPrice)
	m.PageFailed("s", crawler.FailUndecodable)
	m.Retry("s")
	m.Sent(3)
	m.Failed(1)
	m.SkippedRun()
	m.SiteCrawled(crawler.SiteSummary{Source: "s", Pages: 4, Rows: 40, Opened: 30, Changed: 2, Closed: 1, Complete: false, Incomplete: crawler.IncompleteFailedPages})
	m.RunFinished(crawler.OutcomeFailed, start.Add(time.Minute), 90*time.Second)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- m.Serve(ctx, ln, testkit.Logger(t, slog.LevelWarn)) }()
	base := "http://" + ln.Addr().String()

	get := func(path string) string {
		t.Helper()
		code, body := testkit.Get(t, base+path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, code, http.StatusText(code))
		}
		return body
	}
	body := get("/metrics")
	for _, want := range []string{
		`crawler_runs_total{outcome="failed"} 1`,
		"crawler_run_duration_seconds_count 1",
		`crawler_page_fetches_total{source="s",status="200"} 1`,
		`crawler_page_retries_total{source="s"} 1`,
		`crawler_pages_total{source="s"} 4`,
		`crawler_rows_parsed_total{source="s"} 40`,
		`crawler_rows_rejected_total{reason="bad_price",source="s"} 1`,
		`crawler_pages_failed_total{reason="undecodable",source="s"} 1`,
		`crawler_events_total{source="s",type="listing_opened"} 30`,
		`crawler_events_total{source="s",type="listing_changed"} 2`,
		`crawler_events_total{source="s",type="listing_closed"} 1`,
		`crawler_incomplete_crawls_total{reason="failed_pages",source="s"} 1`,
		"crawler_skipped_runs_total 1",
		"crawler_publish_sent_total 3",
		"crawler_publish_failed_total 1",
		"go_goroutines",
	} {
		if !strings.Contains(body, want+"\n") && !strings.Contains(body, want+" ") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// The events waiting for Kafka are crawler_spool_unsent_events alone (the spool replaced the
	// publisher's queue); a second name for the same number was a second meaning to keep apart.
	if strings.Contains(body, "crawler_publish_queue_depth") {
		t.Error("/metrics still has crawler_publish_queue_depth, the spool's unsent events under another name")
	}
	var h struct {
		Status      string    `json:"status"`
		Runs        int       `json:"runs"`
		SkippedRuns int       `json:"skipped_runs"`
		LastRunAt   time.Time `json:"last_run_at"`
		LastOutcome string    `json:"last_outcome"`
	}
	if err := json.Unmarshal([]byte(get("/healthz")), &h); err != nil {
		t.Fatal(err)
	}
	if h.Status != "ok" || h.Runs != 1 || h.SkippedRuns != 1 || h.LastOutcome != crawler.OutcomeFailed || !h.LastRunAt.Equal(start.Add(time.Minute)) {
		t.Errorf("/healthz = %+v", h)
	}
	cancel()
	testkit.NoErr(t, errc, 10*time.Second, "Serve after its context was cancelled")
}

// TestHealthCheckSection: a section added with AddHealthCheck shows in /healthz's checks, and
// its reasons turn /healthz into a 503 with the reason, until they go away.
func TestHealthCheckSection(t *testing.T) {
	t.Parallel()
	m := newCrawlerMetrics(func() time.Time { return time.Unix(0, 0) })
	var failing atomic.Bool
	m.health.AddHealthCheck("alerts", func() (any, []string) {
		if failing.Load() {
			return map[string]string{"hook": "failing"}, []string{"alert channel hook failing for 31m"}
		}
		return map[string]string{"hook": "ok"}, nil
	})
	get := func() (int, map[string]any) {
		rec := httptest.NewRecorder()
		m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%v: %s", err, rec.Body.String())
		}
		return rec.Code, body
	}
	code, body := get()
	if code != http.StatusOK || body["checks"].(map[string]any)["alerts"].(map[string]any)["hook"] != "ok" {
		t.Errorf("healthy: %d %v", code, body)
	}
	failing.Store(true)
	code, body = get()
	if code != http.StatusServiceUnavailable || body["status"] != "unhealthy" || !strings.Contains(body["reason"].(string), "hook failing") {
		t.Errorf("failing channel: %d %v", code, body)
	}
}

// TestMetricsSiteSchedule: under per-site schedules /metrics has each site's next crawl time and
// its skipped runs (counted in crawler_skipped_runs_total too); a site with no next time drops
// its gauge.
func TestMetricsSiteSchedule(t *testing.T) {
	t.Parallel()
	m := newCrawlerMetrics(nil)
	at := time.Date(2026, 3, 9, 9, 0, 30, 0, site.Seoul())
	m.NextCrawl("s", at)
	m.NextCrawl("gone", at)
	m.NextCrawl("gone", time.Time{})
	m.SiteSkipped("s")
	m.SiteSkipped("s")
	got := map[string]float64{}
	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			name := f.GetName()
			for _, l := range mt.GetLabel() {
				name += "/" + l.GetValue()
			}
			got[name] = mt.GetGauge().GetValue() + mt.GetCounter().GetValue()
		}
	}
	for name, want := range map[string]float64{
		"crawler_site_next_crawl_timestamp_seconds/s": float64(at.Unix()),
		"crawler_site_skipped_runs_total/s":           2,
		"crawler_skipped_runs_total":                  2,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
	if _, ok := got["crawler_site_next_crawl_timestamp_seconds/gone"]; ok {
		t.Error("a site without a next crawl keeps its gauge")
	}
}
