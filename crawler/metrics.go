package crawler

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/metricsserver"
)

// Outcomes of a run (label outcome of crawler_runs_total, and /healthz's last_outcome).
const (
	OutcomeOK     = "ok"     // every site's crawl was complete
	OutcomeFailed = "failed" // at least one site's crawl errored or was incomplete
)

// CrawlerMetrics holds the crawler's Prometheus metrics in a registry of its own (never the global
// one, so that tests and two crawlers in one process do not collide) and the state /healthz
// reports. It implements Metrics (Collect's hook) and kafkabus.PublisherMetrics, so one value is
// passed to the collector and to the publisher. All methods are safe for concurrent use; a nil
// *CrawlerMetrics is not valid, use NewCrawlerMetrics.
type CrawlerMetrics struct {
	reg *prometheus.Registry

	runs        *prometheus.CounterVec // outcome
	runDuration prometheus.Histogram
	skipped     prometheus.Counter
	lastRun     prometheus.Gauge
	fetches     *prometheus.CounterVec // source, status
	retries     *prometheus.CounterVec // source
	pages       *prometheus.CounterVec // source
	rows        *prometheus.CounterVec // source
	rejected    *prometheus.CounterVec // source, reason
	pageFails   *prometheus.CounterVec // source, reason
	events      *prometheus.CounterVec // source, type
	incomplete  *prometheus.CounterVec // source, reason
	siteErrors  *prometheus.CounterVec // source
	sent        prometheus.Counter
	failed      prometheus.Counter
	dropped     prometheus.Counter
	queueDepth  prometheus.Gauge
	lastDone    *prometheus.GaugeVec // source
	notDone     *prometheus.GaugeVec // source

	// UnhealthyAfter makes /healthz answer 503 when a site has had no complete crawl for this many
	// crawls in a row (incomplete or errored); 0 never does. Set it before serving.
	UnhealthyAfter int

	mu     sync.Mutex
	health healthState
	sites  map[string]*SiteHealth
	checks map[string]HealthCheck // AddHealthCheck
}

// SiteHealth is one site's entry in /healthz.
type SiteHealth struct {
	LastCompleteAt *time.Time `json:"last_complete_at,omitempty"`
	// IncompleteRuns counts the site's crawls since its last complete one (incomplete or errored).
	IncompleteRuns int `json:"incomplete_runs"`
}

// healthState is the JSON body of /healthz.
type healthState struct {
	Status      string     `json:"status"`
	StartedAt   time.Time  `json:"started_at"`
	Runs        int        `json:"runs"`
	SkippedRuns int        `json:"skipped_runs"`
	LastRunAt   *time.Time `json:"last_run_at,omitempty"`
	LastOutcome string     `json:"last_outcome,omitempty"`
	LastRunSecs float64    `json:"last_run_duration_seconds,omitempty"`
	Reason      string     `json:"reason,omitempty"` // why status is "unhealthy"

	Sites  map[string]SiteHealth `json:"sites,omitempty"`
	Checks map[string]any        `json:"checks,omitempty"` // the sections AddHealthCheck added
}

// cmd/crawler asserts that CrawlerMetrics also satisfies kafkabus.PublisherMetrics, so this package
// links no Kafka client.
var _ Metrics = (*CrawlerMetrics)(nil)

// NewCrawlerMetrics registers the crawler's metrics (prefix crawler_) and the Go and process
// collectors in a new registry. now stamps /healthz's started_at; nil means time.Now.
func NewCrawlerMetrics(now func() time.Time) *CrawlerMetrics {
	if now == nil {
		now = time.Now
	}
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "crawler_" + name, Help: help}, labels)
		f(v)
		return v
	}
	m := &CrawlerMetrics{
		reg:  reg,
		runs: counter("runs_total", "Crawl runs (one crawl of every configured site) by outcome: ok, or failed when a site errored or was incomplete.", "outcome"),
		runDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "crawler_run_duration_seconds", Help: "Wall time of one run over all sites.",
			Buckets: prometheus.ExponentialBuckets(0.5, 2, 12), // 0.5 s .. ~17 min
		}),
		skipped: prometheus.NewCounter(prometheus.CounterOpts{Name: "crawler_skipped_runs_total",
			Help: "Scheduled runs skipped because the previous run was still going."}),
		lastRun: prometheus.NewGauge(prometheus.GaugeOpts{Name: "crawler_last_run_timestamp_seconds",
			Help: "Unix time at which the last run ended."}),
		fetches:    counter("page_fetches_total", "HTTP attempts per page, retries included, by response status (0: no response).", "source", "status"),
		retries:    counter("page_retries_total", "Page re-fetches after a timeout, 5xx or 429.", "source"),
		pages:      counter("pages_total", "Pages fetched and parsed.", "source"),
		rows:       counter("rows_parsed_total", "Listing rows seen, rejected ones included.", "source"),
		rejected:   counter("rows_rejected_total", "Rows skipped because a cell could not be read, by reason.", "source", "reason"),
		pageFails:  counter("pages_failed_total", "Pages that failed after their retries, by reason: no_list (an HTML page with neither rows nor its list), bad_answer (a JSON answer neither rows nor a declared empty one), undecodable (U+FFFD in a cell after decoding), fetch (anything else).", "source", "reason"),
		events:     counter("events_total", "Booking events emitted, by type.", "source", "type"),
		incomplete: counter("incomplete_crawls_total", "Crawls of a site that were incomplete, by reason (failed_pages, max_pages, cancelled, collapsed, deadline): no closes were emitted.", "source", "reason"),
		siteErrors: counter("crawl_errors_total", "Crawls of a site that failed outright (bad config, state I/O, cancelled).", "source"),
		sent: prometheus.NewCounter(prometheus.CounterOpts{Name: "crawler_publish_sent_total",
			Help: "Booking events acknowledged by Kafka."}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{Name: "crawler_publish_failed_total",
			Help: "Booking events given up on: retry window exhausted or rejected by the broker."}),
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "crawler_publish_dropped_total",
			Help: "Booking events never tried: publish queue full, or still queued at shutdown."}),
		queueDepth: prometheus.NewGauge(prometheus.GaugeOpts{Name: "crawler_publish_queue_depth",
			Help: "Booking events accepted by the publisher and not yet sent, failed or dropped."}),
		health: healthState{Status: "ok", StartedAt: now()},
		sites:  map[string]*SiteHealth{},
		lastDone: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "crawler_last_complete_crawl_timestamp_seconds",
			Help: "Unix time of the site's last complete crawl (kept in its snapshot, so it survives restarts); absent until one."}, []string{"source"}),
		notDone: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "crawler_consecutive_incomplete_crawls",
			Help: "Crawls of the site since its last complete one (incomplete, collapsed or errored): a site whose layout changed grows it forever."}, []string{"source"}),
	}
	for _, c := range []prometheus.Collector{m.lastDone, m.notDone, m.runDuration, m.skipped, m.lastRun, m.sent, m.failed, m.dropped, m.queueDepth,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		f(c)
	}
	return m
}

// Registry returns the registry the metrics live in (for tests and extra collectors).
func (m *CrawlerMetrics) Registry() *prometheus.Registry { return m.reg }

// PageFetched implements Metrics.
func (m *CrawlerMetrics) PageFetched(site string, status int) {
	m.fetches.WithLabelValues(site, strconv.Itoa(status)).Inc()
}

// RowRejected implements Metrics.
func (m *CrawlerMetrics) RowRejected(site, reason string) {
	m.rejected.WithLabelValues(site, reason).Inc()
}

// PageFailed implements Metrics.
func (m *CrawlerMetrics) PageFailed(site, reason string) {
	m.pageFails.WithLabelValues(site, reason).Inc()
}

// Retry implements Metrics.
func (m *CrawlerMetrics) Retry(site string) { m.retries.WithLabelValues(site).Inc() }

// Sent implements kafkabus.PublisherMetrics.
func (m *CrawlerMetrics) Sent(n int) { m.sent.Add(float64(n)) }

// Failed implements kafkabus.PublisherMetrics.
func (m *CrawlerMetrics) Failed(n int) { m.failed.Add(float64(n)) }

// Dropped implements kafkabus.PublisherMetrics.
func (m *CrawlerMetrics) Dropped(n int) { m.dropped.Add(float64(n)) }

// QueueDepth implements kafkabus.PublisherMetrics.
func (m *CrawlerMetrics) QueueDepth(n int) { m.queueDepth.Set(float64(n)) }

// SkippedRun counts a scheduled run skipped because the previous one was still going.
func (m *CrawlerMetrics) SkippedRun() {
	m.skipped.Inc()
	m.mu.Lock()
	m.health.SkippedRuns++
	m.mu.Unlock()
}

// siteCrawled records one site's crawl.
func (m *CrawlerMetrics) siteCrawled(s SiteSummary) {
	m.mu.Lock()
	h := m.sites[s.Source]
	if h == nil {
		h = &SiteHealth{}
		m.sites[s.Source] = h
	}
	if s.Err != nil {
		h.IncompleteRuns++
	} else {
		h.IncompleteRuns = s.IncompleteRuns
		if !s.LastComplete.IsZero() {
			at := s.LastComplete
			h.LastCompleteAt = &at
			m.lastDone.WithLabelValues(s.Source).Set(float64(at.UnixMilli()) / 1000)
		}
	}
	m.notDone.WithLabelValues(s.Source).Set(float64(h.IncompleteRuns))
	m.mu.Unlock()
	if s.Err != nil {
		m.siteErrors.WithLabelValues(s.Source).Inc()
		return
	}
	m.pages.WithLabelValues(s.Source).Add(float64(s.Pages))
	m.rows.WithLabelValues(s.Source).Add(float64(s.Rows))
	m.events.WithLabelValues(s.Source, string(events.ListingOpened)).Add(float64(s.Opened))
	m.events.WithLabelValues(s.Source, string(events.ListingChanged)).Add(float64(s.Changed))
	m.events.WithLabelValues(s.Source, string(events.ListingClosed)).Add(float64(s.Closed))
	if !s.Complete {
		m.incomplete.WithLabelValues(s.Source, s.Incomplete).Inc()
	}
}

// runFinished records a run that ended at end.
func (m *CrawlerMetrics) runFinished(outcome string, end time.Time, d time.Duration) {
	m.runs.WithLabelValues(outcome).Inc()
	m.runDuration.Observe(d.Seconds())
	m.lastRun.Set(float64(end.UnixMilli()) / 1000)
	m.mu.Lock()
	m.health.Runs++
	m.health.LastRunAt = &end
	m.health.LastOutcome = outcome
	m.health.LastRunSecs = d.Seconds()
	m.mu.Unlock()
}

// Handler serves /metrics (Prometheus text format) and /healthz, with a JSON body {status,
// started_at, runs, skipped_runs, last_run_at, last_outcome, last_run_duration_seconds, sites:
// {name: {last_complete_at, incomplete_runs}}, checks: {name: ...}, reason}. /healthz answers 200
// while the process serves, except when a site has had no complete crawl for UnhealthyAfter crawls
// in a row, or a check added with AddHealthCheck reports a problem: then 503, status "unhealthy"
// and a reason naming the sites (and the checks' reasons), so that an orchestrator notices a site
// whose layout changed (its crawls are incomplete, so nothing ever closes) instead of the
// crawler silently never closing. One failed crawl is a metric to alert on, not a 503.
func (m *CrawlerMetrics) Handler() http.Handler {
	return metricsserver.Handler(m.reg, func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		h := m.health
		h.Sites = make(map[string]SiteHealth, len(m.sites))
		var bad []string
		for name, sh := range m.sites {
			h.Sites[name] = *sh
			if m.UnhealthyAfter > 0 && sh.IncompleteRuns >= m.UnhealthyAfter {
				since := "ever"
				if sh.LastCompleteAt != nil {
					since = "since " + sh.LastCompleteAt.Format(time.RFC3339)
				}
				bad = append(bad, fmt.Sprintf("site %s: no complete crawl in %d runs (%s)", name, sh.IncompleteRuns, since))
			}
		}
		m.mu.Unlock()
		bad = append(bad, m.runChecks(&h)...)
		w.Header().Set("Content-Type", "application/json")
		if len(bad) > 0 {
			slices.Sort(bad)
			h.Status, h.Reason = "unhealthy", strings.Join(bad, "; ")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(h) // the client went away: nothing to do
	})
}

// Serve serves Handler on ln until ctx is done, then shuts down within 5 s. It returns nil after
// a clean shutdown.
func (m *CrawlerMetrics) Serve(ctx context.Context, ln net.Listener, logger *slog.Logger) error {
	return metricsserver.Serve(ctx, ln, m.Handler(), logger)
}
