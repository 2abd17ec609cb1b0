package events

// The event constructors: the one place where a Listing's fields are copied into an Event (build)
// and into its Previous (Changed). A Listing's Values and Attributes are copied whole; a new field
// beside them is set in build (TestBuildCopiesEveryListingField fails until it is). The ids
// they stamp are in identity.go: the crawler's constructors (OpenedSeq, ChangedSeq, ClosedSeq)
// stamp a TransitionID, the crawl-scoped ones (Opened, Changed, Closed) a NewID.

import "time"

// OpenedSeq builds the listing_opened event of lifetime s.Lifetime of l, observed by crawl crawlID
// (informational) at observedAt, with its TransitionID.
func OpenedSeq(l Listing, s Seq, crawlID string, observedAt time.Time) Event {
	return withID(Opened(l, crawlID, observedAt), s)
}

// ChangedSeq builds change s.Change of l's lifetime s.Lifetime (l the new values, prev the old
// ones), with its TransitionID.
func ChangedSeq(prev, l Listing, s Seq, crawlID string, observedAt time.Time) Event {
	return withID(Changed(prev, l, crawlID, observedAt), s)
}

// ClosedSeq builds the listing_closed event that ends lifetime s.Lifetime of l (its last seen
// values), with its TransitionID.
func ClosedSeq(l Listing, s Seq, crawlID string, observedAt time.Time, reason CloseReason) Event {
	return withID(Closed(l, crawlID, observedAt, reason), s)
}

func withID(e Event, s Seq) Event {
	e.EventID = TransitionID(e.ListingKey, e.EventType, s, e.PriceKRW, e.Players)
	return e
}

// Opened builds the listing_opened event for l, observed by crawl crawlID at observedAt, with a
// NewID over the crawl (for tests and tools; the crawler uses OpenedSeq).
func Opened(l Listing, crawlID string, observedAt time.Time) Event {
	return build(l, ListingOpened, crawlID, observedAt)
}

// Changed builds the listing_changed event for l (the new values), with prev the old ones and a
// NewID over the crawl (for tests and tools; the crawler uses ChangedSeq).
func Changed(prev, l Listing, crawlID string, observedAt time.Time) Event {
	e := build(l, ListingChanged, crawlID, observedAt)
	e.Previous = &prev.Values
	return e
}

// Closed builds the listing_closed event for l (its last seen values) with the given reason and a
// NewID over the crawl (for tests and tools; the crawler uses ClosedSeq).
func Closed(l Listing, crawlID string, observedAt time.Time, reason CloseReason) Event {
	e := build(l, ListingClosed, crawlID, observedAt)
	e.CloseReason = reason
	return e
}

func build(l Listing, t Type, crawlID string, observedAt time.Time) Event {
	key := l.Key()
	return Event{
		EventID:       NewID(key, t, crawlID, l.PriceKRW, l.Players),
		EventType:     t,
		SchemaVersion: SchemaVersion,
		OccurredAt:    observedAt.Truncate(time.Microsecond), // what Encode writes: the event equals its decoding
		CrawlID:       crawlID,
		Source:        norm(l.Source),
		ListingKey:    key,
		CourseName:    norm(l.CourseName),
		CoursePart:    norm(l.CoursePart),
		RoundDate:     l.RoundDate,
		PlayDate:      l.PlayDate,
		TeeTime:       l.TeeTime,
		Values:        l.Values,
		Attributes:    l.Attributes,
	}
}
