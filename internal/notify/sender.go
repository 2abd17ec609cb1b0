package notify

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/retry"
)

var (
	//go:embed queries/lease.sql
	leaseSQL string
	//go:embed queries/relet.sql
	reletSQL string
	//go:embed queries/attempt.sql
	attemptSQL string
	//go:embed queries/finish.sql
	finishSQL string
	//go:embed queries/extend.sql
	extendSQL string
)

// Sender tuning defaults.
const (
	DefaultPoll = time.Second
	// DefaultSettle is Sender.Settle's default: ample for the batches of one crawl's partitions.
	DefaultSettle     = 500 * time.Millisecond
	DefaultBatchLimit = 200
	// MaxEventsPerMessage bounds one message (Telegram takes 4096 characters).
	MaxEventsPerMessage = 20
	// maxRetryAfter caps a channel's Retry-After.
	maxRetryAfter = 5 * time.Minute
)

// Sender delivers one channel's claims: it leases them (its own, and any whose lease expired),
// groups them by watch and crawl into messages, waits for the channel's rate limit, sends, and
// marks them sent or failed. Transient errors are retried with backoff (Retry-After honoured) up
// to MaxAttempts, extending the lease before each attempt.
type Sender struct {
	Pool        *pgxpool.Pool
	Channel     *Channel
	Owner       string
	Lease       time.Duration // DefaultLease if zero
	MaxAttempts int           // DefaultMaxAttempts if zero
	BackoffBase time.Duration // first retry wait, doubling to BackoffMax (defaults 1s, 1m)
	BackoffMax  time.Duration
	Poll        time.Duration // how often to look for expired leases; DefaultPoll if zero
	// Settle is how long the claims of one watch and crawl wait after the newest of them before
	// they are leased, so that matches claimed in several consumer batches (one per partition) go
	// out as one message; DefaultSettle if zero. A group still growing after 10 × Settle is leased
	// anyway (its later claims go in a later message).
	Settle  time.Duration
	Client  *http.Client
	Wake    chan struct{} // a receive means new claims; may be nil
	Metrics *Metrics
	Logger  *slog.Logger
	Secrets []string // scrubbed from every error stored or logged

	last time.Time // the last send, for MinInterval
}

func (s *Sender) defaults() {
	if s.Lease <= 0 {
		s.Lease = DefaultLease
	}
	if s.MaxAttempts <= 0 {
		s.MaxAttempts = DefaultMaxAttempts
	}
	if s.BackoffBase <= 0 {
		s.BackoffBase = time.Second
	}
	if s.BackoffMax < s.BackoffBase {
		s.BackoffMax = max(time.Minute, s.BackoffBase)
	}
	if s.Poll <= 0 {
		s.Poll = DefaultPoll
	}
	if s.Settle <= 0 {
		s.Settle = DefaultSettle
	}
	if s.Client == nil {
		s.Client = &http.Client{}
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
}

// Run delivers until ctx ends. Database errors are logged and retried at the next poll. New claims
// (a wake) are leased once they have settled: Settle after the last wake. Every poll also leases
// what has settled meanwhile and what a dead sender's expired lease left.
func (s *Sender) Run(ctx context.Context) {
	s.defaults()
	t := time.NewTicker(s.Poll)
	defer t.Stop()
	var settled <-chan time.Time // fires Settle after the last wake
	for ctx.Err() == nil {
		n, err := s.Once(ctx)
		if err != nil && ctx.Err() == nil {
			s.Logger.WarnContext(ctx, "notifier: lease claims", "channel", s.Channel.Name, "err", s.scrub(err.Error()))
		}
		if n > 0 && err == nil {
			continue // there may be more
		}
		for leaseNow := false; !leaseNow && ctx.Err() == nil; {
			select {
			case <-ctx.Done():
			case <-t.C:
				leaseNow = true
			case <-settled:
				settled, leaseNow = nil, true
			case <-s.Wake:
				settled = time.After(s.Settle)
			}
		}
	}
}

// group is the claims of one message.
type group struct {
	key            uuid.UUID
	watch, crawlID string
	keys           []uuid.UUID
	evs            []*events.Event
}

// Once leases the claims available to this sender and delivers them; it returns how many it
// leased.
func (s *Sender) Once(ctx context.Context) (int, error) {
	s.defaults()
	groups, n, err := s.lease(ctx)
	if err != nil {
		return 0, err
	}
	for _, g := range groups {
		if ctx.Err() != nil {
			break
		}
		s.deliver(ctx, g)
	}
	return n, nil
}

func (s *Sender) lease(ctx context.Context) ([]*group, int, error) {
	var groups []*group
	n := 0
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		groups, n = nil, 0
		rows, err := tx.Query(ctx, leaseSQL, s.Channel.Name, s.Owner, DefaultBatchLimit, s.Settle.Seconds())
		if err != nil {
			return err
		}
		byID := map[string]*group{}
		var open []*group // groups without a send key yet, by watch and crawl
		var key uuid.UUID
		var sendKey *uuid.UUID
		var watch, crawl string
		var payload []byte
		var attempts int
		_, err = pgx.ForEachRow(rows, []any{&key, &watch, &crawl, &payload, &sendKey, &attempts}, func() error {
			var e events.Event
			if err := json.Unmarshal(payload, &e); err != nil {
				return fmt.Errorf("notification %s: stored event: %w", key, err)
			}
			n++
			var g *group
			if sendKey != nil {
				id := sendKey.String()
				if g = byID[id]; g == nil {
					g = &group{key: *sendKey, watch: watch, crawlID: crawl}
					byID[id] = g
					groups = append(groups, g)
				}
			} else {
				for _, o := range open {
					if o.watch == watch && o.crawlID == crawl && len(o.keys) < MaxEventsPerMessage {
						g = o
						break
					}
				}
				if g == nil {
					g = &group{watch: watch, crawlID: crawl}
					open = append(open, g)
					groups = append(groups, g)
				}
			}
			g.keys = append(g.keys, key)
			g.evs = append(g.evs, &e)
			return nil
		})
		if err != nil {
			return err
		}
		var keys, sendKeys []uuid.UUID
		for _, g := range groups {
			if g.key == uuid.Nil {
				g.key = groupKey(g.keys)
			}
			for _, k := range g.keys {
				keys = append(keys, k)
				sendKeys = append(sendKeys, g.key)
			}
		}
		if len(keys) == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, reletSQL, keys, sendKeys, s.Owner, s.Lease.Seconds())
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("lease %s: %w", s.Channel.Name, err)
	}
	return groups, n, nil
}

// groupKey is the Idempotency-Key of a message: the claim key of a message of one, else a uuid v5
// over its sorted claim keys.
func groupKey(keys []uuid.UUID) uuid.UUID {
	if len(keys) == 1 {
		return keys[0]
	}
	ss := make([]string, len(keys))
	for i, k := range keys {
		ss[i] = k.String()
	}
	slices.Sort(ss)
	return uuid.NewSHA1(keySpace, []byte(strings.Join(ss, ",")))
}

func (s *Sender) scrub(msg string) string {
	for _, sec := range s.Secrets {
		if sec != "" {
			msg = strings.ReplaceAll(msg, sec, "xxxxx")
		}
	}
	return msg
}

// deliver sends one message, retrying transient failures, and records the outcome.
func (s *Sender) deliver(ctx context.Context, g *group) {
	ch := s.Channel
	log := s.Logger.With("channel", ch.Name, "watch", g.watch, "crawl_id", g.crawlID, "key", g.key.String(), "matches", len(g.keys))
	for attempt := 1; ; attempt++ {
		// Hold the lease for the attempt (timeout and a margin); a sender that lost it (it slept
		// past its lease and another took the rows) stops.
		tag, err := s.Pool.Exec(ctx, attemptSQL, g.keys, s.Owner, (s.Lease + ch.Timeout).Seconds())
		if err != nil {
			if ctx.Err() == nil {
				log.WarnContext(ctx, "notifier: extend lease; leaving the claims to a later lease", "err", err)
			}
			return
		}
		if tag.RowsAffected() == 0 {
			log.InfoContext(ctx, "notifier: lease lost; another sender has the claims")
			return
		}
		if wait := ch.MinInterval - time.Since(s.last); ch.MinInterval > 0 && wait > 0 {
			if !sleep(ctx, wait) {
				return
			}
		}
		s.last = time.Now()
		err = ch.Send(ctx, s.Client, Message{Key: g.key, Watch: g.watch, CrawlID: g.crawlID, Events: g.evs, Now: time.Now()})
		if err == nil {
			s.finish(ctx, log, g, "sent", "")
			s.Metrics.sent(ch.Name, len(g.keys))
			log.InfoContext(ctx, "notification sent", "attempt", attempt)
			return
		}
		msg := s.scrub(err.Error())
		var se *SendError
		if errors.As(err, &se) && se.Unknown {
			// Possibly delivered on a channel without idempotency: never re-sent automatically
			// (also when shutting down: the lease must not hand it to another sender).
			s.finish(ctx, log, g, "unknown", msg)
			s.Metrics.unknown(ch.Name, len(g.keys))
			log.ErrorContext(ctx, "notification outcome unknown: not re-sent", "attempt", attempt, "err", msg)
			return
		}
		if ctx.Err() != nil {
			return // shutting down: the lease expires and the claims are sent again
		}
		transient := se != nil && se.Transient
		if !transient || attempt >= s.MaxAttempts {
			if transient {
				msg = fmt.Sprintf("%s (after %d attempts)", msg, attempt)
			}
			s.finish(ctx, log, g, "failed", msg)
			s.Metrics.failed(ch.Name, len(g.keys))
			log.ErrorContext(ctx, "notification failed", "attempt", attempt, "err", msg)
			return
		}
		s.Metrics.retry(ch.Name)
		wait := s.backoff(attempt)
		if se.RetryAfter > 0 {
			wait = min(se.RetryAfter, maxRetryAfter)
		}
		log.WarnContext(ctx, "notification: transient failure; retrying", "attempt", attempt, "wait", wait.String(), "err", msg)
		// The lease must outlive the wait.
		if wait > s.Lease/2 {
			if _, err := s.Pool.Exec(ctx, extendSQL, g.keys, s.Owner, (wait + s.Lease).Seconds()); err != nil && ctx.Err() == nil {
				log.WarnContext(ctx, "notifier: extend lease", "err", err)
			}
		}
		if !sleep(ctx, wait) {
			return
		}
	}
}

// finish marks the group's rows. The mark must land even when a SIGTERM arrives right after the
// answer, and a database blip must not turn into a second send: it is retried for up to
// markTimeout (the lease, extended by the attempt, still covers it).
func (s *Sender) finish(ctx context.Context, log *slog.Logger, g *group, status, msg string) {
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		_, err := s.Pool.Exec(mctx, finishSQL, g.keys, s.Owner, status, msg)
		if err == nil {
			return
		}
		if mctx.Err() != nil {
			log.ErrorContext(ctx, "notifier: could not mark the notification; it will be sent again after the lease expires",
				"status", status, "err", err)
			return
		}
		log.WarnContext(ctx, "notifier: mark the notification; retrying", "status", status, "attempt", attempt, "err", err)
		sleep(mctx, min(time.Duration(attempt)*200*time.Millisecond, 2*time.Second))
	}
}

// markTimeout bounds the retries of a mark after the channel answered.
const markTimeout = 10 * time.Second

// backoff is attempt n's wait (internal/retry: jittered in [d/2, d], d = min(max, base·2^(n-1))).
func (s *Sender) backoff(attempt int) time.Duration {
	return retry.Backoff{Base: s.BackoffBase, Max: s.BackoffMax}.Delay(attempt)
}

// sleep waits d or until ctx ends; it reports whether the full wait passed.
func sleep(ctx context.Context, d time.Duration) bool {
	return retry.Sleep(ctx, d) == nil
}
