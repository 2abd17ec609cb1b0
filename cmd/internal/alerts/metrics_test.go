package alerts_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
)

// TestMetricsPrefix: with a MetricsPrefix the service registers its oldest-unsent gauge and its
// withheld counter under that prefix (`crawler run`'s crawler_alerts_*); without one, neither.
func TestMetricsPrefix(t *testing.T) {
	t.Parallel()
	for prefix, want := range map[string]bool{"crawler_": true, "": false} {
		reg := prometheus.NewRegistry()
		if _, err := alerts.New(stores[0].open(t), alerts.Config{Watches: parse(t, twoWatches), Registerer: reg, MetricsPrefix: prefix}); err != nil {
			t.Fatal(err)
		}
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, mf := range mfs {
			got[mf.GetName()] = true
		}
		for _, name := range []string{"crawler_alerts_oldest_unsent_seconds", "crawler_alerts_withheld_total"} {
			if got[name] != want {
				t.Errorf("prefix %q: %s registered %v, want %v", prefix, name, got[name], want)
			}
		}
	}
}
