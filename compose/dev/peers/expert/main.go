// Command expert is the benchmark's expert-shaped peer consumer (compose/dev/peers, a module of
// its own so that franz-go never enters the product's build): what an experienced engineer writes
// for "drain a topic into PostgreSQL exactly once by event_id" with franz-go and pgx, and nothing
// more. A franz-go group consumer with autocommit off polls up to -poll records; each poll is one
// transaction: CopyFrom into a temporary table (ON COMMIT DELETE ROWS), INSERT ... SELECT ... ON
// CONFLICT (event_id) DO NOTHING into booking_events, COMMIT; then CommitRecords of the poll.
// Rebalances are blocked while a poll is being stored (BlockRebalanceOnPoll, AllowRebalance after
// the commit), so a poll's offsets are committed by the generation that fetched them.
//
// It stores the same rows as booking-consumer (the product's events.Decode and store.CopyRow), so
// the benchmark compares the consumers, not the row shape. It has no dead letters: a message that
// does not decode ends it (the benchmark's events are all valid).
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
)

func main() {
	var (
		dbURL   = flag.String("database-url", os.Getenv("DATABASE_URL"), "PostgreSQL URL")
		brokers = flag.String("kafka-bootstrap", os.Getenv("KAFKA_BOOTSTRAP"), "Kafka brokers, comma-separated")
		topic   = flag.String("topic", "booking-events", "topic to drain")
		group   = flag.String("group", "expert-peer", "consumer group")
		poll    = flag.Int("poll", 5000, "most records per poll (one transaction each)")
	)
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *dbURL, strings.Split(*brokers, ","), *topic, *group, *poll); err != nil && ctx.Err() == nil {
		slog.Error("expert peer", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, dbURL string, brokers []string, topic, group string, poll int) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(brokers...),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(),
	)
	if err != nil {
		return err
	}
	defer func() { cl.AllowRebalance(); cl.Close() }() // a blocked rebalance would hold the group's LeaveGroup

	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	cols := store.EventColumns()
	list := strings.Join(cols, ", ")
	if _, err := conn.Exec(ctx, "create temp table expert_in on commit delete rows as select "+list+
		" from booking_events with no data"); err != nil {
		return fmt.Errorf("temp table: %w", err)
	}
	insert := "insert into booking_events (" + list + ") select " + list +
		" from expert_in on conflict (event_id) do nothing"

	for {
		fetches := cl.PollRecords(ctx, poll)
		if ctx.Err() != nil {
			return nil
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			for _, e := range errs {
				slog.Warn("fetch", "topic", e.Topic, "partition", e.Partition, "err", e.Err)
			}
			cl.AllowRebalance()
			continue
		}
		recs := fetches.Records()
		if len(recs) == 0 {
			cl.AllowRebalance()
			continue
		}
		rows := make([][]any, len(recs))
		for i, r := range recs {
			e, err := events.Decode(r.Value)
			if err != nil {
				return fmt.Errorf("%s/%d@%d: %w", r.Topic, r.Partition, r.Offset, err)
			}
			rows[i] = store.CopyRow(e, r.Topic, int(r.Partition), r.Offset, r.Value)
		}
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"expert_in"}, cols, pgx.CopyFromRows(rows)); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, insert)
			return err
		})
		if err != nil {
			return fmt.Errorf("store %d records: %w", len(recs), err)
		}
		if err := cl.CommitRecords(context.WithoutCancel(ctx), recs...); err != nil {
			slog.Warn("commit offsets", "err", err) // the rows are stored: a redelivery is a duplicate
		}
		cl.AllowRebalance()
	}
}
