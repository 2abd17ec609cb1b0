package crawler

import (
	"context"
	"slices"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

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

	// SpoolBatch is the id of the last spool batch whose transitions this snapshot records (0:
	// none): at start-up a batch the crash left without its commit is kept when its id is at most
	// this, dropped otherwise (see package events/spool). The runner keeps it; Diff does not.
	SpoolBatch uint64 `json:"spool_batch,omitempty"`
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

// Openings are the listing_opened events of the listings open in s and not being missed, by
// listing key: each with the id of its current lifetime's opening, its last seen values, crawl
// CrawlID and its first-seen time as occurred_at. They answer a watch that asks what is open now.
func (s Snapshot) Openings() []events.Event {
	keys := make([]string, 0, len(s.Listings))
	for k, e := range s.Listings {
		if e.Open() && e.Misses == 0 && e.Suspect == 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := make([]events.Event, len(keys))
	for i, k := range keys {
		e := s.Listings[k]
		out[i] = events.OpenedSeq(e.Listing, e.seq(s.Epoch), s.CrawlID, e.FirstSeen)
	}
	return out
}

// OpenListings are the Openings as the alert service asks what is open now on a source
// (alerts.Listings; the crawler-side alerts answer a watch that asks anew from the snapshot about
// to be saved): the source is the snapshot's own.
func (s Snapshot) OpenListings(context.Context, string) ([]*events.Event, error) {
	return eventRefs(s.Openings()), nil
}

// eventRefs are pointers to the events of evs, in order.
func eventRefs(evs []events.Event) []*events.Event {
	out := make([]*events.Event, len(evs))
	for i := range evs {
		out[i] = &evs[i]
	}
	return out
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
