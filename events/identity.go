package events

import (
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// namespace is the UUIDv5 namespace of booking event ids. Changing it changes every id: never do.
var namespace = uuid.MustParse("6f1c3b8e-2d0a-5e47-9b61-4a8f0c2d7e15")

// ListingKey is the stable identity of one tee time on one site: source, course, course part, play
// date and tee time, joined by '|' after trimming and folding inner white space, so that cosmetic
// changes in the page's markup do not make a new listing. Inside each part, '\' is written '\\'
// and '|' is written '\|', so the key is injective: ("Lake|OUT", "") and ("Lake", "OUT|") are
// different listings with different keys. A part without either character is unchanged.
func ListingKey(source, course, part, playDate, teeTime string) string {
	return string(appendListingKey(nil, source, course, part, playDate, teeTime))
}

// appendListingKey appends ListingKey's key to b: the one definition of the key, which Validate
// also compares against without allocating (a stack buffer), since it runs for every consumed event.
func appendListingKey(b []byte, source, course, part, playDate, teeTime string) []byte {
	b = appendNormEscaped(b, source)
	b = append(b, '|')
	b = appendNormEscaped(b, course)
	b = append(b, '|')
	b = appendNormEscaped(b, part)
	b = append(b, '|')
	b = appendEscaped(b, playDate)
	b = append(b, '|')
	return appendEscaped(b, teeTime)
}

// appendNormEscaped appends escapeKeyPart(norm(s)): the fields of s joined by one space, each
// escaped (escaping is per character, and the space is not escaped, so the order does not matter).
func appendNormEscaped(b []byte, s string) []byte {
	first := true
	for f := range strings.FieldsSeq(s) {
		if !first {
			b = append(b, ' ')
		}
		first = false
		b = appendEscaped(b, f)
	}
	return b
}

// appendEscaped appends escapeKeyPart(s): '\' as '\\' and '|' as '\|'.
func appendEscaped(b []byte, s string) []byte {
	for {
		i := strings.IndexAny(s, `\|`)
		if i < 0 {
			return append(b, s...)
		}
		b = append(append(b, s[:i]...), '\\', s[i])
		s = s[i+1:]
	}
}

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// Seq says which transition of a listing an event is, independently of the crawl that observes
// it: Lifetime counts the listing's openings (1 for the first; a reopen after a close is 2, ...),
// Change counts its changes within that lifetime (1 for the first; 0 for an open or a close), and
// Epoch names the crawler state the counters live in (the crawler starts a new epoch when its
// snapshot is lost or reset, so counters that restart never reuse an id of an earlier epoch).
type Seq struct {
	Epoch    string
	Lifetime int
	Change   int
}

// TransitionID derives an event id from the transition itself: the listing, its epoch and
// lifetime, the event type and, for a change, its number within the lifetime and the new values.
// It does not depend on the crawl that observes the transition, so a crawl that re-derives it from
// the same snapshot (a failed snapshot save, a crash between publish and save) gives it the same
// id, and the consumer drops it as a duplicate; a price going 100 → 90 → 100 → 90 is four changes
// with four ids, and a reopened listing's events (next lifetime) never reuse the last lifetime's.
// The close of a lifetime has one id whatever its reason: a lifetime closes once.
func TransitionID(listingKey string, t Type, s Seq, price *int64, players *int) uuid.UUID {
	parts := []string{"transition/v2", listingKey, s.Epoch, strconv.Itoa(s.Lifetime), string(t)}
	if t == ListingChanged {
		parts = append(parts, strconv.Itoa(s.Change), optInt(price), optPlayers(players))
	}
	return nameID(parts)
}

// NewID is the id scheme of Opened, Changed and Closed: the listing, the event type, the crawl that
// observed it and, for a change, the new values. The same (key, type, crawl, values) always gets
// the same id, but a transition re-derived by another crawl gets another one: the crawler uses
// TransitionID (through OpenedSeq, ChangedSeq and ClosedSeq); this remains for tests and tools
// that build single events without a crawler state.
func NewID(listingKey string, t Type, crawlID string, price *int64, players *int) uuid.UUID {
	parts := []string{listingKey, string(t), crawlID}
	if t == ListingChanged {
		parts = append(parts, optInt(price), optPlayers(players))
	}
	return nameID(parts)
}

// nameID is the name-based (SHA-1) UUID of parts joined by NUL bytes.
func nameID(parts []string) uuid.UUID {
	return uuid.NewSHA1(namespace, []byte(strings.Join(parts, "\x00")))
}

func optInt(p *int64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatInt(*p, 10)
}

func optPlayers(p *int) string {
	if p == nil {
		return "null"
	}
	return strconv.Itoa(*p)
}
