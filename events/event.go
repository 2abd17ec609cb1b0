// Package events defines the booking event contract shared by the crawler (producer) and the
// booking-consumer, its strict JSON decoding and validation, the deterministic event ids that make
// redelivery and replay harmless, and the bounds of every field. It imports no Kafka client: the
// publisher, the synchronous writer, topic tools and the group reader live in events/kafkabus.
//
// An event is one transition of one listing (a tee time on one site) observed by one crawl:
// listing_opened, listing_changed (price or players) or listing_closed. Its event_id is a
// name-based UUID over the listing key, the event type and the transition's identity, never random,
// so the same transition always carries the same id.
package events

import (
	"time"

	"github.com/google/uuid"
)

// SchemaVersion is the only schema_version this code reads and writes.
const SchemaVersion = 1

// Type is an event_type.
type Type string

// The three event types.
const (
	ListingOpened  Type = "listing_opened"
	ListingChanged Type = "listing_changed"
	ListingClosed  Type = "listing_closed"
)

// Valid reports whether t is one of the three known types.
func (t Type) Valid() bool {
	return t == ListingOpened || t == ListingChanged || t == ListingClosed
}

// CloseReason says why a listing closed: booked (gone before its tee time) or expired (its tee
// time passed).
type CloseReason string

// The two close reasons.
const (
	Booked  CloseReason = "booked"
	Expired CloseReason = "expired"
)

// DateLayout and TimeLayout are the wire formats of play_date and tee_time.
const (
	DateLayout = "2006-01-02"
	TimeLayout = "15:04"
)

// Values are what a crawl observes of a listing that may change while it stays listed: a change
// of any of them is a listing_changed, and a changed event carries their old values in Previous.
// Listing and Event embed them, so they are declared once, here; encoding/json (and Decode) flatten
// an embedded struct, so the wire format is the same flat object. A new value that can change is
// one field here (and its range in Validate); an attribute that does not (a round's holes) goes
// beside Values in Listing and Event. CONTRIBUTING's "Add an event field" says which to choose.
type Values struct {
	PriceKRW *int64 `json:"price_krw"`
	Players  *int   `json:"players"`
}

// Previous holds a changed listing's values before the change.
type Previous = Values

// Differ reports whether w differs from v in any value, a null and a number being different: a
// listing seen with w after v is a listing_changed. A new field of Values is compared here too
// (TestDifferComparesEveryValue fails until it is).
func (v Values) Differ(w Values) bool {
	return !equalPtr(v.PriceKRW, w.PriceKRW) || !equalPtr(v.Players, w.Players)
}

func equalPtr[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// Event is one booking event, version 1 of the contract. See docs/contract.md for the field meanings.
type Event struct {
	EventID       uuid.UUID `json:"event_id"`
	EventType     Type      `json:"event_type"`
	SchemaVersion int       `json:"schema_version"`
	OccurredAt    time.Time `json:"occurred_at"`
	CrawlID       string    `json:"crawl_id"`
	Source        string    `json:"source"`
	ListingKey    string    `json:"listing_key"`
	CourseName    string    `json:"course_name"`
	CoursePart    string    `json:"course_part"`
	RoundDate     string    `json:"round_date"`
	PlayDate      string    `json:"play_date"`
	TeeTime       string    `json:"tee_time"`
	Values
	CloseReason CloseReason `json:"close_reason,omitempty"`
	Previous    *Previous   `json:"previous,omitempty"`
}

// Listing is what a crawl sees of one tee time: the input of the diff and of event construction.
type Listing struct {
	Source     string `json:"source"`
	CourseName string `json:"course_name"`
	CoursePart string `json:"course_part,omitempty"`
	RoundDate  string `json:"round_date"`
	PlayDate   string `json:"play_date"`
	TeeTime    string `json:"tee_time"`
	Values
	URL string `json:"url,omitempty"`
}

// Key is the listing's stable identity (see ListingKey).
func (l Listing) Key() string {
	return ListingKey(l.Source, l.CourseName, l.CoursePart, l.PlayDate, l.TeeTime)
}

// PlayTime is the listing's tee time as an instant, in loc (Asia/Seoul for Korean sites).
func (e Event) PlayTime(loc *time.Location) (time.Time, error) {
	return time.ParseInLocation(DateLayout+" "+TimeLayout, e.PlayDate+" "+e.TeeTime, loc)
}
