package pgclaims

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
)

// DefaultBatchWait is the notifier's consume-loop batch wait: an alert waits at most this long for
// company in its claim transaction (the booking consumer's 200 ms would add latency).
const DefaultBatchWait = 50 * time.Millisecond

// Claimer is the notifier's sink for the consume loop (internal/consumer): Ingest matches a batch
// against the watches (notify.Config.Batch) and claims every match in one transaction of Store, so
// that the loop commits the batch's offsets only once every match is durable. Undecodable messages
// are ignored (the booking consumer dead-letters them).
type Claimer struct {
	Store  *Store
	Config *notify.Config
	// Live, when set, is used instead of Config: the file's watches and the chat's in force now.
	Live   *notify.Live
	MaxAge time.Duration // notify.DefaultMaxAge if zero
	// Wake is called after a commit with the channels that got new claims.
	Wake    func(channels []string)
	Metrics *notify.Metrics
	Logger  *slog.Logger
	Now     func() time.Time // "today" for next_days and the claim time; time.Now if nil
	// DryRun, when set, writes what would be sent there and writes nothing to the database.
	DryRun io.Writer
}

// watches is the watches in force (Live's, else Config).
func (c *Claimer) watches() *notify.Config {
	if c.Live != nil {
		return c.Live.Load()
	}
	return c.Config
}

// Ingest claims the matches of one batch (see the notify package documentation).
func (c *Claimer) Ingest(ctx context.Context, batch []store.Message) (store.Result, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	evs := make([]*events.Event, 0, len(batch))
	invalid := 0
	for _, m := range batch {
		if m.Err != nil || m.Event == nil {
			invalid++ // the booking consumer dead-letters it; nothing to notify
			continue
		}
		evs = append(evs, m.Event)
	}
	if invalid > 0 && c.Logger != nil {
		c.Logger.WarnContext(ctx, "notifier: ignoring undecodable messages (the booking consumer dead-letters them)", "count", invalid)
	}
	b := c.watches().Batch(evs, now(), c.MaxAge)
	if c.DryRun != nil {
		return store.Result{Duplicates: len(batch)}, c.preview(ctx, b)
	}
	in := notify.Intake{Store: c.Store, Metrics: c.Metrics, Logger: c.Logger, Wake: c.Wake}
	claimed, err := in.Claim(ctx, b)
	if err != nil {
		return store.Result{}, fmt.Errorf("a batch of %d: %w", len(batch), err)
	}
	return store.Result{Inserted: claimed, Duplicates: len(batch) - min(claimed, len(batch))}, nil
}

// Backlog answers the watches that ask anew (notify.Config.Asking: new, or their fingerprint
// changed since the notifier last answered them) with the listings open now in booking_lifetimes
// (notify.Watch.BacklogClaims: worded as already open, once per watch, channel and listing
// lifetime under any fingerprint), in one claim transaction that records their fingerprints: a
// restart with the same watches claims nothing. noBacklog (--no-backlog) records the fingerprints
// and claims nothing, as a watch's backlog: false does for it. It returns the claims made sending.
// Under DryRun it prints what it would claim and records nothing.
func (c *Claimer) Backlog(ctx context.Context, noBacklog bool) (int, error) {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	known, err := c.Store.Fingerprints(ctx)
	if err != nil {
		return 0, fmt.Errorf("backlog: %w", err)
	}
	asking := c.watches().Asking(known, false)
	if len(asking) == 0 {
		return 0, nil
	}
	b := notify.ClaimBatch{Now: now(), MaxAge: c.MaxAge}
	var open []*events.Event
	wanted := slices.ContainsFunc(asking, func(w *notify.Watch) bool { return !w.NoBacklog })
	if !noBacklog && wanted {
		// One message per watch and channel: the backlog's events share one crawl id.
		if open, err = c.Store.OpenListings(ctx, "backlog-"+b.Now.UTC().Format("20060102T150405Z")); err != nil {
			return 0, fmt.Errorf("backlog: %w", err)
		}
	}
	b.AddBacklog(asking, open, "", noBacklog)
	if c.DryRun != nil {
		return 0, c.preview(ctx, b)
	}
	in := notify.Intake{Store: c.Store, Metrics: c.Metrics, Logger: c.Logger, Wake: c.Wake}
	claimed, err := in.Claim(ctx, b)
	if err != nil {
		return 0, fmt.Errorf("backlog: %w", err)
	}
	if c.Logger != nil {
		names := make([]string, len(asking))
		for i, w := range asking {
			names[i] = w.Name
		}
		c.Logger.InfoContext(ctx, "watches answered with what is open now", "watches", names, "open_listings", len(open),
			"claimed", claimed, "no_backlog", noBacklog)
	}
	return claimed, nil
}

// preview prints, per match, what a real run would do with it (Store.Preview writes nothing).
func (c *Claimer) preview(ctx context.Context, b notify.ClaimBatch) error {
	res, err := c.Store.Preview(ctx, b)
	if err != nil {
		return err
	}
	byKey := map[[16]byte]notify.Claim{}
	for _, cl := range b.Claims {
		byKey[cl.Key] = cl
	}
	now := time.Now()
	for _, r := range res {
		cl := byKey[r.Key]
		lang := "ko"
		if ch := c.watches().Channels[r.Channel]; ch != nil {
			lang = ch.Language
		}
		switch r.Status {
		case notify.StatusSending:
			text := notify.Text(lang, cl.Watch, []*events.Event{cl.Event}, now)
			if cl.Backlog {
				text = notify.BacklogText(lang, cl.Watch, []*events.Event{cl.Event}, now)
			}
			fmt.Fprintf(c.DryRun, "would send to %s (watch %s, key %s):\n%s\n\n", r.Channel, cl.Watch, r.Key, text)
		default:
			reason := r.Reason
			if reason == "" {
				reason = string(r.Status)
			}
			fmt.Fprintf(c.DryRun, "would skip %s for %s (watch %s, key %s): %s\n", cl.Event.EventID, r.Channel, cl.Watch, r.Key, reason)
		}
	}
	return nil
}
