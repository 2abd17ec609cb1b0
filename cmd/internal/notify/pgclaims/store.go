// Package pgclaims is the alert engine's PostgreSQL claim store (the notifications tables of
// migrations 005, 006, 010, 011 and 014) and chat store (the chat's watches, getUpdates offsets and
// pollers of migrations 012 and 013), used by `booking-consumer notify` through the alert service
// (cmd/internal/alerts): several notifier processes share it under leases; OpenListings is what is
// open now in booking_lifetimes, the service's answer to a watch that asks. Its SQL is in queries/.
package pgclaims

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
)

var (
	//go:embed queries/claim.sql
	claimSQL string
	//go:embed queries/closes.sql
	closesSQL string
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
	//go:embed queries/list.sql
	listSQL string
	//go:embed queries/prune.sql
	pruneSQL string
	//go:embed queries/fingerprints.sql
	fingerprintsSQL string
	//go:embed queries/fingerprints_read.sql
	fingerprintsReadSQL string
	//go:embed queries/open_listings.sql
	openListingsSQL string
	//go:embed queries/resend.sql
	resendSQL string
	//go:embed queries/resolve.sql
	resolveSQL string
	//go:embed queries/pending.sql
	pendingSQL string
)

// Defaults of the store.
const (
	DefaultLease = time.Minute
	// DefaultSettle: ample for the batches of one crawl's partitions.
	DefaultSettle = 500 * time.Millisecond
)

// Store is a notify.ClaimStore in PostgreSQL. A claim is leased to Owner when it is made (so this
// process's sender sends it) and re-leased by Pick; any process's Pick takes a claim whose lease
// expired (its holder died).
type Store struct {
	Pool  *pgxpool.Pool
	Owner string        // this process's lease owner name
	Lease time.Duration // DefaultLease if zero
	// Settle is how long the claims of one watch and crawl wait after the newest of them before
	// Pick takes them, so that matches claimed in several consumer batches (one per partition) go
	// out as one message; DefaultSettle if zero. A group still growing after 10 × Settle is
	// picked anyway (its later claims go in a later message).
	Settle time.Duration
	// Bots maps a command channel to its token's BotKey: the key of its getUpdates offset.
	Bots map[string]string
}

var _ notify.ClaimStore = (*Store)(nil)

func (s *Store) lease() time.Duration {
	if s.Lease <= 0 {
		return DefaultLease
	}
	return s.Lease
}

func (s *Store) settle() time.Duration {
	if s.Settle <= 0 {
		return DefaultSettle
	}
	return s.Settle
}

// claimArgs are claim.sql's parameters for b.
func (s *Store) claimArgs(b notify.ClaimBatch, dryRun bool) ([]any, error) {
	n := len(b.Claims)
	key, eventID := make([]uuid.UUID, n), make([]uuid.UUID, n)
	watch, channel, crawlID, listingKey := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	occurredAt, payload, backlog, pending := make([]time.Time, n), make([][]byte, n), make([]bool, n), make([]bool, n)
	for i, c := range b.Claims {
		e := c.Event
		p, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("encode event %s: %w", e.EventID, err)
		}
		key[i], watch[i], channel[i], eventID[i], crawlID[i] = c.Key, c.Watch, c.Channel, e.EventID, e.CrawlID
		listingKey[i], occurredAt[i], payload[i], backlog[i], pending[i] = e.ListingKey, e.OccurredAt, p, c.Backlog, c.Pending
	}
	maxAge, now := b.MaxAge, b.Now
	if maxAge <= 0 {
		maxAge = notify.DefaultMaxAge
	}
	if now.IsZero() {
		now = time.Now()
	}
	return []any{key, watch, channel, eventID, crawlID, listingKey, occurredAt, payload,
		maxAge.Seconds(), s.Owner, s.lease().Seconds(), dryRun, now, backlog, pending}, nil
}

// Claim implements notify.ClaimStore: the closes, the fingerprints, the resolutions of pending
// claims, then the claims, in one transaction.
func (s *Store) Claim(ctx context.Context, b notify.ClaimBatch) ([]notify.Claimed, error) {
	args, err := s.claimArgs(b, false)
	if err != nil {
		return nil, err
	}
	var out []notify.Claimed
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		out = nil
		if len(b.Closes) > 0 {
			closes := append([]notify.Close(nil), b.Closes...)
			sort.Slice(closes, func(i, j int) bool { return closes[i].ListingKey < closes[j].ListingKey }) // a stable lock order
			keys, at := make([]string, len(closes)), make([]time.Time, len(closes))
			for i, c := range closes {
				keys[i], at[i] = c.ListingKey, c.At
			}
			if _, err := tx.Exec(ctx, closesSQL, keys, at); err != nil {
				return fmt.Errorf("record closes: %w", err)
			}
		}
		if len(b.Fingerprints) > 0 {
			watches, fps := make([]string, len(b.Fingerprints)), make([]string, len(b.Fingerprints))
			for i, f := range b.Fingerprints {
				watches[i], fps[i] = f.Watch, f.Fingerprint
			}
			if _, err := tx.Exec(ctx, fingerprintsSQL, watches, fps); err != nil {
				return fmt.Errorf("record fingerprints: %w", err)
			}
		}
		if len(b.Resolve) > 0 {
			keys, statuses, reasons := make([]uuid.UUID, len(b.Resolve)), make([]string, len(b.Resolve)), make([]string, len(b.Resolve))
			for i, r := range b.Resolve {
				keys[i], statuses[i], reasons[i] = r.Key, string(r.Status), r.Reason
			}
			if _, err := tx.Exec(ctx, resolveSQL, keys, statuses, reasons, s.Owner, s.lease().Seconds()); err != nil {
				return fmt.Errorf("resolve pending claims: %w", err)
			}
		}
		if len(b.Claims) == 0 {
			return nil
		}
		var err error
		out, err = scanClaimed(tx.Query(ctx, claimSQL, args...))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim: %w", err)
	}
	return out, nil
}

// Preview is what Claim would do with b's claims, writing nothing (--dry-run): Status sending,
// skipped with the reason, or "claimed" for a claim that exists already.
func (s *Store) Preview(ctx context.Context, b notify.ClaimBatch) ([]notify.Claimed, error) {
	if len(b.Claims) == 0 {
		return nil, nil
	}
	args, err := s.claimArgs(b, true)
	if err != nil {
		return nil, err
	}
	out, err := scanClaimed(s.Pool.Query(ctx, claimSQL, args...))
	if err != nil {
		return nil, fmt.Errorf("dry run: %w", err)
	}
	return out, nil
}

func scanClaimed(rows pgx.Rows, err error) ([]notify.Claimed, error) {
	if err != nil {
		return nil, err
	}
	var out []notify.Claimed
	var c notify.Claimed
	var status string
	_, err = pgx.ForEachRow(rows, []any{&c.Key, &c.Channel, &status, &c.Reason}, func() error {
		c.Status = notify.Status(status)
		out = append(out, c)
		return nil
	})
	return out, err
}

// Pick implements notify.ClaimStore: it leases the claims ready on channel (its own, any whose
// lease expired, none waiting for a retry, none of a group still settling) and fixes the send keys
// of their groups. now is not used: leases run on the database's clock.
func (s *Store) Pick(ctx context.Context, ch *notify.Channel, _ time.Time, limit int) ([]notify.Group, error) {
	channel := ch.Name
	var groups []notify.Group
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, leaseSQL, channel, s.Owner, limit, s.settle().Seconds())
		if err != nil {
			return err
		}
		var picked []notify.PickRow
		var r notify.PickRow
		var sendKey *uuid.UUID
		var payload []byte
		var closed *time.Time
		_, err = pgx.ForEachRow(rows, []any{&r.Key, &r.Watch, &r.CrawlID, &payload, &sendKey, &r.Part, &r.Parts, &r.Attempts, &r.ClaimedAt, &r.Backlog, &r.Resend, &closed}, func() error {
			var e events.Event
			if err := json.Unmarshal(payload, &e); err != nil {
				return fmt.Errorf("notification %s: stored event: %w", r.Key, err)
			}
			r.Event, r.Channel, r.SendKey, r.Closed = &e, channel, uuid.Nil, time.Time{}
			if sendKey != nil {
				r.SendKey = *sendKey
			}
			if closed != nil {
				r.Closed = *closed
			}
			picked = append(picked, r)
			return nil
		})
		if err != nil {
			return err
		}
		groups = notify.Groups(picked, ch.Split)
		var keys, sendKeys []uuid.UUID
		var parts, ofParts []int16
		for _, g := range groups {
			for _, c := range g.Claims {
				keys = append(keys, c.Key)
				sendKeys = append(sendKeys, g.Key)
				parts, ofParts = append(parts, int16(g.Part)), append(ofParts, int16(g.Parts))
			}
		}
		if len(keys) == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, reletSQL, keys, sendKeys, s.Owner, s.lease().Seconds(), parts, ofParts)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("lease %s: %w", channel, err)
	}
	return groups, nil
}

// Attempt implements notify.ClaimStore: the lease is extended to hold plus the lease, the attempt
// counted, only while this process holds the claims (else notify.ErrLost).
func (s *Store) Attempt(ctx context.Context, g notify.Group, hold time.Duration) error {
	tag, err := s.Pool.Exec(ctx, attemptSQL, g.Keys(), s.Owner, (s.lease() + hold).Seconds())
	if err != nil {
		return fmt.Errorf("attempt: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return notify.ErrLost
	}
	return nil
}

// Finish implements notify.ClaimStore. A retry keeps the lease until o.RetryAt plus the lease.
func (s *Store) Finish(ctx context.Context, g notify.Group, o notify.Outcome) error {
	var err error
	if o.Status == notify.StatusRetry {
		wait := max(0, time.Until(o.RetryAt))
		_, err = s.Pool.Exec(ctx, extendSQL, g.Keys(), s.Owner, (wait + s.lease()).Seconds(), o.Error, o.RetryAt)
	} else {
		_, err = s.Pool.Exec(ctx, finishSQL, g.Keys(), s.Owner, string(o.Status), o.Error, o.Reason)
	}
	if err != nil {
		return fmt.Errorf("finish %s: %w", o.Status, err)
	}
	return nil
}

// List implements notify.ClaimStore.
func (s *Store) List(ctx context.Context, f notify.Filter) ([]notify.Notification, error) {
	if f.Limit <= 0 {
		f.Limit = 1000
	}
	rows, err := s.Pool.Query(ctx, listSQL, string(f.Status), f.Watch, f.Limit)
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (notify.Notification, error) {
		var n notify.Notification
		err := r.Scan(&n.Key, &n.Watch, &n.Channel, &n.EventID, &n.CrawlID, &n.EventType, &n.Course,
			&n.CoursePart, &n.PriceKRW, &n.PreviousPriceKRW, &n.PlayDate, &n.TeeTime, &n.OccurredAt, &n.Status, &n.Reason, &n.Error, &n.Attempts, &n.ClaimedAt, &n.SentAt)
		return n, err
	})
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	return out, nil
}

// Prune implements notify.ClaimStore.
func (s *Store) Prune(ctx context.Context, before time.Time) (int, error) {
	tag, err := s.Pool.Exec(ctx, pruneSQL, before)
	if err != nil {
		return 0, fmt.Errorf("prune notifications: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// Fingerprints returns the fingerprint each watch was last answered with (by watch); the
// notifier's watches are evaluated on every source at once, so the source is not kept (any
// source's are every source's).
func (s *Store) Fingerprints(ctx context.Context, _ string) (map[string]string, error) {
	rows, err := s.Pool.Query(ctx, fingerprintsReadSQL)
	if err != nil {
		return nil, fmt.Errorf("read fingerprints: %w", err)
	}
	out := map[string]string{}
	var w, f string
	if _, err := pgx.ForEachRow(rows, []any{&w, &f}, func() error { out[w] = f; return nil }); err != nil {
		return nil, fmt.Errorf("read fingerprints: %w", err)
	}
	return out, nil
}

// OpenListings returns the listings open now in booking_lifetimes, of every source (the
// notifier's watches are answered on every source at once; source is not read), each as the
// opening of its current lifetime (the backlog's events, notify.Watch.BacklogClaims): the start
// event's id and first-seen time, the values of its last event, and one crawl id for all of them,
// "backlog-<now>", so that a watch's answer on a channel goes out as one message.
func (s *Store) OpenListings(ctx context.Context, _ string) ([]*events.Event, error) {
	crawlID := "backlog-" + time.Now().UTC().Format("20060102T150405Z")
	rows, err := s.Pool.Query(ctx, openListingsSQL)
	if err != nil {
		return nil, fmt.Errorf("read open listings: %w", err)
	}
	var out []*events.Event
	var start, last []byte
	_, err = pgx.ForEachRow(rows, []any{&start, &last}, func() error {
		var st, e events.Event
		if err := json.Unmarshal(start, &st); err != nil {
			return fmt.Errorf("stored event: %w", err)
		}
		if err := json.Unmarshal(last, &e); err != nil {
			return fmt.Errorf("stored event: %w", err)
		}
		e.EventID, e.EventType, e.OccurredAt, e.CrawlID, e.Previous = st.EventID, events.ListingOpened, st.OccurredAt, crawlID, nil
		out = append(out, &e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read open listings: %w", err)
	}
	return out, nil
}

// Resend implements notify.ClaimStore: the claims are leased to Owner.
func (s *Store) Resend(ctx context.Context, f notify.ResendFilter) (int, error) {
	statuses := []string{string(notify.StatusFailed)}
	if f.IncludeUnknown {
		statuses = append(statuses, string(notify.StatusUnknown))
	}
	var since *time.Time
	if !f.Since.IsZero() {
		since = &f.Since
	}
	tag, err := s.Pool.Exec(ctx, resendSQL, statuses, f.Channels, f.Watch, since, s.Owner, s.lease().Seconds())
	if err != nil {
		return 0, fmt.Errorf("resend notifications: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// Pending implements notify.ClaimStore.
func (s *Store) Pending(ctx context.Context) ([]notify.Claim, error) {
	rows, err := s.Pool.Query(ctx, pendingSQL)
	if err != nil {
		return nil, fmt.Errorf("read pending claims: %w", err)
	}
	var out []notify.Claim
	var c notify.Claim
	var payload []byte
	_, err = pgx.ForEachRow(rows, []any{&c.Key, &c.Watch, &c.Channel, &payload}, func() error {
		var e events.Event
		if err := json.Unmarshal(payload, &e); err != nil {
			return fmt.Errorf("claim %s: stored event: %w", c.Key, err)
		}
		c.Event, c.Pending = &e, true
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read pending claims: %w", err)
	}
	return out, nil
}
