package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/retry"
)

// Sender tuning defaults.
const (
	defaultPoll       = time.Second
	defaultBatchLimit = 200
	// MaxEventsPerMessage bounds one message's matches; the channel's limit on its length may
	// cut a group in more messages (Channel.Split).
	MaxEventsPerMessage = 20
	// maxRetryAfter caps a channel's Retry-After.
	maxRetryAfter = 5 * time.Minute
)

// Sender delivers one channel's claims from a ClaimStore: it picks the groups ready to send, checks
// each before it sends (see skip), waits for the channel's rate limit, sends, and finishes the
// claims sent, failed or unknown. Transient errors are retried with backoff (Retry-After honoured)
// up to MaxAttempts, the store told before each attempt (Attempt) and each wait (StatusRetry).
type Sender struct {
	Store   ClaimStore
	Channel *Channel
	// Watches is the watches file as loaded now: a claim of a watch no longer in it is skipped
	// (watch_removed), one of a muted watch (enabled: false) skipped (watch_muted). Nil: no check.
	Watches *Config
	// InForce, when set, is used instead of Watches: the watches in force now, the file's and the
	// chat's (the alert service's).
	InForce func() *Config
	// MaxAge: a claim whose event occurred longer ago than this when its group is picked is skipped
	// (stale); DefaultMaxAge if zero.
	MaxAge      time.Duration
	MaxAttempts int           // DefaultMaxAttempts if zero
	BackoffBase time.Duration // first retry wait, doubling to BackoffMax (defaults 1s, 1m)
	BackoffMax  time.Duration
	Poll        time.Duration // how often to look for claims without a wake; defaultPoll if zero
	// Settle, when set, is how long the sender waits after a wake before it picks, so that claims
	// made in quick succession (several consumer batches of one crawl) are picked together.
	Settle time.Duration
	Client *http.Client
	Wake   chan struct{} // a receive means new claims; may be nil
	// Stop, once closed, stops the sender gracefully: no group is picked, no attempt begins and no
	// wait (rate limit, retry) goes on, while a request already sent runs to its answer (within the
	// channel's timeout) and is marked. Cancelling Run's ctx instead abandons a request in flight.
	// May be nil.
	Stop    <-chan struct{}
	Metrics *Metrics
	Logger  *slog.Logger
	Secrets []string // scrubbed from every error stored or logged
	// Finished, when set, is told every outcome recorded for a group (the claims of g it ended).
	Finished func(g Group, o Outcome)
	Now      func() time.Time // time.Now if nil

	last time.Time // the last send, for MinInterval
}

func (s *Sender) defaults() {
	if s.MaxAge <= 0 {
		s.MaxAge = DefaultMaxAge
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
		s.Poll = defaultPoll
	}
	if s.Client == nil {
		s.Client = &http.Client{}
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.Now == nil {
		s.Now = time.Now
	}
}

// Run delivers until ctx ends. Store errors are logged and retried at the next poll. A wake picks
// (after Settle, if set); every poll picks too (claims whose retry time came, expired leases).
func (s *Sender) Run(ctx context.Context) {
	s.defaults()
	t := time.NewTicker(s.Poll)
	defer t.Stop()
	var settled <-chan time.Time // fires Settle after the last wake
	for ctx.Err() == nil && !s.stopping() {
		n, err := s.Once(ctx)
		if err != nil && ctx.Err() == nil {
			s.Logger.WarnContext(ctx, "notifier: pick claims", "channel", s.Channel.Name, "err", s.scrub(err.Error()))
		}
		if n > 0 && err == nil {
			continue // progress: there may be more
		}
		for pickNow := false; !pickNow && ctx.Err() == nil && !s.stopping(); {
			select {
			case <-ctx.Done():
			case <-s.Stop:
			case <-t.C:
				pickNow = true
			case <-settled:
				settled, pickNow = nil, true
			case <-s.Wake:
				if s.Settle <= 0 {
					pickNow = true
				} else {
					settled = time.After(s.Settle)
				}
			}
		}
	}
}

// Once picks the groups ready to send on this sender's channel and delivers them; it returns how
// many claims it finished (a group left sending, for example after a store error or a lost lease,
// does not count, so that Run waits for its next poll instead of picking it again at once).
func (s *Sender) Once(ctx context.Context) (int, error) {
	s.defaults()
	groups, err := s.Store.Pick(ctx, s.Channel, s.Now(), defaultBatchLimit)
	if err != nil {
		return 0, fmt.Errorf("pick %s: %w", s.Channel.Name, err)
	}
	n := 0
	for _, g := range groups {
		if ctx.Err() != nil || s.stopping() {
			break
		}
		if s.deliver(ctx, g) {
			n += len(g.Claims)
		}
	}
	return n, nil
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

// watches is the watches in force (InForce's, else Watches).
func (s *Sender) watches() *Config {
	if s.InForce != nil {
		return s.InForce()
	}
	return s.Watches
}

func (s *Sender) scrub(msg string) string {
	for _, sec := range s.Secrets {
		if sec != "" {
			msg = strings.ReplaceAll(msg, sec, "xxxxx")
		}
	}
	return msg
}

// skip is the send-time check, before each attempt of a picked group: claims of a watch removed
// from the watches file or muted, claims whose event occurred more than MaxAge ago, and claims whose
// listing closed after their event are finished skipped with the reason. It returns the group of
// what is left to send (same Key), or ok false when nothing is.
func (s *Sender) skip(ctx context.Context, log *slog.Logger, g Group) (Group, bool) {
	reasonOf := func(c GroupClaim) string {
		if cfg := s.watches(); cfg != nil {
			switch w := cfg.Watch(g.Watch); {
			case w == nil:
				return ReasonWatchRemoved
			case w.Muted:
				return ReasonWatchMuted
			}
		}
		// A backlog claim's event occurred when the listing was first seen, long before the
		// watch asked: its age counts from its claim.
		// A resend was asked for by a person: no age applies.
		born := c.Event.OccurredAt
		if c.Backlog {
			born = c.ClaimedAt
		}
		switch {
		case !c.Resend && born.Before(s.Now().Add(-s.MaxAge)):
			return ReasonStale
		case c.Closed.After(c.Event.OccurredAt):
			return ReasonClosed
		}
		return ""
	}
	byReason := map[string][]GroupClaim{}
	rest := g
	rest.Claims = nil
	for _, c := range g.Claims {
		if r := reasonOf(c); r != "" {
			byReason[r] = append(byReason[r], c)
		} else {
			rest.Claims = append(rest.Claims, c)
		}
	}
	for r, cs := range byReason {
		sk := g
		sk.Claims = cs
		if s.finish(ctx, log, sk, Outcome{Status: StatusSkipped, Reason: r}) {
			s.Metrics.Skipped(r, len(cs))
			log.InfoContext(ctx, "notification skipped at send time", "reason", r, "claims", len(cs))
		}
	}
	return rest, len(rest.Claims) > 0
}

// deliver sends one message, retrying transient failures, and records the outcome; it reports
// whether the group's claims were finished.
func (s *Sender) deliver(ctx context.Context, g Group) bool {
	ch := s.Channel
	log := s.Logger.With("channel", ch.Name, "watch", g.Watch, "crawl_id", g.CrawlID, "key", g.Key.String(), "matches", len(g.Claims))
	for attempt := 1; ; attempt++ {
		if s.stopping() {
			return false // stopping: the claims stay sending and are sent at the next start, same key
		}
		var ok bool
		if g, ok = s.skip(ctx, log, g); !ok {
			return true // every claim skipped
		}
		evs := make([]*events.Event, len(g.Claims))
		var backlog []bool
		for i, c := range g.Claims {
			evs[i] = c.Event
			if c.Backlog {
				if backlog == nil {
					backlog = make([]bool, len(g.Claims))
				}
				backlog[i] = true
			}
		}
		// Hold the claims for the attempt (timeout and a margin); a sender that lost them (it slept
		// past its lease and another took them) stops.
		if err := s.Store.Attempt(ctx, g, ch.Timeout); err != nil {
			switch {
			case errors.Is(err, ErrLost):
				log.InfoContext(ctx, "notifier: lease lost; another sender has the claims")
			case ctx.Err() == nil:
				log.WarnContext(ctx, "notifier: record the attempt; leaving the claims to a later pick", "err", s.scrub(err.Error()))
			}
			return false
		}
		if wait := ch.MinInterval - time.Since(s.last); ch.MinInterval > 0 && wait > 0 {
			if !s.sleep(ctx, wait) {
				return false
			}
		}
		s.last = time.Now()
		err := ch.Send(ctx, s.Client, Message{Key: g.Key, Watch: g.Watch, CrawlID: g.CrawlID, Events: evs, Backlog: backlog, Now: s.Now(),
			Part: g.Part, Parts: g.Parts})
		if err == nil {
			done := s.finish(ctx, log, g, Outcome{Status: StatusSent})
			s.Metrics.sent(ch.Name, len(g.Claims))
			for _, c := range g.Claims {
				if !c.Backlog {
					s.Metrics.sentAfter(s.Now().Sub(c.Event.OccurredAt))
				}
			}
			log.InfoContext(ctx, "notification sent", "attempt", attempt)
			return done
		}
		msg := s.scrub(err.Error())
		var se *sendError
		if errors.As(err, &se) && se.Unknown {
			// Possibly delivered on a channel without idempotency: never re-sent automatically
			// (also when shutting down: no other sender may take it).
			done := s.finish(ctx, log, g, Outcome{Status: StatusUnknown, Error: msg})
			s.Metrics.unknown(ch.Name, len(g.Claims))
			log.ErrorContext(ctx, "notification outcome unknown: not re-sent", "attempt", attempt, "err", msg)
			return done
		}
		if ctx.Err() != nil {
			return false // shutting down: the claims stay sending and are sent again, same key
		}
		transient := se != nil && se.Transient
		if !transient || attempt >= s.MaxAttempts {
			if transient {
				msg = fmt.Sprintf("%s (after %d attempts)", msg, attempt)
			}
			done := s.finish(ctx, log, g, Outcome{Status: StatusFailed, Error: msg})
			s.Metrics.failed(ch.Name, len(g.Claims))
			log.ErrorContext(ctx, "notification failed", "attempt", attempt, "err", msg)
			return done
		}
		s.Metrics.retry(ch.Name)
		wait := s.backoff(attempt)
		if se.RetryAfter > 0 {
			wait = min(se.RetryAfter, maxRetryAfter)
		}
		log.WarnContext(ctx, "notification: transient failure; retrying", "attempt", attempt, "wait", wait.String(), "err", msg)
		if err := s.Store.Finish(ctx, g, Outcome{Status: StatusRetry, Error: msg, RetryAt: s.Now().Add(wait)}); err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "notifier: record the retry", "err", s.scrub(err.Error()))
		}
		if !s.sleep(ctx, wait) {
			return false
		}
	}
}

// stopping reports whether Stop is closed.
func (s *Sender) stopping() bool {
	select {
	case <-s.Stop:
		return true
	default:
		return false
	}
}

// sleep waits d, or until ctx ends or Stop closes; it reports whether the full wait passed.
func (s *Sender) sleep(ctx context.Context, d time.Duration) bool {
	if s.Stop == nil {
		return sleep(ctx, d)
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.Stop:
			cancel()
		case <-sctx.Done():
		}
	}()
	return sleep(sctx, d)
}

// finish records a final outcome. The mark must land even when a SIGTERM arrives right after the
// answer, and a store blip must not turn into a second send: it is retried for up to markTimeout
// (a lease, extended by the attempt, still covers it). It reports whether the mark landed.
func (s *Sender) finish(ctx context.Context, log *slog.Logger, g Group, o Outcome) bool {
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), markTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		err := s.Store.Finish(mctx, g, o)
		if err == nil {
			if s.Finished != nil {
				s.Finished(g, o)
			}
			return true
		}
		if mctx.Err() != nil {
			log.ErrorContext(ctx, "notifier: could not mark the notification; it will be sent again",
				"status", string(o.Status), "err", s.scrub(err.Error()))
			return false
		}
		log.WarnContext(ctx, "notifier: mark the notification; retrying", "status", string(o.Status), "attempt", attempt, "err", s.scrub(err.Error()))
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
