package events

import (
	"strconv"
	"strings"
	"time"

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
	return strings.Join([]string{
		escapeKeyPart(norm(source)), escapeKeyPart(norm(course)), escapeKeyPart(norm(part)),
		escapeKeyPart(playDate), escapeKeyPart(teeTime),
	}, "|")
}

// keyEscaper escapes the separator and the escape character of a listing key part.
var keyEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`)

func escapeKeyPart(s string) string {
	if !strings.ContainsAny(s, `\|`) {
		return s
	}
	return keyEscaper.Replace(s)
}

func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// NewID derives an event id from the business meaning of the transition: the listing, the event
// type, the crawl that observed it and, for a change, the new values. The same transition always
// gets the same id (a retried publish or a replay is recognised as a duplicate downstream); two
// different transitions never share one.
func NewID(listingKey string, t Type, crawlID string, price *int64, players *int) uuid.UUID {
	var b strings.Builder
	b.WriteString(listingKey)
	b.WriteByte(0)
	b.WriteString(string(t))
	b.WriteByte(0)
	b.WriteString(crawlID)
	if t == ListingChanged {
		b.WriteByte(0)
		b.WriteString(optInt(price))
		b.WriteByte(0)
		if players != nil {
			b.WriteString(strconv.Itoa(*players))
		} else {
			b.WriteString("null")
		}
	}
	return uuid.NewSHA1(namespace, []byte(b.String()))
}

func optInt(p *int64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatInt(*p, 10)
}

// Opened builds the listing_opened event for l, observed by crawl crawlID at observedAt.
func Opened(l Listing, crawlID string, observedAt time.Time) Event {
	return build(l, ListingOpened, crawlID, observedAt)
}

// Changed builds the listing_changed event for l (the new values), with prev the old ones.
func Changed(prev, l Listing, crawlID string, observedAt time.Time) Event {
	e := build(l, ListingChanged, crawlID, observedAt)
	e.Previous = &Previous{PriceKRW: prev.PriceKRW, Players: prev.Players}
	return e
}

// Closed builds the listing_closed event for l (its last seen values) with the given reason.
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
		OccurredAt:    observedAt,
		CrawlID:       crawlID,
		Source:        norm(l.Source),
		ListingKey:    key,
		CourseName:    norm(l.CourseName),
		CoursePart:    norm(l.CoursePart),
		RoundDate:     l.RoundDate,
		PlayDate:      l.PlayDate,
		TeeTime:       l.TeeTime,
		PriceKRW:      l.PriceKRW,
		Players:       l.Players,
	}
}
