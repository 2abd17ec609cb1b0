package notify

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/events"
)

// ClaimStore keeps the alert engine's claims: one row per (watch, channel, event) match, from the
// claim to its final status. The engine (matching, grouping, messages, channels, the Sender)
// never sees the database behind it. Two implementations: internal/notify/pgclaims (PostgreSQL,
// `booking-consumer notify`, several processes under a lease) and internal/notify/liteclaims
// (SQLite in the crawler's state dir, one process). Both pass internal/notify/claimstoretest.
//
// The store's promises, which the engine's guarantees rest on:
//
//   - Claim is one durable transaction (committed and synced when it returns nil). A claim whose
//     Key exists already (a redelivery, a replay, the next crawl re-deriving the same transition)
//     creates nothing and is not returned. At claim time a claim whose event occurred before
//     batch.Now-batch.MaxAge is stored as skipped "stale", one whose listing has a close stored
//     later than its event as skipped "closed". The batch's Closes are stored in the same
//     transaction (the latest close per listing), for that rule and for Group.Closed.
//   - Pick returns the groups of channel ch ready to send at now, at most limit claims in all: every
//     claim still StatusSending, none already finished. A group is one message: claims of one
//     watch, channel and crawl, sorted by play date, tee time and course, as ch.Split cuts them (Groups). Its Key (the
//     Idempotency-Key) and its Part of Parts are fixed the first time the group is picked and
//     returned unchanged by every later Pick, after retries and restarts. A leasing store (PostgreSQL) gives each group to one
//     process at a time and hands it out again once the lease expired (the holder died); a
//     single-process store (SQLite) returns at start-up every claim still sending, and afterwards
//     each group once per Finish(StatusRetry) whose RetryAt has passed. A claim finished as sent,
//     failed, unknown or skipped is never picked again. Pick is called by one sender per channel.
//   - Attempt counts an attempt of g before its request leaves; hold is how long the attempt may
//     take (a leasing store keeps its lease at least that long). ErrLost: another process holds
//     the group now; do not send.
//   - Finish records o for g's claims (the ones in g.Claims only, so that the engine can skip part
//     of a group and send the rest). A final status (sent, failed, unknown, skipped) ends the
//     claims; StatusRetry keeps them sending, with o.Error kept, until o.RetryAt.
//   - A claim marked Pending (the crawler path's confirm, #51) is stored StatusPending and never
//     picked until the batch of a later Claim resolves it (ClaimBatch.Resolve: sending, withheld
//     or skipped); a resolution applies only to a claim still pending, in that batch's
//     transaction, before its claims. A leasing store leases a claim it resolves to sending to its
//     owner. Pending returns every claim still pending.
//   - List returns claims newest first, filtered.
//   - Prune deletes the sent, skipped and withheld claims claimed before before and returns how
//     many.
//   - Resend puts the failed claims f selects (and the unknown ones, with f.IncludeUnknown) back
//     to sending, marked Resend, keeping their send keys and parts (each message goes out again
//     under the key it failed with), and returns how many; a leasing store leases them to its
//     owner. The caller's Sender then picks and sends them.
//
// Errors (o.Error, and any error a store returns) never hold a channel's URL or token: the engine
// scrubs o.Error before Finish.
type ClaimStore interface {
	Claim(ctx context.Context, batch ClaimBatch) ([]Claimed, error)
	Pick(ctx context.Context, ch *Channel, now time.Time, limit int) ([]Group, error)
	Attempt(ctx context.Context, g Group, hold time.Duration) error
	Finish(ctx context.Context, g Group, o Outcome) error
	List(ctx context.Context, f Filter) ([]Notification, error)
	Prune(ctx context.Context, before time.Time) (int, error)
	Resend(ctx context.Context, f ResendFilter) (int, error)
	Pending(ctx context.Context) ([]Claim, error)
}

// ErrLost is Attempt's answer when the group is no longer this process's to send.
var ErrLost = errors.New("claims lost: another sender holds them")

// Status is a claim's status (notifications.status).
type Status string

// The statuses. Sending and Pending are the ones that are not final (Retry is an Outcome that keeps
// a claim sending). They are defined here once for both claim stores (liteclaims, pgclaims).
const (
	StatusSending Status = "sending" // claimed; being delivered
	// StatusPending: claimed on the crawler path with confirm_after, waiting for a crawl of its
	// page set at least confirm_after after its first sighting (ClaimBatch.Resolve); never picked.
	StatusPending Status = "pending"
	// StatusWithheld: a pending claim whose listing closed before it was confirmed (a slot that
	// showed for a moment); never sent.
	StatusWithheld Status = "withheld"
	StatusSent     Status = "sent"   // the channel answered 2xx
	StatusFailed   Status = "failed" // a permanent answer, or max attempts of transient ones
	// StatusUnknown: a chat channel (no idempotency key) timed out after the request was sent;
	// it may have been delivered, so it is never re-sent automatically.
	StatusUnknown Status = "unknown"
	StatusSkipped Status = "skipped" // never sent; Reason says why
	StatusRetry   Status = "retry"   // Outcome only: keep sending at RetryAt
)

// Reasons of skipped claims.
const (
	ReasonStale        = "stale"         // the event occurred more than MaxAge before the claim or the send
	ReasonClosed       = "closed"        // a later close of the listing was stored
	ReasonWatchRemoved = "watch_removed" // the watch is no longer in the watches file
	ReasonWatchMuted   = "watch_muted"   // the watch has enabled: false
	// ReasonLeftWatch: a pending claim whose listing, when a crawl confirmed it open, no longer
	// matched its watch (its price rose again, its players went): what enters again is a new claim.
	ReasonLeftWatch = "left_watch"
)

// Claim is one match to claim: watch Watch fired on Event, to be sent on Channel.
type Claim struct {
	Key     uuid.UUID // ClaimKey(Watch, Channel, Event.EventID)
	Watch   string
	Channel string
	Event   *events.Event
	// Backlog: the listing was open before the watch asked (a new or changed watch, the first
	// crawl of a source): claimed only if no claim of the watch, channel and listing exists for
	// its lifetime (Event.OccurredAt is its first-seen time), never stale at claim time, stale at
	// send time only MaxAge after its claim, worded as already open.
	Backlog bool
	// Pending: claimed StatusPending, to wait for its confirmation (the crawler path's
	// confirm_after) instead of being sent at once; a skip at claim time (stale, closed) wins.
	Pending bool
}

// Resolve is what becomes of a pending claim (ClaimBatch.Resolve): StatusSending (confirmed: a
// later crawl still showed its listing in its watch), StatusWithheld (its listing closed first) or
// StatusSkipped with Reason (stale, left_watch).
type Resolve struct {
	Key    uuid.UUID
	Status Status
	Reason string
}

// Close is a listing's close seen in a batch.
type Close struct {
	ListingKey string
	At         time.Time
}

// ClaimBatch is what one Claim transaction records (Config.Batch builds it from events).
type ClaimBatch struct {
	Claims []Claim
	Closes []Close
	// Fingerprints are recorded (replacing the watch and source's earlier one) in the same
	// transaction: the questions the batch's Backlog claims answered.
	Fingerprints []WatchFingerprint
	// Resolve are the pending claims this batch confirms, withholds or skips (a claim no longer
	// pending is left as it is), applied before Claims.
	Resolve []Resolve
	Now     time.Time     // claim time, for the stale rule
	MaxAge  time.Duration // DefaultMaxAge if zero
}

// Claimed is one claim Claim created: Status is StatusSending, StatusPending, or StatusSkipped with
// the Reason.
type Claimed struct {
	Key     uuid.UUID
	Channel string
	Status  Status
	Reason  string
}

// Group is the claims of one message, as Pick returns them.
type Group struct {
	Key     uuid.UUID // the Idempotency-Key of the message, stable across Picks
	Watch   string
	Channel string
	CrawlID string
	// Part of Parts: the message's place among the messages its claims were split in when they
	// were first picked (0 of 0 from a store that predates the split: not numbered).
	Part, Parts int
	Claims      []GroupClaim
}

// GroupClaim is one claim of a Group.
type GroupClaim struct {
	Key       uuid.UUID
	Event     *events.Event
	Attempts  int       // attempts so far
	ClaimedAt time.Time //
	Backlog   bool      // Claim.Backlog
	// Resend: put back to sending by `notifications resend` (ClaimStore.Resend): exempt from the
	// event-age check (a person asked for it), not from the others.
	Resend bool
	// Closed is the latest close of the event's listing the store knows of (zero: none); the
	// sender skips the claim when it is later than the event.
	Closed time.Time
}

// Outcome is what Finish records.
type Outcome struct {
	Status  Status    // sent, failed, unknown, skipped, or retry
	Reason  string    // skipped: why (ReasonStale, ...)
	Error   string    // failed, unknown, retry: the last error (scrubbed)
	RetryAt time.Time // retry: not before (a leasing store holds its lease until then)
}

// Filter selects the claims List returns ("" = any).
type Filter struct {
	Status Status
	Watch  string
	Limit  int // 1000 if zero
}

// ResendFilter selects the claims Resend puts back to sending.
type ResendFilter struct {
	Channels       []string  // only claims of these channels (the ones the watches file defines)
	IncludeUnknown bool      // also the unknown ones (maybe delivered)
	Watch          string    // "" = any
	Since          time.Time // claimed at or after (zero: any)
}

// PickRow is one sending claim a store read for Pick, in claim order.
type PickRow struct {
	GroupClaim
	Watch, Channel, CrawlID string
	SendKey                 uuid.UUID // uuid.Nil until its group was first picked
	Part, Parts             int       // its group's, fixed with SendKey
}

// Groups forms the messages of rows, for a store's Pick: rows that have a send key go in the group
// of that key (with its Part and Parts); the others, by watch, channel and crawl, sorted by play
// date, tee time and course (teeTimeOrder; a keyed group's claims too), are cut by split
// (Channel.Split; nil: MaxEventsPerMessage a message) into groups under new keys (the claim key of
// a group of one, else a uuid v5 over its sorted claim keys), numbered Part of Parts. The store
// then persists every group's Key, Part and Parts on its claims, so that the next Pick returns the
// same messages: the split is decided once.
func Groups(rows []PickRow, split func(watch string, evs []*events.Event) []int) []Group {
	if split == nil {
		split = (&Channel{Type: Webhook}).Split
	}
	type slot struct {
		g     *Group    // a keyed group
		fresh []PickRow // or the rows of one watch and crawl without a key
	}
	var slots []*slot
	byKey := map[uuid.UUID]*slot{}
	byCrawl := map[[3]string]*slot{}
	for _, r := range rows {
		if r.SendKey != uuid.Nil {
			sl := byKey[r.SendKey]
			if sl == nil {
				sl = &slot{g: &Group{Key: r.SendKey, Watch: r.Watch, Channel: r.Channel, CrawlID: r.CrawlID, Part: r.Part, Parts: r.Parts}}
				byKey[r.SendKey] = sl
				slots = append(slots, sl)
			}
			sl.g.Claims = append(sl.g.Claims, r.GroupClaim)
			continue
		}
		id := [3]string{r.Watch, r.Channel, r.CrawlID}
		sl := byCrawl[id]
		if sl == nil {
			sl = &slot{}
			byCrawl[id] = sl
			slots = append(slots, sl)
		}
		sl.fresh = append(sl.fresh, r)
	}
	var out []Group
	for _, sl := range slots {
		if sl.g != nil {
			slices.SortStableFunc(sl.g.Claims, func(a, b GroupClaim) int { return teeTimeOrder(a.Event, b.Event) })
			out = append(out, *sl.g)
			continue
		}
		slices.SortStableFunc(sl.fresh, func(a, b PickRow) int { return teeTimeOrder(a.Event, b.Event) })
		evs := make([]*events.Event, len(sl.fresh))
		for i, r := range sl.fresh {
			evs[i] = r.Event
		}
		sizes := split(sl.fresh[0].Watch, evs)
		rest := sl.fresh
		for i, n := range sizes {
			r := rest[0]
			g := Group{Watch: r.Watch, Channel: r.Channel, CrawlID: r.CrawlID, Part: i + 1, Parts: len(sizes)}
			for _, r := range rest[:n] {
				g.Claims = append(g.Claims, r.GroupClaim)
			}
			rest = rest[n:]
			g.Key = groupKey(g.Keys())
			out = append(out, g)
		}
	}
	// The parts of one watch, channel and crawl go out in their order (part 1, the earliest tee
	// times, first), wherever their claims were in claim order.
	first := map[[3]string]int{}
	for i, g := range out {
		if _, ok := first[[3]string{g.Watch, g.Channel, g.CrawlID}]; !ok {
			first[[3]string{g.Watch, g.Channel, g.CrawlID}] = i
		}
	}
	slices.SortStableFunc(out, func(a, b Group) int {
		return cmp.Or(cmp.Compare(first[[3]string{a.Watch, a.Channel, a.CrawlID}], first[[3]string{b.Watch, b.Channel, b.CrawlID}]),
			cmp.Compare(a.Part, b.Part))
	})
	return out
}

// teeTimeOrder is the order of a message's lines: play date, then tee time, then course and part
// (a golfer reads for the earliest slot first).
func teeTimeOrder(a, b *events.Event) int {
	return cmp.Or(strings.Compare(a.PlayDate, b.PlayDate), strings.Compare(a.TeeTime, b.TeeTime),
		strings.Compare(courseOf(a), courseOf(b)))
}

// Keys are the claim keys of g.
func (g Group) Keys() []uuid.UUID {
	out := make([]uuid.UUID, len(g.Claims))
	for i, c := range g.Claims {
		out[i] = c.Key
	}
	return out
}
