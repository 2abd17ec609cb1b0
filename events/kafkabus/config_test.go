package kafkabus_test

import (
	"slices"
	"strings"
	"testing"

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

// TestPublisherConfigFromEnv: the brokers, topic and client id come from the environment; the
// old publisher's KAFKA_PUBLISH_RETRY_WINDOW and KAFKA_PUBLISH_QUEUE_SIZE are not read (even a
// bad value), only named by RemovedEnv for the start-up warning.
func TestPublisherConfigFromEnv(t *testing.T) {
	t.Parallel()
	env := map[string]string{"KAFKA_BOOTSTRAP": "a:1,b:2", "KAFKA_TOPIC": " t ", "KAFKA_PUBLISH_RETRY_WINDOW": "soon", "KAFKA_PUBLISH_QUEUE_SIZE": "50"}
	getenv := func(k string) string { return env[k] }
	cfg := kafkabus.PublisherConfigFromEnv(getenv)
	if !slices.Equal(cfg.Brokers, []string{"a:1", "b:2"}) || cfg.Topic != "t" {
		t.Fatalf("got %+v", cfg)
	}
	removed := kafkabus.RemovedEnv(getenv)
	if len(removed) != 2 || !strings.HasPrefix(removed[0], "KAFKA_PUBLISH_RETRY_WINDOW is ignored: ") ||
		!strings.HasPrefix(removed[1], "KAFKA_PUBLISH_QUEUE_SIZE is ignored: ") {
		t.Fatalf("RemovedEnv = %q", removed)
	}
	if r := kafkabus.RemovedEnv(func(string) string { return "" }); r != nil {
		t.Fatalf("RemovedEnv of an empty environment = %q", r)
	}
}
