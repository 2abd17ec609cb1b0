package crawler

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestHealthCheckSection: a section added with AddHealthCheck shows in /healthz's checks, and
// its reasons turn /healthz into a 503 with the reason, until they go away.
func TestHealthCheckSection(t *testing.T) {
	t.Parallel()
	m := NewCrawlerMetrics(func() time.Time { return time.Unix(0, 0) })
	var failing atomic.Bool
	m.AddHealthCheck("alerts", func() (any, []string) {
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
