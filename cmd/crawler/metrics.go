package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/internal/metricsserver"
)

// crawlerMetrics is the crawler's Prometheus collector, kept out of package crawler as franz-go
// keeps kprom out of kgo: it implements crawler.RunMetrics (the Runner's and Collect's hooks) and
// kafkabus.PublisherMetrics, so one value is passed to the Runner and to the publisher. Its
// metrics live in a registry of its own (never the global one, so that tests and two crawlers in
// one process do not collide); health is /healthz's state, fed by the same calls. All methods are
// safe for concurrent use; use newCrawlerMetrics.
type crawlerMetrics struct {
	reg    *prometheus.Registry
	health *crawler.Health
	now    func() time.Time

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
	notOpen     *prometheus.CounterVec // source
	events      *prometheus.CounterVec // source, type
	incomplete  *prometheus.CounterVec // source, reason
	siteErrors  *prometheus.CounterVec // source
	sent        prometheus.Counter
	failed      prometheus.Counter
	dropped     *droppedCounter
	lastDone    *prometheus.GaugeVec   // source
	notDone     *prometheus.GaugeVec   // source
	nextCrawl   *prometheus.GaugeVec   // source
	siteSkipped *prometheus.CounterVec // source
	watched     *watchedAges
}

var (
	_ crawler.RunMetrics        = (*crawlerMetrics)(nil)
	_ kafkabus.PublisherMetrics = (*crawlerMetrics)(nil)
)

// newCrawlerMetrics registers the crawler's metrics (prefix crawler_) and the Go and process
// collectors in a new registry. now stamps /healthz's started_at; nil means time.Now.
func newCrawlerMetrics(now func() time.Time) *crawlerMetrics {
	reg := prometheus.NewRegistry()
	f := func(c prometheus.Collector) { reg.MustRegister(c) }
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "crawler_" + name, Help: help}, labels)
		f(v)
		return v
	}
	if now == nil {
		now = time.Now
	}
	m := &crawlerMetrics{
		reg:    reg,
		now:    now,
		health: crawler.NewHealth(now),
		runs:   counter("runs_total", "Crawl runs (one crawl of every configured site) by outcome: ok, or failed when a site errored or was incomplete.", "outcome"),
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
		notOpen:    counter("pages_not_open_total", "Pages that answered that their date is not open for booking yet (not_open, json.not_open_when): they open and close nothing and keep the crawl complete.", "source"),
		events:     counter("events_total", "Booking events emitted, by type.", "source", "type"),
		incomplete: counter("incomplete_crawls_total", "Crawls of a site that were incomplete, by reason (failed_pages, max_pages, cancelled, collapsed, deadline, timeouts): no closes were emitted.", "source", "reason"),
		siteErrors: counter("crawl_errors_total", "Crawls of a site that failed outright (bad config, state I/O, cancelled).", "source"),
		sent: prometheus.NewCounter(prometheus.CounterOpts{Name: "crawler_publish_sent_total",
			Help: "Booking events acknowledged by Kafka."}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{Name: "crawler_publish_failed_total",
			Help: "Booking events given up on: rejected by the broker for good (or unencodable)."}),
		dropped: newDroppedCounter(),
		lastDone: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "crawler_last_complete_crawl_timestamp_seconds",
			Help: "Unix time of the site's last complete crawl (kept in its snapshot, so it survives restarts); absent until one."}, []string{"source"}),
		notDone: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "crawler_consecutive_incomplete_crawls",
			Help: "Crawls of the site since its last complete one (incomplete, collapsed or errored): a site whose layout changed grows it forever."}, []string{"source"}),
		nextCrawl: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "crawler_site_next_crawl_timestamp_seconds",
			Help: "Unix time of the site's next crawl (its schedule, active hours, jitter and bursts; set when some site times its own crawls)."}, []string{"source"}),
		siteSkipped: counter("site_skipped_runs_total", "A site's crawl times skipped because its previous crawl was still running (per-site schedules; counted in crawler_skipped_runs_total too).", "source"),
		watched:     &watchedAges{now: now, oldest: map[string]time.Time{}},
	}
	for _, c := range []prometheus.Collector{m.lastDone, m.notDone, m.nextCrawl, m.runDuration, m.skipped, m.lastRun, m.sent, m.failed, m.dropped, m.watched,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		f(c)
	}
	return m
}

// PageFetched implements crawler.Metrics.
func (m *crawlerMetrics) PageFetched(site string, status int) {
	m.fetches.WithLabelValues(site, strconv.Itoa(status)).Inc()
}

// RowRejected implements crawler.Metrics.
func (m *crawlerMetrics) RowRejected(site, reason string) {
	m.rejected.WithLabelValues(site, reason).Inc()
}

// PageFailed implements crawler.Metrics.
func (m *crawlerMetrics) PageFailed(site, reason string) {
	m.pageFails.WithLabelValues(site, reason).Inc()
}

var _ crawler.NotOpenMetrics = (*crawlerMetrics)(nil)

// PageNotOpen implements crawler.NotOpenMetrics.
func (m *crawlerMetrics) PageNotOpen(site string) { m.notOpen.WithLabelValues(site).Inc() }

// Retry implements crawler.Metrics.
func (m *crawlerMetrics) Retry(site string) { m.retries.WithLabelValues(site).Inc() }

// Sent implements kafkabus.PublisherMetrics.
func (m *crawlerMetrics) Sent(n int) { m.sent.Add(float64(n)) }

// Failed implements kafkabus.PublisherMetrics.
func (m *crawlerMetrics) Failed(n int) { m.failed.Add(float64(n)) }

// SkippedRun counts a scheduled run skipped because the previous one was still going
// (crawler.Schedule's OnSkip).
func (m *crawlerMetrics) SkippedRun() {
	m.skipped.Inc()
	m.health.SkippedRun()
}

// SiteSkipped is SkippedRun for one site under per-site schedules (crawler.SiteSchedule.OnSkip).
func (m *crawlerMetrics) SiteSkipped(site string) {
	m.siteSkipped.WithLabelValues(site).Inc()
	m.SkippedRun()
}

// NextCrawl sets the site's next crawl time (crawler.SiteSchedule.OnNext); zero: none.
func (m *crawlerMetrics) NextCrawl(site string, at time.Time) {
	if at.IsZero() {
		m.nextCrawl.DeleteLabelValues(site)
		return
	}
	m.nextCrawl.WithLabelValues(site).Set(float64(at.UnixMilli()) / 1000)
}

// Watched records the last fetch of the site's stalest watched page set (crawler.SiteSchedule's
// OnWatched; zero: none watched), for crawler_site_watched_oldest_age_seconds and /healthz.
func (m *crawlerMetrics) Watched(site string, oldest time.Time) {
	m.watched.set(site, oldest)
	m.health.Watched(site, oldest)
}

// watchedAges is crawler_site_watched_oldest_age_seconds: each site's oldest watched page set's
// age, computed at the scrape.
type watchedAges struct {
	now    func() time.Time
	mu     sync.Mutex
	oldest map[string]time.Time // zero: none watched
}

var watchedAgeDesc = prometheus.NewDesc("crawler_site_watched_oldest_age_seconds",
	"Age of the last fetch of the site's stalest watched page set (a page set some watch in force can match, crawled every watched_every); absent while none is watched.",
	[]string{"source"}, nil)

func (w *watchedAges) set(site string, oldest time.Time) {
	w.mu.Lock()
	w.oldest[site] = oldest
	w.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (w *watchedAges) Describe(ch chan<- *prometheus.Desc) { ch <- watchedAgeDesc }

// Collect implements prometheus.Collector.
func (w *watchedAges) Collect(ch chan<- prometheus.Metric) {
	now := w.now()
	w.mu.Lock()
	defer w.mu.Unlock()
	for site, at := range w.oldest {
		if !at.IsZero() {
			ch <- prometheus.MustNewConstMetric(watchedAgeDesc, prometheus.GaugeValue, max(0, now.Sub(at).Seconds()), site)
		}
	}
}

// SiteCrawled implements crawler.RunMetrics.
func (m *crawlerMetrics) SiteCrawled(s crawler.SiteSummary) {
	h := m.health.SiteCrawled(s)
	if s.Err == nil && h.LastCompleteAt != nil {
		m.lastDone.WithLabelValues(s.Source).Set(float64(h.LastCompleteAt.UnixMilli()) / 1000)
	}
	m.notDone.WithLabelValues(s.Source).Set(float64(h.IncompleteRuns))
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

// RunFinished implements crawler.RunMetrics.
func (m *crawlerMetrics) RunFinished(outcome string, end time.Time, d time.Duration) {
	m.runs.WithLabelValues(outcome).Inc()
	m.runDuration.Observe(d.Seconds())
	m.lastRun.Set(float64(end.UnixMilli()) / 1000)
	m.health.RunFinished(outcome, end, d)
}

// Handler serves /metrics (Prometheus text format) and /healthz (crawler.Health).
func (m *crawlerMetrics) Handler() http.Handler {
	return metricsserver.Handler(m.reg, m.health.ServeHTTP)
}

// Serve serves Handler on ln until ctx is done, then shuts down within 5 s. It returns nil after
// a clean shutdown.
func (m *crawlerMetrics) Serve(ctx context.Context, ln net.Listener, logger *slog.Logger) error {
	return metricsserver.Serve(ctx, ln, m.Handler(), logger)
}
