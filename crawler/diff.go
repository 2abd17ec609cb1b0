package crawler

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// DefaultMissesToClose is how many complete crawls in a row must miss a listing whose tee time is
// still ahead before it closes as booked. One miss could be a site glitch (a row that failed to
// render, a page served from a stale cache); two in a row, each in a crawl that was otherwise
// complete, is the signal. A listing whose tee time has passed closes as expired at its first
// complete miss: nothing can book it any more, so there is no false close to guard against.
const DefaultMissesToClose = 2

// DefaultCollapseCrawls is how many complete crawls in a row must collapse (see Collapsed) with the
// same listings before the collapse is believed: a sell-out is real, while a maintenance page, a
// login wall or a changed layout rarely serves the same rows three times and then recovers before
// that. Until then a collapsed crawl is incomplete: it closes nothing.
const DefaultCollapseCrawls = 3

// Crawl identifies one crawl of one source: ID is its crawl_id (informational in the events; it
// becomes the epoch of a new snapshot, so it must be unique per crawl), At the instant the crawl observed the listings, and Complete whether
// every page of the source was fetched and parsed (see Collapsed). Only a complete crawl may count
// a missing listing as a miss.
//
// Collapsed says that the crawl, although every page was fetched, found far fewer listings than the
// last complete crawl (see Collapsed and Snapshot.LastCompleteSeen): Diff then treats it as
// incomplete unless the collapse has repeated with the same listings for CollapseCrawls crawls.
type Crawl struct {
	ID        string
	Source    string
	At        time.Time
	Complete  bool
	Collapsed bool
	// Withheld, optional, names listings a complete crawl could not see: those of the page sets
	// of its failed pages (PageSet). A missing listing it reports is kept as in an incomplete
	// crawl, and the crawl does not become the collapse guard's reference. nil: none.
	Withheld func(events.Listing) bool
}

// DiffOptions tunes Diff. The zero value means MissesToClose DefaultMissesToClose, CollapseCrawls
// DefaultCollapseCrawls and Location Seoul().
type DiffOptions struct {
	MissesToClose  int
	CollapseCrawls int
	Location       *time.Location
}

// Snapshot is what the crawler remembers of one source between crawls: every open listing by its
// listing key, and every closed one whose tee time is still ahead (a tombstone, ClosedAt set), as
// of crawl CrawlID at At. Epoch is the event id epoch of this state (see events.Seq): the id of the
// crawl that started it, kept as long as the state lives. It is stored as JSON by StateDir.
type Snapshot struct {
	Source   string                   `json:"source"`
	CrawlID  string                   `json:"crawl_id"`
	At       time.Time                `json:"at"`
	Epoch    string                   `json:"epoch,omitempty"`
	Listings map[string]SnapshotEntry `json:"listings"`

	// LastCompleteAt and LastCompleteSeen are the time and the listing count of the last complete
	// crawl (zero in a snapshot written before they were kept): the collapse guard's reference.
	LastCompleteAt   time.Time `json:"last_complete_at,omitzero"`
	LastCompleteSeen int       `json:"last_complete_seen,omitempty"`
	// Collapses counts the collapsed crawls in a row with the same listings, since CollapsedSince,
	// not believed yet. Incomplete counts the crawls since the last complete one.
	Collapses      int       `json:"collapses,omitempty"`
	CollapsedSince time.Time `json:"collapsed_since,omitzero"`
	Incomplete     int       `json:"incomplete,omitempty"`

	// ListSeen is the holder of the rows on the source's last pages with rows (Result.ListSeen):
	// what a page without rows must show to count as sold out when the site has no list selector.
	// TargetCollapses counts, per target (course name), the collapsed crawls in a row of the
	// per-target collapse guard, not believed yet. The runner keeps both; Diff does not.
	ListSeen        string         `json:"list_seen,omitempty"`
	TargetCollapses map[string]int `json:"target_collapses,omitempty"`
}

// SnapshotEntry is one listing: its last seen values, how many complete crawls in a row have
// missed it since, when it was first seen and, while it is being missed, the first of those
// complete crawls (MissedAt: the close's occurred_at, and what decides booked or expired).
// Lifetime and Changes number its transitions (events.Seq): Lifetime counts its openings (0 in a
// snapshot written before they were counted: 1), Changes its changes within the lifetime. A closed
// listing is kept as a tombstone (ClosedAt set) until its tee time has passed, so that a reopen
// starts lifetime Lifetime+1 instead of reusing the ids of the closed one.
type SnapshotEntry struct {
	Listing   events.Listing `json:"listing"`
	Misses    int            `json:"misses"`
	FirstSeen time.Time      `json:"first_seen"`
	MissedAt  time.Time      `json:"missed_at,omitzero"`
	Lifetime  int            `json:"lifetime,omitempty"`
	Changes   int            `json:"changes,omitempty"`
	ClosedAt  time.Time      `json:"closed_at,omitzero"`
	// Suspect counts the collapsed crawls of the current collapse that missed the listing, since
	// SuspectSince: misses held back until the collapse is believed.
	Suspect      int       `json:"suspect,omitempty"`
	SuspectSince time.Time `json:"suspect_since,omitzero"`
}

// Open reports whether the entry is an open listing, not a tombstone.
func (e SnapshotEntry) Open() bool { return e.ClosedAt.IsZero() }

// seq is the events.Seq of the entry's current lifetime in epoch.
func (e SnapshotEntry) seq(epoch string) events.Seq {
	return events.Seq{Epoch: epoch, Lifetime: max(e.Lifetime, 1), Change: e.Changes}
}

// OpenCount is the number of open listings in the snapshot (tombstones excluded).
func (s Snapshot) OpenCount() int {
	n := 0
	for _, e := range s.Listings {
		if e.Open() {
			n++
		}
	}
	return n
}

// DiffStats counts what one Diff saw, for logs and metrics.
type DiffStats struct {
	Seen          int                        // distinct valid listings in the crawl
	Opened        int                        // listing_opened events
	Changed       int                        // listing_changed events
	Closed        int                        // listing_closed events
	Missed        int                        // listings missing from a complete crawl, kept open for now
	Past          int                        // listings not open before whose tee time has passed: not opened
	Kept          int                        // listings missing from an incomplete crawl, kept unchanged
	Duplicates    int                        // listings dropped because their key was already seen in this crawl
	DuplicateKeys []string                   // the keys of those, sorted, each once
	Invalid       []InvalidListing           // listings dropped because their events would not validate
	Reasons       map[events.CloseReason]int // closed events by reason
	Collapses     int                        // collapsed crawls in a row with the same listings, this one included (0: not collapsed)
	Believed      bool                       // the collapse repeated CollapseCrawls times: the crawl counted as complete
}

// Effective reports whether the crawl counted as complete: c.Complete and not collapsed, or a
// collapse believed after its repeats.
func (s DiffStats) Effective(c Crawl) bool {
	return c.Complete && (!c.Collapsed || s.Believed)
}

// InvalidListing is a crawled listing that cannot make a valid event, and why.
type InvalidListing struct {
	Listing events.Listing
	Err     error
}

// Diff compares one crawl of a source (cur) with that source's previous snapshot and returns the
// events that turn prev into cur, the snapshot to store for the next crawl, and counts.
//
//   - A key not in prev opens (listing_opened).
//   - A key in both whose price or players differ changes (listing_changed, with the old values);
//     any other difference (round_date text, URL) only updates the snapshot.
//   - A key in prev but not in cur, when c.Complete, is missed: its Misses grows by one and the
//     first complete crawl of the streak that misses it is remembered (MissedAt). If its tee time
//     (play_date + tee_time in opt.Location) is at or before MissedAt, it closes as expired now;
//     otherwise it closes as booked once Misses reaches MissesToClose (a tee time gone before it
//     started was booked, even when the confirming miss comes after it). Either close's
//     occurred_at is MissedAt: when it was observed gone. When !c.Complete it is kept with Misses
//     unchanged and nothing closes.
//   - A key seen again resets its Misses and MissedAt without an event.
//   - A complete crawl with c.Collapsed (far fewer listings than the last complete crawl) counts as
//     incomplete, its misses held back per entry (Suspect), unless it continues a collapse: its
//     listings are the same as the previous collapsed crawl's or fewer (none opened, none back),
//     and that for opt.CollapseCrawls crawls in a row. Then the collapse is believed: the crawl
//     counts as complete and each entry's held-back misses count, MissedAt the first of them. A
//     complete crawl that is not collapsed drops held-back misses; it counts one miss, as usual.
//     next records the last complete crawl (LastCompleteAt, LastCompleteSeen: len(cur)), the
//     collapse so far and the crawls since the last complete one (see Snapshot).
//   - A key not in prev whose tee time is at or before c.At is not opened (stats.Past): sites
//     keep showing past rounds for a while, and opening one would only have it expire at its next
//     miss, a false open/close pair per crawl.
//
// Within cur the first listing of a key wins; later ones are counted in stats.Duplicates. A listing
// whose event would fail events.Validate (no course name, bad play_date, a source other than
// c.Source, ...) is dropped and reported in stats.Invalid; if its key was open, the entry is kept
// as if seen, so that a misparsed row never closes a listing. Events come out sorted by listing key,
// then type. Their ids are events.TransitionID over (key, epoch, lifetime, type, change number,
// new values), counted in the snapshot, never over the crawl: diffing the same prev again, in any
// later crawl, re-derives the same transitions with the same ids. A closed listing stays in next
// as a tombstone until its tee time has passed, and a listing seen again while it has a tombstone
// reopens in its next lifetime. next.Epoch is prev's; a prev without one starts a new epoch (see
// Snapshot). c.ID must be non-empty and c.At non-zero. Diff does not modify prev.
func Diff(prev Snapshot, cur []events.Listing, c Crawl, opt DiffOptions) (out []events.Event, next Snapshot, stats DiffStats) {
	if opt.MissesToClose <= 0 {
		opt.MissesToClose = DefaultMissesToClose
	}
	if opt.Location == nil {
		opt.Location = Seoul()
	}
	if opt.CollapseCrawls <= 0 {
		opt.CollapseCrawls = DefaultCollapseCrawls
	}
	next = Snapshot{Source: c.Source, CrawlID: c.ID, At: c.At, Epoch: prev.Epoch, Listings: make(map[string]SnapshotEntry, len(cur))}
	switch {
	case next.Epoch != "":
	case prev.CrawlID != "":
		next.Epoch = prev.CrawlID // a snapshot from before epochs: stable for every re-derivation from it
	default:
		next.Epoch = c.ID // a new state: a new epoch
	}
	stats.Reasons = map[events.CloseReason]int{}
	seen := make(map[string]bool, len(cur))
	dups := map[string]bool{}
	// sameListings stays true while every listing of this crawl was open and seen by the previous
	// crawl: the condition for a collapse to continue the previous one.
	sameListings := prev.Collapses > 0

	for _, l := range cur {
		key := l.Key()
		if seen[key] {
			stats.Duplicates++
			dups[key] = true
			continue
		}
		old, ok := prev.Listings[key]
		live := ok && old.Open()
		if err := checkListing(l, c); err != nil {
			stats.Invalid = append(stats.Invalid, InvalidListing{Listing: l, Err: err})
			if live {
				seen[key] = true
				old.Misses, old.MissedAt, old.Suspect, old.SuspectSince = 0, time.Time{}, 0, time.Time{}
				next.Listings[key] = old
			}
			continue
		}
		seen[key] = true
		stats.Seen++
		if !live || old.Suspect > 0 {
			sameListings = false
		}
		if !live && teeTimePassed(l, c.At, opt.Location) {
			stats.Past++ // nothing can book it any more: opening it would only expire it again
			continue
		}
		if !live {
			e := SnapshotEntry{Listing: l, FirstSeen: c.At, Lifetime: 1}
			if ok { // a tombstone: this is a reopen, the next lifetime
				e.Lifetime = max(old.Lifetime, 1) + 1
			}
			out = append(out, events.OpenedSeq(l, e.seq(next.Epoch), c.ID, c.At))
			stats.Opened++
			next.Listings[key] = e
			continue
		}
		e := SnapshotEntry{Listing: l, FirstSeen: old.FirstSeen, Lifetime: max(old.Lifetime, 1), Changes: old.Changes}
		if !equalInt64(old.Listing.PriceKRW, l.PriceKRW) || !equalInt(old.Listing.Players, l.Players) {
			e.Changes++
			out = append(out, events.ChangedSeq(old.Listing, l, e.seq(next.Epoch), c.ID, c.At))
			stats.Changed++
		}
		next.Listings[key] = e
	}

	complete := c.Complete
	switch {
	case !c.Complete:
		next.Collapses, next.CollapsedSince = prev.Collapses, prev.CollapsedSince
	case c.Collapsed:
		next.Collapses, next.CollapsedSince = 1, c.At
		if sameListings {
			next.Collapses, next.CollapsedSince = prev.Collapses+1, prev.CollapsedSince
		}
		stats.Collapses = next.Collapses
		stats.Believed = next.Collapses >= opt.CollapseCrawls
		complete = stats.Believed
		if stats.Believed {
			next.Collapses, next.CollapsedSince = 0, time.Time{}
		}
	}
	if complete && c.Withheld == nil {
		next.LastCompleteAt, next.LastCompleteSeen = c.At, len(cur)
	} else {
		next.LastCompleteAt, next.LastCompleteSeen, next.Incomplete = prev.LastCompleteAt, prev.LastCompleteSeen, prev.Incomplete+1
	}

	for key, e := range prev.Listings {
		if seen[key] {
			continue
		}
		if !e.Open() {
			// A tombstone is kept while a reopen is possible: until its tee time has passed.
			if !teeTimePassed(e.Listing, c.At, opt.Location) {
				next.Listings[key] = e
			}
			continue
		}
		if c.Complete && c.Collapsed {
			// A collapsed crawl's miss is held back as suspect; a new collapse starts the count over.
			if !sameListings || e.Suspect == 0 {
				e.Suspect, e.SuspectSince = 0, c.At
			}
			e.Suspect++
		}
		if !complete || (c.Withheld != nil && c.Withheld(e.Listing)) {
			next.Listings[key] = e
			stats.Kept++
			continue
		}
		switch {
		case c.Collapsed && e.Suspect > 0: // a believed collapse: each collapsed crawl that missed it was a miss
			e.Misses += e.Suspect
			if e.MissedAt.IsZero() {
				e.MissedAt = e.SuspectSince
			}
			e.Suspect, e.SuspectSince = 0, time.Time{}
		default: // a complete crawl: misses held back by an unbelieved collapse are dropped
			e.Suspect, e.SuspectSince = 0, time.Time{}
			e.Misses++
			if e.MissedAt.IsZero() {
				e.MissedAt = c.At
			}
		}
		reason := events.Booked
		if teeTimePassed(e.Listing, e.MissedAt, opt.Location) {
			reason = events.Expired
		} else if e.Misses < opt.MissesToClose {
			next.Listings[key] = e
			stats.Missed++
			continue
		}
		out = append(out, events.ClosedSeq(e.Listing, e.seq(next.Epoch), c.ID, e.MissedAt, reason))
		stats.Closed++
		stats.Reasons[reason]++
		if !teeTimePassed(e.Listing, c.At, opt.Location) {
			e.ClosedAt = e.MissedAt
			next.Listings[key] = e
		}
	}

	slices.SortFunc(out, func(a, b events.Event) int {
		return cmp.Or(strings.Compare(a.ListingKey, b.ListingKey), typeOrder(a.EventType)-typeOrder(b.EventType))
	})
	for k := range dups {
		stats.DuplicateKeys = append(stats.DuplicateKeys, k)
	}
	slices.Sort(stats.DuplicateKeys)
	return out, next, stats
}

// Collapsed reports whether a crawl found so few listings compared with the last complete crawl
// (fewer than half; an empty page where there were listings) that it may have failed rather than
// the course sold out: a changed page layout, a login wall, an error page served with status 200.
// Diff then treats the crawl as incomplete, so that nothing closes on its evidence, until the
// collapse has repeated with the same listings for DiffOptions.CollapseCrawls crawls. There is no
// minimum: a small site's empty page is a collapse too.
func Collapsed(lastCompleteCount, curCount int) bool {
	return lastCompleteCount > 0 && curCount*2 < lastCompleteCount
}

// checkListing reports why l cannot make a valid event in crawl c.
func checkListing(l events.Listing, c Crawl) error {
	if got, want := strings.Join(strings.Fields(l.Source), " "), strings.Join(strings.Fields(c.Source), " "); got != want {
		return fmt.Errorf("listing of source %q in a crawl of %q", got, want)
	}
	return events.Opened(l, c.ID, c.At).Validate()
}

// teeTimePassed reports whether l's tee time is at or before at. A listing whose tee time cannot be
// read (only a hand-edited snapshot has one) counts as not passed, so it closes as booked.
func teeTimePassed(l events.Listing, at time.Time, loc *time.Location) bool {
	t, err := time.ParseInLocation(events.DateLayout+" "+events.TimeLayout, l.PlayDate+" "+l.TeeTime, loc)
	return err == nil && !t.After(at)
}

func typeOrder(t events.Type) int {
	switch t {
	case events.ListingOpened:
		return 0
	case events.ListingChanged:
		return 1
	default:
		return 2
	}
}

func equalInt64(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
func equalInt(a, b *int) bool     { return (a == nil) == (b == nil) && (a == nil || *a == *b) }
