package consumer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/segmentio/kafka-go"
)

// fetched is one batch read and decoded ahead of its insert, or the error that ended fetching.
type fetched struct {
	kafka []kafka.Message
	store []store.Message
	err   error
}

// fetchAhead fetches and decodes batches while the loop inserts earlier ones, so that Kafka,
// JSON decoding and PostgreSQL work at the same time. It reads at most one batch ahead of those
// in flight: its send blocks while Inflight batches are in the database, so while a batch is
// being retried at most Inflight batches past it are fetched, and none of them is committed
// before it. It closes out when ctx ends or the reader is closed (io.EOF, sent as the error).
func (l *loop) fetchAhead(ctx context.Context, out chan<- fetched) {
	defer close(out)
	failures := 0
	var failingSince time.Time // the first failure of this run of failures
	var stuck *stuckMark
	defer func() { stuck.clear() }()
	for ctx.Err() == nil {
		kb, sb, err := l.fetch(ctx)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return
			case errors.Is(err, io.EOF):
				// The Reader was closed under us: nothing more will come from it.
				select {
				case out <- fetched{err: err}:
				case <-ctx.Done():
				}
				return
			}
			// The broker or the group coordinator is away (connection refused, a rebalance that
			// failed, ...). The group reader keeps rejoining in the background, so wait and
			// fetch again: a broker outage pauses the consumer, it does not end it.
			failures++
			if failures == 1 {
				failingSince = l.cfg.Now()
			}
			stuck = l.fetchStuck(stuck, failures, failingSince, err)
			d := l.cfg.Backoff.Delay(failures)
			l.cfg.Logger.WarnContext(ctx, "fetch failed; retrying", "attempt", failures,
				"backoff", d.String(), "stuck", stuck != nil, "err", err)
			l.cfg.Metrics.Retry()
			if !sleep(ctx, d) {
				return
			}
			continue
		}
		if failures > 0 {
			l.cfg.Logger.InfoContext(ctx, "fetching again after failures", "failures", failures)
			failures = 0
			stuck.clear()
			stuck = nil
		}
		select {
		case out <- fetched{kafka: kb, store: sb}:
		case <-ctx.Done():
			return
		}
	}
}

// fetchStuck marks the consumer stuck (Health, the stuck gauge) once fetches have failed
// AlarmAfter times in a row and for FetchStuckAfter: a few failures while a broker restarts are
// normal, minutes of them (the group coordinator gone with the cluster's quorum) are an outage
// /healthz must name. It returns the mark, nil while not stuck.
func (l *loop) fetchStuck(stuck *stuckMark, failures int, since time.Time, err error) *stuckMark {
	if stuck != nil || failures < l.cfg.AlarmAfter {
		return stuck
	}
	failing := l.cfg.Now().Sub(since)
	if failing < l.cfg.FetchStuckAfter {
		return nil
	}
	return l.markStuck("fetch", "fetch", fmt.Sprintf("stuck: fetch failed %d times in a row for %v (Kafka or its group coordinator unreachable?): %v",
		failures, failing.Round(time.Second), err))
}

// fetch blocks for the first message, then adds messages until BatchSize messages or
// MaxBatchBytes bytes (keys and values, after trimming) or BatchWait. A fetch error after the
// first message ends the batch; the next fetch will see it again. Each message is decoded as it
// arrives, and a value over events.MaxEventBytes is trimmed at once (see trim), so that a batch
// never holds many large values whole.
func (l *loop) fetch(ctx context.Context) ([]kafka.Message, []store.Message, error) {
	first, err := l.r.FetchMessage(ctx)
	if err != nil {
		return nil, nil, err
	}
	kb := make([]kafka.Message, 0, min(l.cfg.BatchSize, 1024))
	sb := make([]store.Message, 0, cap(kb))
	size := 0
	add := func(m kafka.Message) {
		k, s := decode(m)
		kb, sb = append(kb, k), append(sb, s)
		size += len(s.Key) + len(s.Value)
	}
	add(first)
	wctx, cancel := context.WithTimeout(ctx, l.cfg.BatchWait)
	defer cancel()
	for len(kb) < l.cfg.BatchSize && size < l.cfg.MaxBatchBytes {
		m, err := l.r.FetchMessage(wctx)
		if err != nil {
			if wctx.Err() == nil {
				l.cfg.Logger.WarnContext(ctx, "fetch failed mid-batch; inserting what we have",
					"size", len(kb), "err", err)
			}
			break
		}
		add(m)
	}
	return kb, sb, nil
}

// DeadValuePrefix is how many bytes of a value over events.MaxEventBytes are kept: in memory
// from the moment it is fetched, and as raw_value in booking_events_dead. The dead letter's error
// gives the full length and the SHA-256 of the whole value.
const DeadValuePrefix = 4 << 10

// decode turns a Kafka message into a store message (an event, or the reason it is poison, with
// the headers a dead letter keeps) and the Kafka message kept for the offset commit. An event
// whose CloudEvents headers disagree with it is poison (events.CheckCloudEvents). A value over
// events.MaxEventBytes is never decoded: both keep only its first DeadValuePrefix bytes (a copy,
// so the whole value can be freed at once), the store message a copy of the headers, and the
// error records its length and SHA-256.
func decode(m kafka.Message) (kafka.Message, store.Message) {
	if len(m.Key) > DeadValuePrefix { // keys are listing keys (< 1 KB); only the value is ever stored whole
		m.Key = bytes.Clone(m.Key[:DeadValuePrefix])
	}
	if len(m.Value) > events.MaxEventBytes {
		sum := sha256.Sum256(m.Value)
		n := len(m.Value)
		m.Value = bytes.Clone(m.Value[:DeadValuePrefix])
		hs := cloneHeaders(m.Headers)
		m.Headers = nil
		err := fmt.Errorf("%w: %d bytes > %d, sha256 %x; raw_value keeps the first %d bytes",
			events.ErrTooLarge, n, events.MaxEventBytes, sum, DeadValuePrefix)
		return m, store.Message{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset, Key: m.Key, Value: m.Value, Headers: hs, Err: err}
	}
	sm := store.Message{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset, Key: m.Key, Value: m.Value,
		Headers: kafkabus.EventsHeaders(m.Headers)}
	e := new(events.Event)
	err := events.DecodeShared(m.Value, e) // the event's strings share m.Value, which the batch keeps anyway
	if err == nil {
		err = events.CheckCloudEvents(sm.Headers, *e)
	}
	if err != nil {
		sm.Err = err
	} else {
		sm.Event = e
	}
	return m, sm
}

// cloneHeaders copies hs (each value cut to DeadValuePrefix bytes) off the fetched buffer.
func cloneHeaders(hs []kafka.Header) []events.Header {
	out := kafkabus.EventsHeaders(hs)
	for i := range out {
		out[i].Value = bytes.Clone(out[i].Value[:min(len(out[i].Value), DeadValuePrefix)])
	}
	return out
}

// acceptReady hands accept the batch the fetcher holds, if it holds one, without waiting.
func acceptReady(batches <-chan fetched, accept func(fetched, bool) (bool, error)) (end bool, err error) {
	select {
	case b, ok := <-batches:
		return accept(b, ok)
	default:
		return false, nil
	}
}
