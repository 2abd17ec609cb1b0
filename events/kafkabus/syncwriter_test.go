package kafkabus_test

import (
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
)

// TestSyncWriterRealBroker writes through the replay writer and checks end offsets.
func TestSyncWriterRealBroker(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	w := kafkabus.NewSyncWriter(kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic})
	defer w.Close()
	if err := w.WriteEvents(t.Context(), testEvents(300, 30)); err != nil {
		t.Fatal(err)
	}
	n, err := kafkatest.EndOffsets(t.Context(), addr, topic)
	if err != nil || n != 300 {
		t.Fatalf("end offsets %d, %v; want 300", n, err)
	}
}

func TestSyncWriterNoBrokers(t *testing.T) {
	t.Parallel()
	w := kafkabus.NewSyncWriter(kafkabus.PublisherConfig{Brokers: kafkabus.ParseBrokers(" ,")})
	if err := w.WriteEvents(t.Context(), testEvents(1, 1)); err == nil || !strings.Contains(err.Error(), "no kafka brokers") {
		t.Fatalf("err %v", err)
	}
}
