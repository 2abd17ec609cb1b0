package kafkabus_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
)

func TestWaitForTopic(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	brokers := []string{addr}

	t.Run("Missing", func(t *testing.T) {
		t.Parallel()
		topic := kafkatest.Name(t, "missing")
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		waited := 0
		_, err := kafkabus.WaitForTopic(ctx, brokers, topic, func() { waited++ })
		if err == nil || !strings.Contains(err.Error(), topic) {
			t.Fatalf("WaitForTopic(missing) = %v, want an error naming %s", err, topic)
		}
		if waited != 1 {
			t.Errorf("waiting called %d times, want once", waited)
		}
	})

	t.Run("CreatedWhileWaiting", func(t *testing.T) {
		t.Parallel()
		topic := kafkatest.Name(t, "later")
		t.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), addr, topic) })
		waiting := make(chan struct{})
		go func() {
			<-waiting
			time.Sleep(300 * time.Millisecond)
			if err := kafkabus.CreateTopic(t.Context(), addr, topic, 3); err != nil {
				t.Errorf("create %s: %v", topic, err)
			}
		}()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		start := time.Now()
		parts, err := kafkabus.WaitForTopic(ctx, brokers, topic, func() { close(waiting) })
		if err != nil || len(parts) != 3 {
			t.Fatalf("WaitForTopic = %v, %v; want 3 partitions", parts, err)
		}
		t.Logf("topic ready %v after the wait began", time.Since(start))
	})
}
