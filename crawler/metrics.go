package crawler

import "time"

// Outcomes of a run (label outcome of crawler_runs_total, and /healthz's last_outcome).
const (
	OutcomeOK     = "ok"     // every site's crawl was complete
	OutcomeFailed = "failed" // at least one site's crawl errored or was incomplete
)

// RunMetrics receives a Runner's counters: Collect's per page and row (Metrics), then one call per
// site crawled and one per run. Implementations must be safe for concurrent use. The crawler
// imports no metrics library, as franz-go's kgo leaves Prometheus to its kprom plugin:
// cmd/crawler implements RunMetrics with Prometheus (prefix crawler_) and serves it beside
// /healthz, whose state is Health.
type RunMetrics interface {
	Metrics
	// SiteCrawled is called once per site crawl, when it ended (errored, incomplete or complete).
	SiteCrawled(s SiteSummary)
	// RunFinished is called once per run, when every site's crawl ended; outcome is OutcomeOK or
	// OutcomeFailed.
	RunFinished(outcome string, end time.Time, d time.Duration)
}
