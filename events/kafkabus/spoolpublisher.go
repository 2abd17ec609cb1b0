package kafkabus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events/spool"
)

// The reason logged (key "reason") with every event the SpoolPublisher gives up. Nothing is
// given up by time or by a full queue: an event the broker has not acknowledged stays in the
// spool (events/spool) until it does.
const (
	ReasonRejected    = "rejected"    // the broker refused it for good (e.g. too large, not authorised)
	ReasonUnencodable = "unencodable" // Encode failed or the event exceeds MaxEventBytes
)

// writer is the part of *kafka.Writer the SpoolPublisher uses.
type writer interface {
	WriteMessages(ctx context.Context, msgs ...kafka.Message) error
	Close() error
}

// SpoolPublisher sends the crawler's spool (events/spool) to Kafka: one goroutine reads the
// committed batches after the spool's cursor, writes them with acks from all in-sync replicas and
// moves the cursor past what was acknowledged. Nothing is given up by time: an outage of any
// length ends with the spool sent from its cursor (the consumer's ON CONFLICT makes the resent
// overlap harmless), and a restart resumes there. The crawl never waits for it: the crawl only
// appends to the spool. The cursor is keyed by topic and cluster id (asked once at start); a
// change of either starts a new cursor at the spool's end and leaves the unsent part in a file
// for `crawler replay` (spool.OpenCursor).
type SpoolPublisher struct {
	cfg     PublisherConfig
	log     *slog.Logger
	w       writer
	sp      *spool.Spool
	cluster func(ctx context.Context) (string, error)

	closing chan struct{}
	once    sync.Once
	life    context.Context
	abort   context.CancelFunc
	done    chan struct{}

	published, failed atomic.Int64

	mu      sync.Mutex
	cause   string    // why the last write or metadata call failed; "" after a success
	failing time.Time // since when every call failed; zero: the last one succeeded
}

// NewSpoolPublisher starts sending sp to the brokers of cfg.
func NewSpoolPublisher(cfg PublisherConfig, sp *spool.Spool) *SpoolPublisher {
	cfg = cfg.withDefaults()
	client := &kafka.Client{Addr: kafka.TCP(cfg.Brokers...), Timeout: writeCallTimeout,
		Transport: &kafka.Transport{DialTimeout: dialTimeout, ClientID: cfg.ClientID}}
	return newSpoolPublisher(cfg, sp, newWriter(cfg), func(ctx context.Context) (string, error) {
		md, err := client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{cfg.Topic}})
		if err != nil {
			return "", err
		}
		return md.ClusterID, nil
	})
}

func newSpoolPublisher(cfg PublisherConfig, sp *spool.Spool, w writer, cluster func(context.Context) (string, error)) *SpoolPublisher {
	life, abort := context.WithCancel(context.Background())
	p := &SpoolPublisher{cfg: cfg, log: cfg.Logger.With("topic", cfg.Topic), w: w, sp: sp, cluster: cluster,
		closing: make(chan struct{}), life: life, abort: abort, done: make(chan struct{})}
	p.log.Info("kafka publisher started: sending from the spool", "brokers", cfg.Brokers, "spool", sp.Dir())
	go p.run()
	return p
}

// Close stops waiting for new events and sends what is unsent until ctx ends; what is still
// unsent then stays in the spool for the next run. It returns an error wrapping ctx.Err() when
// ctx ended first.
func (p *SpoolPublisher) Close(ctx context.Context) error {
	p.once.Do(func() { close(p.closing) })
	select {
	case <-p.done:
		p.abort()
		return p.w.Close()
	case <-ctx.Done():
	}
	p.abort()
	<-p.done
	_ = p.w.Close()
	return fmt.Errorf("close kafka publisher: %d events stay in the spool for the next run: %w", p.sp.Stats().Unsent, ctx.Err())
}

// Stats returns the counters: Published and Failed (rejected by the broker) since start, Queued
// the spool's unsent events.
func (p *SpoolPublisher) Stats() PublisherStats {
	return PublisherStats{Published: p.published.Load(), Failed: p.failed.Load(), Queued: int64(p.sp.Stats().Unsent)}
}

// Failing returns why Kafka calls fail ("" when the last one succeeded) and since when.
func (p *SpoolPublisher) Failing() (cause string, since time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cause, p.failing
}

func (p *SpoolPublisher) note(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err == nil {
		p.cause, p.failing = "", time.Time{}
		return
	}
	p.cause = Cause(err)
	if p.failing.IsZero() {
		p.failing = p.cfg.Now()
	}
}

func (p *SpoolPublisher) run() {
	defer close(p.done)
	if !p.openCursor() {
		return
	}
	// wait is cancelled by Close: from then on the loop sends what is there and ends.
	wait, stop := context.WithCancel(p.life)
	defer stop()
	go func() {
		select {
		case <-p.closing:
			stop()
		case <-wait.Done():
		}
	}()
	for {
		items, err := p.sp.Next(wait, p.cfg.BatchSize, true)
		if errors.Is(err, context.Canceled) && p.life.Err() == nil {
			items, err = p.sp.Next(p.life, p.cfg.BatchSize, false)
			if err == nil && len(items) == 0 {
				return
			}
		}
		if err != nil {
			if p.life.Err() != nil {
				return
			}
			p.log.Error("spool unreadable; retrying", "err", err)
			if !p.sleep(&backoff{n: 5}) {
				return
			}
			continue
		}
		if !p.send(items) {
			return
		}
	}
}

// openCursor asks the cluster for its id (retrying until it answers or Close's ctx ends) and
// opens the spool's cursor for it.
func (p *SpoolPublisher) openCursor() bool {
	var bo backoff
	for {
		ctx, cancel := context.WithTimeout(p.life, writeCallTimeout)
		id, err := p.cluster(ctx)
		cancel()
		if err == nil {
			p.note(nil)
			if _, err := p.sp.OpenCursor(p.cfg.Topic, id); err != nil {
				p.log.Error("spool cursor not saved; retrying", "err", err)
			} else {
				return true
			}
		} else {
			p.note(err)
			p.log.Warn("kafka unreachable: the spool is sent once it answers", "cause", Cause(err), "err", err)
		}
		select {
		case <-p.closing:
			if p.sp.Stats().Unsent == 0 {
				return false // closing with nothing to send
			}
		default:
		}
		if !p.sleep(&bo) {
			return false
		}
	}
}

func (p *SpoolPublisher) sleep(bo *backoff) bool {
	t := time.NewTimer(bo.next())
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-p.life.Done():
		return false
	}
}

// send writes items until each is acknowledged or rejected for good, then moves the cursor.
func (p *SpoolPublisher) send(items []spool.Item) bool {
	msgs := make([]kafka.Message, 0, len(items))
	ids := make([]string, 0, len(items))
	for _, it := range items {
		m, err := Message(it.Event)
		if err != nil {
			p.lost(it.Event.EventID.String(), it.Event.ListingKey, ReasonUnencodable, err)
			continue
		}
		msgs, ids = append(msgs, m), append(ids, it.Event.EventID.String())
	}
	var bo backoff
	for len(msgs) > 0 {
		ctx, cancel := context.WithTimeout(p.life, writeCallTimeout)
		err := p.w.WriteMessages(ctx, msgs...)
		cancel()
		p.note(err)
		if err == nil {
			p.sent(len(msgs))
			break
		}
		if p.life.Err() != nil {
			return false
		}
		var wes kafka.WriteErrors
		if errors.As(err, &wes) && len(wes) == len(msgs) {
			left, leftIDs, ok := msgs[:0], ids[:0], 0
			for i, e := range wes {
				switch {
				case e == nil:
					ok++
				case permanent(e):
					p.lost(ids[i], string(msgs[i].Key), ReasonRejected, e)
				default:
					left, leftIDs = append(left, msgs[i]), append(leftIDs, ids[i])
				}
			}
			p.sent(ok)
			msgs, ids = left, leftIDs
			if len(msgs) == 0 {
				break
			}
		}
		p.log.Warn("kafka write failed; the spool keeps the events and retries", "events", len(msgs), "cause", Cause(err), "err", err)
		if !p.sleep(&bo) {
			return false
		}
	}
	if err := p.sp.Ack(items[len(items)-1].After); err != nil {
		p.log.Error("spool cursor not saved; the acknowledged events may be sent again", "err", err)
	}
	return true
}

func (p *SpoolPublisher) sent(n int) {
	if n == 0 {
		return
	}
	p.published.Add(int64(n))
	if m := p.cfg.Metrics; m != nil {
		m.Sent(n)
	}
}

func (p *SpoolPublisher) lost(id, key, reason string, err error) {
	p.failed.Add(1)
	p.log.Error("booking event lost", "event_id", id, "listing_key", key, "reason", reason, "err", err)
	if m := p.cfg.Metrics; m != nil {
		m.Failed(1)
	}
}
