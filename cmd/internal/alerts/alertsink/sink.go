// Package alertsink is the alert service's sink for the Kafka consume loop (package consumer) of
// `booking-consumer notify`. It is a package of its own because it speaks store's messages and
// results: package alerts links no PostgreSQL driver (its deps test), package store does.
package alertsink

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
)

// Sink is the notifier's sink for the consume loop: each batch's events claimed by the alert
// service in one transaction, so that the loop commits the batch's offsets only once every match
// is durable. Undecodable messages are ignored (the booking consumer dead-letters them).
type Sink struct {
	Service *alerts.Service
	Logger  *slog.Logger
}

// Ingest claims the decoded events of batch: Inserted counts the claims made, Duplicates the
// rest of the batch.
func (c Sink) Ingest(ctx context.Context, batch []store.Message) (store.Result, error) {
	evs := make([]*events.Event, 0, len(batch))
	for _, m := range batch {
		if m.Err == nil && m.Event != nil {
			evs = append(evs, m.Event)
		}
	}
	if invalid := len(batch) - len(evs); invalid > 0 {
		c.Logger.WarnContext(ctx, "notifier: ignoring undecodable messages (the booking consumer dead-letters them)", "count", invalid)
	}
	claimed, err := c.Service.Claim(ctx, alerts.Crawl{Events: evs})
	if err != nil {
		return store.Result{}, fmt.Errorf("a batch of %d: %w", len(batch), err)
	}
	return store.Result{Inserted: claimed, Duplicates: len(batch) - min(claimed, len(batch))}, nil
}
