package notify

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
)

var (
	//go:embed queries/claim.sql
	claimSQL string
	//go:embed queries/closes.sql
	closesSQL string
)

// Defaults of the notifier.
const (
	DefaultMaxAge      = 30 * time.Minute
	DefaultLease       = time.Minute
	DefaultMaxAttempts = 6
	// DefaultBatchWait is the notifier's consume-loop batch wait: an alert waits at most this long
	// for company in its claim transaction (the booking consumer's 200 ms would add latency).
	DefaultBatchWait = 50 * time.Millisecond
)

// keySpace is the uuid v5 namespace of claim keys.
var keySpace = uuid.MustParse("6f1d0c1e-8a55-4c0b-9a0e-6b1f7a3c2d15")

// ClaimKey is the stable key of (watch, channel, event): the notifications primary key and the
// Idempotency-Key of a message carrying that one notification.
func ClaimKey(watch, channel string, eventID uuid.UUID) uuid.UUID {
	return uuid.NewSHA1(keySpace, []byte(watch+"\x00"+channel+"\x00"+eventID.String()))
}

// Claimer is the notifier's sink for the consume loop (internal/consumer): Ingest matches a batch against
// the watches and claims every match in one transaction, so that the loop commits the batch's
// offsets only once every match is durable. Undecodable messages are ignored (the booking consumer
// dead-letters them).
type Claimer struct {
	Pool   *pgxpool.Pool
	Config *Config
	MaxAge time.Duration // DefaultMaxAge if zero
	Lease  time.Duration // DefaultLease if zero
	Owner  string        // this process's lease owner name
	// Wake is called after a commit with the channels that got new claims.
	Wake    func(channels []string)
	Metrics *Metrics
	Logger  *slog.Logger
	Now     func() time.Time // "today" for next_days; time.Now if nil
	// DryRun, when set, writes what would be sent there and writes nothing to the database.
	DryRun io.Writer
}

type claimRows struct {
	key, eventID                        []uuid.UUID
	watch, channel, crawlID, listingKey []string
	occurredAt                          []time.Time
	event                               [][]byte
	byKey                               map[uuid.UUID]int
	matches                             []*events.Event
	watches                             []*Watch
}

func (r *claimRows) args(maxAge, lease time.Duration, owner string, dryRun bool) []any {
	return []any{r.key, r.watch, r.channel, r.eventID, r.crawlID, r.listingKey, r.occurredAt, r.event,
		maxAge.Seconds(), owner, lease.Seconds(), dryRun}
}

// Ingest claims the matches of one batch (see the package documentation).
func (c *Claimer) Ingest(ctx context.Context, batch []store.Message) (store.Result, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	maxAge, lease := c.MaxAge, c.Lease
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	if lease <= 0 {
		lease = DefaultLease
	}
	t := now()
	rows := &claimRows{byKey: map[uuid.UUID]int{}}
	closes := map[string]time.Time{}
	invalid := 0
	for _, m := range batch {
		e := m.Event
		if m.Err != nil || e == nil {
			invalid++ // the booking consumer dead-letters it; nothing to notify
			continue
		}
		if e.EventType == events.ListingClosed {
			if e.OccurredAt.After(closes[e.ListingKey]) {
				closes[e.ListingKey] = e.OccurredAt
			}
			continue
		}
		for _, w := range c.Config.MatchAll(e, t) {
			payload, err := json.Marshal(e)
			if err != nil {
				return store.Result{}, fmt.Errorf("encode event %s: %w", e.EventID, err)
			}
			for _, ch := range w.Channels {
				k := ClaimKey(w.Name, ch, e.EventID)
				if _, dup := rows.byKey[k]; dup {
					continue
				}
				rows.byKey[k] = len(rows.key)
				rows.key = append(rows.key, k)
				rows.watch = append(rows.watch, w.Name)
				rows.channel = append(rows.channel, ch)
				rows.eventID = append(rows.eventID, e.EventID)
				rows.crawlID = append(rows.crawlID, e.CrawlID)
				rows.listingKey = append(rows.listingKey, e.ListingKey)
				rows.occurredAt = append(rows.occurredAt, e.OccurredAt)
				rows.event = append(rows.event, payload)
				rows.matches = append(rows.matches, e)
				rows.watches = append(rows.watches, w)
			}
		}
	}
	if invalid > 0 && c.Logger != nil {
		c.Logger.WarnContext(ctx, "notifier: ignoring undecodable messages (the booking consumer dead-letters them)", "count", invalid)
	}
	if c.DryRun != nil {
		return c.preview(ctx, rows, maxAge, lease, len(batch))
	}
	if len(rows.key) == 0 && len(closes) == 0 {
		return store.Result{Duplicates: len(batch)}, nil
	}
	var claimed, skipped = 0, map[string]int{}
	woken := map[string]bool{}
	err := pgx.BeginFunc(ctx, c.Pool, func(tx pgx.Tx) error {
		claimed, skipped, woken = 0, map[string]int{}, map[string]bool{}
		if len(closes) > 0 {
			keys := make([]string, 0, len(closes))
			for k := range closes {
				keys = append(keys, k)
			}
			sort.Strings(keys) // a stable lock order between concurrent notifiers
			at := make([]time.Time, len(keys))
			for i, k := range keys {
				at[i] = closes[k]
			}
			if _, err := tx.Exec(ctx, closesSQL, keys, at); err != nil {
				return fmt.Errorf("record closes: %w", err)
			}
		}
		if len(rows.key) == 0 {
			return nil
		}
		res, err := tx.Query(ctx, claimSQL, rows.args(maxAge, lease, c.Owner, false)...)
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		var key uuid.UUID
		var channel, status, reason string
		_, err = pgx.ForEachRow(res, []any{&key, &channel, &status, &reason}, func() error {
			if status == "sending" {
				claimed++
				woken[channel] = true
			} else {
				skipped[reason]++
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		return nil
	})
	if err != nil {
		return store.Result{}, fmt.Errorf("claim %d matches of a batch of %d: %w", len(rows.key), len(batch), err)
	}
	for reason, n := range skipped {
		c.Metrics.skipped(reason, n)
	}
	c.Metrics.claimed(claimed)
	if claimed > 0 && c.Wake != nil {
		chs := make([]string, 0, len(woken))
		for ch := range woken {
			chs = append(chs, ch)
		}
		c.Wake(chs)
	}
	nskipped := 0
	for _, n := range skipped {
		nskipped += n
	}
	if c.Logger != nil && (claimed > 0 || nskipped > 0) {
		c.Logger.InfoContext(ctx, "claimed matches", "claimed", claimed, "skipped", nskipped, "matches", len(rows.key))
	}
	return store.Result{Inserted: claimed, Duplicates: len(batch) - min(claimed, len(batch))}, nil
}

// preview prints, per match, what a real run would do with it: claim.sql in its dry-run mode, which
// writes nothing.
func (c *Claimer) preview(ctx context.Context, rows *claimRows, maxAge, lease time.Duration, n int) (store.Result, error) {
	if len(rows.key) == 0 {
		return store.Result{Duplicates: n}, nil
	}
	res, err := c.Pool.Query(ctx, claimSQL, rows.args(maxAge, lease, c.Owner, true)...)
	if err != nil {
		return store.Result{}, fmt.Errorf("dry run: %w", err)
	}
	var key uuid.UUID
	var channel, status, reason string
	now := time.Now()
	_, err = pgx.ForEachRow(res, []any{&key, &channel, &status, &reason}, func() error {
		i := rows.byKey[key]
		w, e := rows.watches[i], rows.matches[i]
		lang := "ko"
		if ch := c.Config.Channels[channel]; ch != nil {
			lang = ch.Language
		}
		switch status {
		case "sending":
			fmt.Fprintf(c.DryRun, "would send to %s (watch %s, key %s):\n%s\n\n", channel, w.Name, key,
				Text(lang, w.Name, []*events.Event{e}, now))
		default:
			if reason == "" {
				reason = status
			}
			fmt.Fprintf(c.DryRun, "would skip %s for %s (watch %s, key %s): %s\n", e.EventID, channel, w.Name, key, reason)
		}
		return nil
	})
	if err != nil {
		return store.Result{}, fmt.Errorf("dry run: %w", err)
	}
	return store.Result{Duplicates: n}, nil
}
