package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
)

func TestEnsureTopicCreatesOnceAndKeepsExisting(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Name(t, "ensure")
	t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), addr, topic) })
	logger := slog.New(slog.DiscardHandler)
	for range 2 { // the second call finds it and leaves it alone
		if err := ensureTopic(t.Context(), logger, []string{addr}, topic, 3); err != nil {
			t.Fatal(err)
		}
	}
	// The broker answers CreateTopics before its metadata has the topic: wait for it, as the
	// consumer's start-up does (read at once, a cold broker said Unknown Topic Or Partition).
	parts, err := kafkabus.WaitForTopic(t.Context(), []string{addr}, topic, nil)
	if err != nil || len(parts) != 3 {
		t.Fatalf("topic %s: %d partitions, err %v; want 3", topic, len(parts), err)
	}
}

func TestHealthcheck(t *testing.T) {
	t.Parallel()
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(status) }))
	defer srv.Close()
	if _, _, err := runCLI(t, t.Context(), nil, "healthcheck", "--url", srv.URL); err != nil {
		t.Fatalf("healthy server: %v", err)
	}
	status = http.StatusServiceUnavailable
	if _, _, err := runCLI(t, t.Context(), nil, "healthcheck", "--url", srv.URL); err == nil {
		t.Fatal("503 passed the healthcheck")
	}
}
