package consumer

import (
	"context"
	"fmt"
	"time"

	"github.com/golfcrawler/golf-crawler/store"
	"github.com/segmentio/kafka-go"
)

// stuckMark is one stuck report: a Health problem and a +1 on the stuck gauge, undone by clear.
type stuckMark struct {
	l           *loop
	key, reason string
}

// markStuck reports the batch or commit named key stuck for reason (a metric label: short and
// stable) with the message for /healthz.
func (l *loop) markStuck(key, reason, message string) *stuckMark {
	l.cfg.Health.Set(key, message)
	if m, ok := l.cfg.Metrics.(StuckMetrics); ok {
		m.Stuck(reason, 1)
	}
	l.cfg.Logger.Error("consumer stuck; /healthz reports it until this clears", "what", key, "reason", reason,
		"detail", message)
	return &stuckMark{l: l, key: key, reason: reason}
}

func (s *stuckMark) clear() {
	if s == nil {
		return
	}
	s.l.cfg.Health.Clear(s.key)
	if m, ok := s.l.cfg.Metrics.(StuckMetrics); ok {
		m.Stuck(s.reason, -1)
	}
	s.l.cfg.Logger.Info("no longer stuck", "what", s.key, "reason", s.reason)
}

// commit reports a stored batch and commits its offsets; the database already holds its rows.
//
// A failed commit is retried, with the same capped backoff as fetches, for as long as ctx lives:
// a Kafka outage pauses the consumer, it never ends it. While it retries, the loop takes no new
// batch: the inserts in flight finish, the fetcher holds its one read-ahead batch, so memory stays
// bounded as usual, and no later batch is committed before this one. After Config.AlarmAfter
// failures in a row the consumer reports itself stuck until a commit succeeds. When ctx ends
// first the batch stays uncommitted (redelivered, harmlessly, to the next owner). Each attempt runs
// under ictx, which outlives ctx by the shutdown grace, so that on shutdown one attempt is made.
func (l *loop) commit(ctx, ictx context.Context, kbatch []kafka.Message, res stored) {
	l.report(ctx, kbatch, res.res, res.latency, res.attempts)
	var stuck *stuckMark
	defer func() { stuck.clear() }()
	first, last := kbatch[0], kbatch[len(kbatch)-1]
	for attempt := 1; ; attempt++ {
		cctx, cancel := context.WithTimeout(ictx, l.cfg.CommitTimeout)
		err := l.r.CommitMessages(cctx, kbatch...)
		cancel()
		if err == nil {
			if attempt > 1 {
				l.cfg.Logger.InfoContext(ctx, "offsets committed after failures", "topic", first.Topic,
					"partition", first.Partition, "offset", first.Offset, "attempts", attempt)
			}
			return
		}
		if ctx.Err() != nil || ictx.Err() != nil {
			l.cfg.Logger.InfoContext(ctx, "shutting down with offsets uncommitted; rows are stored, the batch will be redelivered as duplicates",
				"topic", first.Topic, "partition", first.Partition, "offset", first.Offset, "last_offset", last.Offset, "err", err)
			return
		}
		if m, ok := l.cfg.Metrics.(StuckMetrics); ok {
			m.CommitFailed()
		}
		if attempt >= l.cfg.AlarmAfter && stuck == nil {
			stuck = l.markStuck("offset commit", "offset commit",
				fmt.Sprintf("stuck: offset commit failed %d times in a row (Kafka unreachable?): %v", attempt, err))
		}
		d := l.cfg.Backoff.Delay(attempt)
		l.cfg.Logger.WarnContext(ctx, "offset commit failed; rows are stored, retrying the commit",
			"topic", first.Topic, "partition", first.Partition, "offset", first.Offset, "last_offset", last.Offset,
			"attempt", attempt, "backoff", d.String(), "err", err)
		if !sleep(ctx, d) {
			l.cfg.Logger.InfoContext(ctx, "shutting down with offsets uncommitted; rows are stored, the batch will be redelivered as duplicates",
				"topic", first.Topic, "partition", first.Partition, "offset", first.Offset, "last_offset", last.Offset)
			return
		}
	}
}

// report logs and counts a stored batch.
func (l *loop) report(ctx context.Context, kbatch []kafka.Message, res store.Result, latency time.Duration, attempts int) {
	type span struct{ first, last, lag int64 }
	spans := map[string]map[int]*span{}
	for _, m := range kbatch {
		if spans[m.Topic] == nil {
			spans[m.Topic] = map[int]*span{}
		}
		sp := spans[m.Topic][m.Partition]
		if sp == nil {
			sp = &span{first: m.Offset}
			spans[m.Topic][m.Partition] = sp
		}
		sp.last = m.Offset
		sp.lag = max(m.HighWaterMark-m.Offset-1, 0)
	}
	ranges := make([]string, 0, len(spans))
	for topic, ps := range spans {
		for p, sp := range ps {
			ranges = append(ranges, fmt.Sprintf("%d:%d-%d", p, sp.first, sp.last))
			l.cfg.Metrics.Lag(topic, p, sp.lag)
		}
	}
	l.cfg.Metrics.Batch(len(kbatch), res, latency)
	l.total.batches++
	l.total.consumed += int64(len(kbatch))
	l.total.inserted += int64(res.Inserted)
	l.total.duplicates += int64(res.Duplicates)
	l.total.deadLettered += int64(res.DeadLettered)

	attrs := []any{"topic", kbatch[0].Topic, "size", len(kbatch), "inserted", res.Inserted,
		"duplicates", res.Duplicates, "dead_lettered", res.DeadLettered, "ranges", ranges,
		"latency_ms", latency.Milliseconds(), "attempts", attempts}
	l.cfg.Logger.DebugContext(ctx, "batch stored", attrs...)
	if now := l.cfg.Now(); now.Sub(l.lastInfo) >= infoEvery || res.DeadLettered > 0 || attempts > 1 {
		l.lastInfo = now
		l.cfg.Logger.InfoContext(ctx, "batch stored", append(attrs,
			"total_consumed", l.total.consumed, "total_inserted", l.total.inserted)...)
	}
}
