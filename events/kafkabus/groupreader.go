package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// GroupReader is the consumer group reader booking-consumer runs: kafka-go's ConsumerGroup, one
// partition reader per partition of the current generation, and offset commits bound to the
// generation that fetched the messages.
//
// Why not kafka.Reader in group mode: its CommitMessages hands the offsets to whatever generation
// is current when its commit loop gets them, with no check that the partition is still this
// member's. A batch fetched before a rebalance (in the loop's pipeline while the coordinator moved
// or a member joined) was then committed in the next generation, over the commits of the member
// that now owns the partition: the group's offset went back, and the owner, having read past it,
// never committed it forward again until new messages came. TestClusterChaos/ControllerKill saw it
// as lag that did not return to 0; TestStaleCommitAfterRebalanceDoesNotRewindTheGroup shows it
// on one broker.
//
// Here CommitMessages commits a partition's offset only with the generation that is current, only
// for a partition it assigned to this member, and only up from the first offset this member read
// of it in that generation (the group's committed offset when the generation began, or later).
// The broker refuses a commit of an ended generation. Offsets it does not commit are logged and
// skipped: the rows are stored, and the partition's owner reads those messages again (duplicates,
// which the store ignores).
type GroupReader struct {
	o      GroupReaderOptions
	logger *slog.Logger
	cg     *kafka.ConsumerGroup
	msgs   chan fetchedMessage
	errs   chan error
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	gen   *kafka.Generation // nil between generations
	first map[int]int64     // partition -> first offset FetchMessage returned in gen
}

type fetchedMessage struct {
	m   kafka.Message
	gen *kafka.Generation
}

// NewGroupReader joins the group of o in the background; Close leaves it.
func NewGroupReader(o GroupReaderOptions) (*GroupReader, error) {
	c := GroupReaderConfig(o)
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID: o.Group, Brokers: o.Brokers, Topics: []string{o.Topic},
		HeartbeatInterval: c.HeartbeatInterval, SessionTimeout: c.SessionTimeout,
		WatchPartitionChanges: c.WatchPartitionChanges, StartOffset: c.StartOffset,
		ErrorLogger: c.ErrorLogger,
	})
	if err != nil {
		return nil, fmt.Errorf("consumer group %s: %w", o.Group, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &GroupReader{o: o, logger: logger, cg: cg, msgs: make(chan fetchedMessage), errs: make(chan error, 1),
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go r.run(c)
	return r, nil
}

// run takes each generation in turn (ConsumerGroup.Next returns one only after the previous ended).
func (r *GroupReader) run(c kafka.ReaderConfig) {
	defer close(r.done)
	for {
		gen, err := r.cg.Next(r.ctx)
		if err != nil {
			if r.ctx.Err() != nil || errors.Is(err, kafka.ErrGroupClosed) {
				return
			}
			select { // FetchMessage reports it, as kafka.Reader does; the group retries meanwhile
			case r.errs <- fmt.Errorf("consumer group %s: %w", r.o.Group, err):
			default:
			}
			continue
		}
		r.begin(gen, c)
	}
}

// begin makes gen current and starts its partition readers; gen ends (and stops being current)
// when the group rebalances, the coordinator is lost, or the reader closes.
func (r *GroupReader) begin(gen *kafka.Generation, c kafka.ReaderConfig) {
	assigned := gen.Assignments[r.o.Topic]
	r.mu.Lock()
	r.gen, r.first = gen, map[int]int64{}
	r.mu.Unlock()
	gen.Start(func(ctx context.Context) {
		<-ctx.Done()
		r.mu.Lock()
		if r.gen == gen {
			r.gen = nil
		}
		r.mu.Unlock()
	})
	parts := make([]int, 0, len(assigned))
	for _, a := range assigned {
		parts = append(parts, a.ID)
		pc := kafka.ReaderConfig{Brokers: c.Brokers, Topic: c.Topic, Partition: a.ID, MinBytes: c.MinBytes,
			MaxBytes: c.MaxBytes, MaxWait: c.MaxWait, ErrorLogger: c.ErrorLogger,
			QueueCapacity: max(1, (c.QueueCapacity+len(assigned)-1)/len(assigned))}
		gen.Start(func(ctx context.Context) { r.readPartition(ctx, gen, pc, a.Offset) })
	}
	r.logger.Info("consumer group generation joined", "group", r.o.Group, "topic", r.o.Topic,
		"generation", gen.ID, "partitions", parts)
}

// readPartition feeds one partition of gen into msgs from offset until gen ends. It returns only
// then: a Generation ends as soon as one of its functions returns.
func (r *GroupReader) readPartition(ctx context.Context, gen *kafka.Generation, c kafka.ReaderConfig, offset int64) {
	pr := kafka.NewReader(c)
	defer func() { _ = pr.Close() }()
	if err := pr.SetOffset(offset); err != nil {
		r.logger.Warn("partition reader: set offset", "topic", c.Topic, "partition", c.Partition, "offset", offset, "err", err)
		<-ctx.Done()
		return
	}
	for {
		m, err := pr.FetchMessage(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil { // the partition reader retries by itself; this is what it gave up on
			r.logger.Warn("partition reader", "topic", c.Topic, "partition", c.Partition, "err", err)
			select { // never a tight loop, whatever the error
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
			continue
		}
		select {
		case r.msgs <- fetchedMessage{m: m, gen: gen}:
		case <-ctx.Done():
			return
		}
	}
}

// FetchMessage returns the next message of the current generation (messages read for an ended
// one are dropped: their partitions are being reassigned).
func (r *GroupReader) FetchMessage(ctx context.Context) (kafka.Message, error) {
	for {
		select {
		case <-ctx.Done():
			return kafka.Message{}, ctx.Err()
		case <-r.ctx.Done():
			return kafka.Message{}, io.ErrClosedPipe
		case err := <-r.errs:
			return kafka.Message{}, err
		case f := <-r.msgs:
			r.mu.Lock()
			current := f.gen == r.gen
			if _, seen := r.first[f.m.Partition]; current && !seen {
				r.first[f.m.Partition] = f.m.Offset
			}
			r.mu.Unlock()
			if current {
				return f.m, nil
			}
		}
	}
}

// CommitMessages commits, for each partition of msgs, the offset after its last message, where
// the current generation allows it (see GroupReader); the rest is logged and skipped.
func (r *GroupReader) CommitMessages(ctx context.Context, msgs ...kafka.Message) error {
	next := map[int]int64{}
	for _, m := range msgs {
		next[m.Partition] = max(next[m.Partition], m.Offset+1)
	}
	r.mu.Lock()
	gen, keep, skipped := r.gen, map[int]int64{}, []int{}
	for p, off := range next {
		if first, ok := r.first[p]; gen != nil && ok && off > first {
			keep[p] = off
		} else {
			skipped = append(skipped, p)
		}
	}
	r.mu.Unlock()
	if len(skipped) > 0 {
		r.logger.InfoContext(ctx, "offsets not committed: fetched in an earlier consumer group generation; the partition's owner reads them again",
			"topic", r.o.Topic, "partitions", skipped)
	}
	if len(keep) == 0 {
		return nil
	}
	done := make(chan error, 1)
	go func() { done <- gen.CommitOffsets(map[string]map[int]int64{r.o.Topic: keep}) }()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("commit offsets of generation %d: %w", gen.ID, err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close leaves the group and stops the partition readers.
func (r *GroupReader) Close() error {
	r.cancel()
	err := r.cg.Close()
	<-r.done
	return err
}
