package consumertest

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// NaiveStore is the naive consumer's work for one message m that it fetched from r, the
// contender the benchmarks set against consumer.Run: decode it, one autocommit INSERT ... ON
// CONFLICT DO NOTHING (storetest.NaiveInsertSQL) into pool, then CommitMessages of m alone.
func NaiveStore(ctx context.Context, r Reader, pool *pgxpool.Pool, m kafka.Message) error {
	e, err := events.Decode(m.Value)
	if err != nil {
		return fmt.Errorf("decode offset %d: %w", m.Offset, err)
	}
	if _, err := pool.Exec(ctx, storetest.NaiveInsertSQL, storetest.Row(e, m.Topic, m.Partition, m.Offset, m.Value)...); err != nil {
		return fmt.Errorf("insert %s: %w", e.EventID, err)
	}
	if err := r.CommitMessages(ctx, m); err != nil {
		return fmt.Errorf("commit offset %d: %w", m.Offset, err)
	}
	return nil
}
