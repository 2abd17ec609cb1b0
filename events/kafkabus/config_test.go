package kafkabus_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
)

func TestParseBrokers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{" ", nil},
		{",,", nil},
		{" , ,\t", nil},
		{"a:1", []string{"a:1"}},
		{"a:1, b:2,,", []string{"a:1", "b:2"}},
		{" a:1 ,b:2 ", []string{"a:1", "b:2"}},
	} {
		if got := kafkabus.ParseBrokers(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("ParseBrokers(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzParseBrokers(f *testing.F) {
	for _, s := range []string{"", " ", ",,", "a:1, b:2,,", " a:1 ,b:2 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, b := range kafkabus.ParseBrokers(s) {
			if b == "" || b != strings.TrimSpace(b) || strings.Contains(b, ",") {
				t.Fatalf("ParseBrokers(%q) gave entry %q", s, b)
			}
		}
	})
}

func TestPublisherConfigFromEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"KAFKA_BOOTSTRAP": "a:1,b:2", "KAFKA_PUBLISH_RETRY_WINDOW": "30s", "KAFKA_PUBLISH_QUEUE_SIZE": "50"}
	cfg, err := kafkabus.PublisherConfigFromEnv(func(k string) string { return env[k] })
	if err != nil || !slices.Equal(cfg.Brokers, []string{"a:1", "b:2"}) || cfg.RetryWindow != 30*time.Second || cfg.QueueSize != 50 {
		t.Fatalf("got %+v, %v", cfg, err)
	}
	env["KAFKA_PUBLISH_RETRY_WINDOW"] = "soon"
	if _, err := kafkabus.PublisherConfigFromEnv(func(k string) string { return env[k] }); err == nil {
		t.Fatal("bad retry window accepted")
	}
}
