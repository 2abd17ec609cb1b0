package crawler

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
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
	// Fetched, optional, makes the crawl partial by design (#51): it fetched only some page sets
	// (the watched ones due), and Fetched reports the listings they cover. A missing listing it
	// does not cover is kept, as a withheld one; the crawl is neither the collapse guard's
	// reference (LastCompleteSeen) nor one of its collapse crawls: a partial crawl with Collapsed
	// counts as incomplete. Complete for what it fetched, it ends the count of incomplete
	// crawls. nil: every page set was fetched.
	Fetched func(events.Listing) bool
}

// withheld reports whether the crawl closes nothing of l: l's page set failed (Withheld) or was
// not fetched (Fetched).
func (c Crawl) withheld(l events.Listing) bool {
	return c.Withheld != nil && c.Withheld(l) || c.Fetched != nil && !c.Fetched(l)
}

// DiffOptions tunes Diff. The zero value means MissesToClose DefaultMissesToClose, CollapseCrawls
// DefaultCollapseCrawls and Location Seoul().
type DiffOptions struct {
	MissesToClose  int
	CollapseCrawls int
	Location       *time.Location
	// MissesMinInterval, when positive, makes misses count at most once per this long: a
	// listing's n-th miss counts only at least (n-1)×MissesMinInterval after its first
	// (MissedAt), so that frequent crawls (a burst) never close a listing faster than crawls that
	// far apart would. 0: every complete crawl's miss counts.
	MissesMinInterval time.Duration
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
	d := newDiffer(prev, c, opt.withDefaults(), len(cur))
	for _, l := range cur {
		d.see(l)
	}
	d.settleCompleteness(len(cur))
	for key, e := range prev.Listings {
		if !d.seen[key] {
			d.miss(key, e)
		}
	}
	return d.finish()
}

// withDefaults fills in the zero fields of opt (see DiffOptions).
func (opt DiffOptions) withDefaults() DiffOptions {
	if opt.MissesToClose <= 0 {
		opt.MissesToClose = DefaultMissesToClose
	}
	if opt.Location == nil {
		opt.Location = site.Seoul()
	}
	if opt.CollapseCrawls <= 0 {
		opt.CollapseCrawls = DefaultCollapseCrawls
	}
	return opt
}

// differ is one Diff in progress: the inputs, the snapshot update (next), the events and counts
// so far, and what the steps share. Diff runs its steps in order: see every listing of the crawl
// (open, change), settle whether the crawl counts as complete, miss every listing of prev it did
// not see, finish.
type differ struct {
	prev Snapshot
	c    Crawl
	opt  DiffOptions

	next  Snapshot
	out   []events.Event
	stats DiffStats

	seen map[string]bool // keys of cur taken (valid, or invalid but open)
	dups map[string]bool // keys of cur seen more than once
	// sameListings stays true while every listing of this crawl was open and seen by the previous
	// crawl: the condition for a collapse to continue the previous one.
	sameListings bool
	// complete is whether the crawl counts as complete for misses (settleCompleteness).
	complete bool
}

// newDiffer starts the snapshot update: next has c's header and prev's epoch; a prev without one
// starts a new epoch (see Snapshot).
func newDiffer(prev Snapshot, c Crawl, opt DiffOptions, listings int) *differ {
	if c.Fetched != nil && c.Collapsed { // a partial crawl is never a collapse crawl
		c.Complete, c.Collapsed = false, false
	}
	next := Snapshot{Source: c.Source, CrawlID: c.ID, At: c.At, Epoch: prev.Epoch, Listings: make(map[string]SnapshotEntry, listings)}
	switch {
	case next.Epoch != "":
	case prev.CrawlID != "":
		next.Epoch = prev.CrawlID // a snapshot from before epochs: stable for every re-derivation from it
	default:
		next.Epoch = c.ID // a new state: a new epoch
	}
	return &differ{
		prev: prev, c: c, opt: opt, next: next,
		stats:        DiffStats{Reasons: map[events.CloseReason]int{}},
		seen:         make(map[string]bool, listings),
		dups:         map[string]bool{},
		sameListings: prev.Collapses > 0,
	}
}

// see takes one listing of the crawl: a repeated key is a duplicate, an invalid listing is
// dropped (an open entry of its key kept as if seen), a listing still open changes or not, a new
// one (or one with a tombstone) opens unless its tee time has passed.
func (d *differ) see(l events.Listing) {
	key := l.Key()
	if d.seen[key] {
		d.stats.Duplicates++
		d.dups[key] = true
		return
	}
	old, ok := d.prev.Listings[key]
	live := ok && old.Open()
	if err := checkListing(l, d.c); err != nil {
		d.stats.Invalid = append(d.stats.Invalid, InvalidListing{Listing: l, Err: err})
		if live {
			d.seen[key] = true
			old.Misses, old.MissedAt, old.Suspect, old.SuspectSince = 0, time.Time{}, 0, time.Time{}
			d.next.Listings[key] = old
		}
		return
	}
	d.seen[key] = true
	d.stats.Seen++
	if !live || old.Suspect > 0 {
		d.sameListings = false
	}
	switch {
	case live:
		d.change(key, l, old)
	case teeTimePassed(l, d.c.At, d.opt.Location):
		d.stats.Past++ // nothing can book it any more: opening it would only expire it again
	default:
		d.open(key, l, old, ok)
	}
}

// open starts a lifetime of l: the first, or after tomb (reopen) the next one.
func (d *differ) open(key string, l events.Listing, tomb SnapshotEntry, reopen bool) {
	e := SnapshotEntry{Listing: l, FirstSeen: d.c.At, Lifetime: 1}
	if reopen {
		e.Lifetime = max(tomb.Lifetime, 1) + 1
	}
	d.out = append(d.out, events.OpenedSeq(l, e.seq(d.next.Epoch), d.c.ID, d.c.At))
	d.stats.Opened++
	d.next.Listings[key] = e
}

// change takes l, seen again while open (old): a listing_changed when its Values differ, and in any
// case the new values, with the misses reset. Any other difference (round_date text, URL) only
// updates the snapshot.
func (d *differ) change(key string, l events.Listing, old SnapshotEntry) {
	e := SnapshotEntry{Listing: l, FirstSeen: old.FirstSeen, Lifetime: max(old.Lifetime, 1), Changes: old.Changes}
	if old.Listing.Differ(l.Values) {
		e.Changes++
		d.out = append(d.out, events.ChangedSeq(old.Listing, l, e.seq(d.next.Epoch), d.c.ID, d.c.At))
		d.stats.Changed++
	}
	d.next.Listings[key] = e
}

// settleCompleteness decides whether the crawl counts as complete for misses (a collapse counts
// only once believed) and records the collapse so far and the last complete crawl in next.
func (d *differ) settleCompleteness(listings int) {
	prev, c, next := d.prev, d.c, &d.next
	d.complete = c.Complete
	switch {
	case !c.Complete, c.Fetched != nil: // a partial crawl tells nothing of a collapse of the site
		next.Collapses, next.CollapsedSince = prev.Collapses, prev.CollapsedSince
	case c.Collapsed:
		next.Collapses, next.CollapsedSince = 1, c.At
		if d.sameListings {
			next.Collapses, next.CollapsedSince = prev.Collapses+1, prev.CollapsedSince
		}
		d.stats.Collapses = next.Collapses
		d.stats.Believed = next.Collapses >= d.opt.CollapseCrawls
		d.complete = d.stats.Believed
		if d.stats.Believed {
			next.Collapses, next.CollapsedSince = 0, time.Time{}
		}
	}
	next.LastCompleteAt, next.LastCompleteSeen = prev.LastCompleteAt, prev.LastCompleteSeen
	switch {
	case d.complete && c.Withheld == nil && c.Fetched == nil:
		next.LastCompleteAt, next.LastCompleteSeen = c.At, listings
	case d.complete && c.Withheld == nil: // partial by design, complete for what it fetched
	default:
		next.Incomplete = prev.Incomplete + 1
	}
}

// miss takes an entry of prev the crawl did not see: a tombstone stays while a reopen is
// possible; an open listing is held back (a collapsed crawl's suspect miss), kept (an incomplete
// crawl, a withheld page set), counted as missed, or closed (booked or expired).
func (d *differ) miss(key string, e SnapshotEntry) {
	c := d.c
	if !e.Open() {
		// A tombstone is kept while a reopen is possible: until its tee time has passed.
		if !teeTimePassed(e.Listing, c.At, d.opt.Location) {
			d.next.Listings[key] = e
		}
		return
	}
	if c.Complete && c.Collapsed {
		// A collapsed crawl's miss is held back as suspect; a new collapse starts the count over.
		if !d.sameListings || e.Suspect == 0 {
			e.Suspect, e.SuspectSince = 0, c.At
		}
		e.Suspect++
	}
	if !d.complete || c.withheld(e.Listing) {
		d.next.Listings[key] = e
		d.stats.Kept++
		return
	}
	e = countMiss(e, c, d.opt.MissesMinInterval)
	reason := events.Booked
	if teeTimePassed(e.Listing, e.MissedAt, d.opt.Location) {
		reason = events.Expired
	} else if e.Misses < d.opt.MissesToClose {
		d.next.Listings[key] = e
		d.stats.Missed++
		return
	}
	d.closeListing(key, e, reason)
}

// countMiss counts the miss of e by a crawl that counts as complete: after a believed collapse
// each collapsed crawl that missed it is a miss (MissedAt the first of them); otherwise one miss,
// and misses held back by an unbelieved collapse are dropped.
//
// With minInterval positive, the count is capped at one plus the whole minIntervals since the
// first miss (DiffOptions.MissesMinInterval).
func countMiss(e SnapshotEntry, c Crawl, minInterval time.Duration) SnapshotEntry {
	if c.Collapsed && e.Suspect > 0 {
		e.Misses += e.Suspect
		if e.MissedAt.IsZero() {
			e.MissedAt = e.SuspectSince
		}
	} else {
		e.Misses++
		if e.MissedAt.IsZero() {
			e.MissedAt = c.At
		}
	}
	e.Suspect, e.SuspectSince = 0, time.Time{}
	if minInterval > 0 {
		e.Misses = min(e.Misses, 1+int(c.At.Sub(e.MissedAt)/minInterval))
	}
	return e
}

// closeListing ends e's lifetime for reason, observed at e.MissedAt; e stays as a tombstone while its tee
// time is ahead.
func (d *differ) closeListing(key string, e SnapshotEntry, reason events.CloseReason) {
	d.out = append(d.out, events.ClosedSeq(e.Listing, e.seq(d.next.Epoch), d.c.ID, e.MissedAt, reason))
	d.stats.Closed++
	d.stats.Reasons[reason]++
	if !teeTimePassed(e.Listing, d.c.At, d.opt.Location) {
		e.ClosedAt = e.MissedAt
		d.next.Listings[key] = e
	}
}

// finish sorts the events by listing key, then type, and lists the duplicate keys.
func (d *differ) finish() ([]events.Event, Snapshot, DiffStats) {
	slices.SortFunc(d.out, func(a, b events.Event) int {
		return cmp.Or(strings.Compare(a.ListingKey, b.ListingKey), typeOrder(a.EventType)-typeOrder(b.EventType))
	})
	for k := range d.dups {
		d.stats.DuplicateKeys = append(d.stats.DuplicateKeys, k)
	}
	slices.Sort(d.stats.DuplicateKeys)
	return d.out, d.next, d.stats
}

// Collapsed reports whether a crawl found so few listings compared with the last complete crawl
// (fewer than minCompleteRatio of them, a site's min_complete_ratio; half when it is 0; an empty
// page where there were listings) that it may have failed rather than the course sold out: a
// changed page layout, a login wall, an error page served with status 200. Diff then treats the
// crawl as incomplete (Crawl.Collapsed), so that nothing closes on its evidence, until the collapse
// has repeated with the same listings for DiffOptions.CollapseCrawls crawls. There is no minimum:
// a small site's empty page is a collapse too.
func Collapsed(minCompleteRatio float64, lastCompleteCount, curCount int) bool {
	if lastCompleteCount <= 0 {
		return false
	}
	if minCompleteRatio > 0 {
		return float64(curCount) < minCompleteRatio*float64(lastCompleteCount)
	}
	return curCount*2 < lastCompleteCount
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
