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

// The three event types. Each one's comment opens its JSON Schema's description.
const (
	// A tee time appeared on its site (or reappeared after a close: a new lifetime of the listing).
	ListingOpened Type = "listing_opened"
	// A listed tee time's price or players changed; previous holds the old values.
	ListingChanged Type = "listing_changed"
	// A listed tee time left its site (booked) or its tee time passed (expired); the fields are its
	// last seen values.
	ListingClosed Type = "listing_closed"
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
// one field here (and its range in Validate); an attribute that does not (a round's holes) is one
// in Attributes. CONTRIBUTING's "Add an event field" says which to choose.
//
// Each field's comment is its description in the JSON Schemas (events/schema, generated from
// these structs: see Event), qualified there as "the new value" in a listing_changed and "the last
// seen" in a listing_closed; its previous tag is its description inside previous.
type Values struct {
	// Green fee per player in Korean won; null when the site shows none ("전화문의", "마감", ...).
	PriceKRW *int64 `json:"price_krw" previous:"The price before the change; null when there was none."`
	// Players the tee time takes; null when the site shows none.
	Players *int `json:"players" previous:"The players before the change; null when there were none."`
}

// Attributes are what a crawl observes of a listing that does not change while it stays listed
// (a round's holes, a course's region): a different one is no listing_changed, so it is in no
// previous, and the events carry the latest from the listing's next event on. Listing and Event
// embed them as they embed Values, and build copies them whole, so a new attribute is one field
// here (optional: omitempty, CONTRIBUTING's compatibility rules; its comment is its description in
// the JSON Schemas). There is none yet; the wire format is the same flat object.
type Attributes struct{}

// Previous holds a changed listing's values before the change.
type Previous = Values

// Differ reports whether w differs from v in any value, a null and a number being different: a
// listing seen with w after v is a listing_changed. A new field of Values is compared here too
// (TestDifferComparesEveryValue fails until it is).
func (v Values) Differ(w Values) bool {
	return !equalPtr(v.PriceKRW, w.PriceKRW) || !equalPtr(v.Players, w.Players)
}

func equalPtr[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// Event is one booking event, version 1 of the contract (docs/contract.md).
//
// The JSON Schemas of events/schema are generated from this struct (go test ./events -run
// TestSchemaFilesAreGenerated with UPDATE_GOLDENS=1 writes them; without it the test fails when
// a committed file differs). Each field's comment is its description; its JSON type and null come
// from the Go type; which fields a type requires, which may be null, the minimum and maximum of an
// integer and the byte bound of a text (events/bounds.go) are read from Decode and Validate
// themselves. The schema tag says only what they cannot: pattern=date or pattern=time for a text
// of DateLayout or TimeLayout, enum=a|b for the values of a field that is not a range (Validate
// must reject every other: the test checks), only=<type> for a field one event type alone has.
type Event struct {
	// Deterministic (name-based, version 5) UUID of this transition, never of the crawl: over
	// listing_key, the crawler state's epoch, the listing's lifetime (its openings counted),
	// event_type and, for a change, its number within the lifetime and the new price_krw and
	// players. Redelivery, replay and a crawl that re-derives the transition (after a failed
	// snapshot save, a crash) repeat it, so it is the deduplication key; a price going 100 → 90 →
	// 100 → 90 is four ids, and a reopen is a new lifetime, never a duplicate. The crawler writes
	// the canonical lower-case form; Decode also reads the upper-case, braced, urn:uuid: and
	// undashed forms.
	EventID uuid.UUID `json:"event_id"`
	// The transition: listing_opened, listing_changed or listing_closed.
	EventType Type `json:"event_type"`
	// Version of this contract; a breaking change is a new version (CONTRIBUTING.md).
	SchemaVersion int `json:"schema_version"`
	// When the crawl observed the transition (for a close, the first complete crawl that missed
	// the listing): RFC 3339 (the crawler writes +09:00 with six fractional digits, microseconds,
	// PostgreSQL's precision, e.g. 2026-11-29T10:10:00.000000+09:00), any offset and any precision
	// of seconds: a consumer must not rely on the crawler's spelling. Decode also reads the looser
	// spellings Go's time parser takes (a one-digit hour, ',' before the fraction, an offset hour
	// up to 99), so the schemas' pattern admits them too.
	OccurredAt time.Time `json:"occurred_at"`
	// The crawl that observed it, "<source>@<crawl start, RFC 3339 at +09:00 with microseconds>":
	// informational, not part of event_id.
	CrawlID string `json:"crawl_id"`
	// The site, a name of the crawler's sites file (white space folded).
	Source string `json:"source"`
	// Stable identity of the tee time and the Kafka message key: source, course_name, course_part,
	// play_date and tee_time joined by '|', each part trimmed with inner white space folded to one
	// space, '\' written '\\' and '|' written '\|' inside a part, so two listings never share a
	// key.
	ListingKey string `json:"listing_key"`
	// The course (white space folded).
	CourseName string `json:"course_name"`
	// The course's part (e.g. OUT, IN); empty when the site has none. Null reads as empty.
	CoursePart string `json:"course_part"`
	// The site's own spelling of the play date, e.g. "12/05(토)": informational.
	RoundDate string `json:"round_date"`
	// The local date of play at the course (Korea, Asia/Seoul), YYYY-MM-DD: round_date with the
	// year inferred.
	PlayDate string `json:"play_date" schema:"pattern=date"`
	// The local tee time at the course (Asia/Seoul), HH:MM, 24 hours.
	TeeTime string `json:"tee_time" schema:"pattern=time"`
	Values
	Attributes
	// Why the listing closed: expired when its tee time had passed at the first complete crawl that
	// missed it, else booked.
	CloseReason CloseReason `json:"close_reason,omitempty" schema:"only=listing_closed,enum=booked|expired"`
	// The values before the change.
	Previous *Previous `json:"previous,omitempty" schema:"only=listing_changed"`
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
	Attributes
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
