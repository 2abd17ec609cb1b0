package crawler

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// testMetrics is the tests' RunMetrics (and kafkabus.PublisherMetrics): the crawler imports no
// Prometheus, so it counts each hook call under the name and labels cmd/crawler's collector
// gives it (cmd/crawler's TestMetricsServe scrapes the real ones), and feeds a Health as the
// collector does.
type testMetrics struct {
	*Health
	mu      sync.Mutex
	samples map[string]*sample // by name and labels
}

type sample struct {
	name   string
	labels map[string]string
	value  float64
}

func newTestMetrics(now func() time.Time) *testMetrics {
	return &testMetrics{Health: NewHealth(now), samples: map[string]*sample{}}
}

var _ RunMetrics = (*testMetrics)(nil)

// record adds v to (or, set, replaces) the sample of name with labels (name, value pairs).
func (m *testMetrics) record(set bool, v float64, name string, labels ...string) {
	l := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		l[labels[i]] = labels[i+1]
	}
	key := name + fmt.Sprint(l) // fmt prints maps sorted by key
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.samples[key]
	if s == nil {
		s = &sample{name: name, labels: l}
		m.samples[key] = s
	}
	if set {
		s.value = v
	} else {
		s.value += v
	}
}

func (m *testMetrics) add(v float64, name string, labels ...string) {
	m.record(false, v, name, labels...)
}

func (m *testMetrics) PageFetched(site string, status int) {
	m.add(1, "crawler_page_fetches_total", "source", site, "status", strconv.Itoa(status))
}
func (m *testMetrics) RowRejected(site, reason string) {
	m.add(1, "crawler_rows_rejected_total", "source", site, "reason", reason)
}
func (m *testMetrics) PageFailed(site, reason string) {
	m.add(1, "crawler_pages_failed_total", "source", site, "reason", reason)
}
func (m *testMetrics) PageNotOpen(site string) {
	m.add(1, "crawler_pages_not_open_total", "source", site)
}
func (m *testMetrics) Retry(site string) { m.add(1, "crawler_page_retries_total", "source", site) }
func (m *testMetrics) Sent(n int)        { m.add(float64(n), "crawler_publish_sent_total") }
func (m *testMetrics) Failed(n int)      { m.add(float64(n), "crawler_publish_failed_total") }

func (m *testMetrics) SkippedRun() {
	m.add(1, "crawler_skipped_runs_total")
	m.Health.SkippedRun()
}

func (m *testMetrics) SiteCrawled(s SiteSummary) {
	h := m.Health.SiteCrawled(s)
	if s.Err == nil && h.LastCompleteAt != nil {
		m.record(true, float64(h.LastCompleteAt.UnixMilli())/1000, "crawler_last_complete_crawl_timestamp_seconds", "source", s.Source)
	}
	m.record(true, float64(h.IncompleteRuns), "crawler_consecutive_incomplete_crawls", "source", s.Source)
	if s.Err != nil {
		m.add(1, "crawler_crawl_errors_total", "source", s.Source)
		return
	}
	m.add(float64(s.Pages), "crawler_pages_total", "source", s.Source)
	m.add(float64(s.Rows), "crawler_rows_parsed_total", "source", s.Source)
	for typ, n := range map[events.Type]int{events.ListingOpened: s.Opened, events.ListingChanged: s.Changed, events.ListingClosed: s.Closed} {
		m.add(float64(n), "crawler_events_total", "source", s.Source, "type", string(typ))
	}
	if !s.Complete {
		m.add(1, "crawler_incomplete_crawls_total", "source", s.Source, "reason", s.Incomplete)
	}
}

func (m *testMetrics) RunFinished(outcome string, end time.Time, d time.Duration) {
	m.add(1, "crawler_runs_total", "outcome", outcome)
	m.record(true, float64(end.UnixMilli())/1000, "crawler_last_run_timestamp_seconds")
	m.Health.RunFinished(outcome, end, d)
}

// Handler serves /healthz (Health) and /metrics: every sample as `name{labels} value`.
func (m *testMetrics) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", m.Health)
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		m.mu.Lock()
		lines := make([]string, 0, len(m.samples))
		for key, s := range m.samples {
			lines = append(lines, fmt.Sprintf("%s %v", key, s.value))
		}
		m.mu.Unlock()
		sort.Strings(lines)
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	})
	return mux
}

// metricSum sums the samples of metric name whose labels include want; m is a *testMetrics.
func metricSum(t testing.TB, rm RunMetrics, name string, want map[string]string) float64 {
	t.Helper()
	m, ok := rm.(*testMetrics)
	if !ok {
		t.Fatalf("metricSum: %T is not the tests' metrics", rm)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var sum float64
samples:
	for _, s := range m.samples {
		if s.name != name {
			continue
		}
		for k, v := range want {
			if s.labels[k] != v {
				continue samples
			}
		}
		sum += s.value
	}
	return sum
}
