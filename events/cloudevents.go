package events

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
)

// CloudEvents' Kafka protocol binding in binary mode: the event is the message value, unchanged,
// and its CloudEvents attributes travel as ce_-prefixed headers, so CloudEvents SDKs and tools
// (Knative, Kafka Connect transforms) read booking events without code of ours. The attributes are
// derived from the event alone; events/kafkabus writes them (CloudEventHeaders) and the consumer
// checks them (CheckCloudEvents). See docs/consuming-events.md.
const (
	// CloudEventsSpecVersion is the only ce_specversion written and accepted.
	CloudEventsSpecVersion = "1.0"
	// CloudEventsHeaderPrefix starts every CloudEvents attribute header.
	CloudEventsHeaderPrefix = "ce_"
	// ContentTypeHeader and ContentType say what the value is (the binding maps datacontenttype
	// to the plain content-type header, without the prefix).
	ContentTypeHeader = "content-type"
	ContentType       = "application/json"
)

// The ce_ headers the crawler writes.
const (
	HeaderCESpecVersion = CloudEventsHeaderPrefix + "specversion"
	HeaderCEID          = CloudEventsHeaderPrefix + "id"
	HeaderCESource      = CloudEventsHeaderPrefix + "source"
	HeaderCEType        = CloudEventsHeaderPrefix + "type"
	HeaderCETime        = CloudEventsHeaderPrefix + "time"
	HeaderCESubject     = CloudEventsHeaderPrefix + "subject"
)

// ErrCloudEvents is what a message with CloudEvents headers that disagree with its body (id, type
// or time, ErrCEMismatch) or without ce_specversion 1.0 (ErrCESpecVersion) wraps: the headers lie
// about the event or speak a version we do not, so it is malformed (dead-lettered), whatever the
// body says.
var (
	ErrCloudEvents   = fmt.Errorf("%w: CloudEvents header", ErrMalformed)
	ErrCEMismatch    = fmt.Errorf("%w disagrees with the body", ErrCloudEvents)
	ErrCESpecVersion = fmt.Errorf("%w: unknown or missing ce_specversion", ErrCloudEvents)
)

// CloudEventType is the ce_type of an event type in this schema version:
// com.github.golfcrawler.<event_type>.v<schema_version>.
func CloudEventType(t Type) string {
	if s, ok := ceTypes[t]; ok {
		return s
	}
	return ceType(t)
}

func ceType(t Type) string { return fmt.Sprintf("com.github.golfcrawler.%s.v%d", t, SchemaVersion) }

// ceTypes are the known types' ce_type, so that checking one allocates nothing.
var ceTypes = map[Type]string{
	ListingOpened: ceType(ListingOpened), ListingChanged: ceType(ListingChanged), ListingClosed: ceType(ListingClosed),
}

// CloudEventSource is the ce_source of events crawled from source (a site name):
// /golf-crawler/<source>, the name path-escaped so that the attribute stays a URI reference.
func CloudEventSource(source string) string {
	return "/golf-crawler/" + url.PathEscape(source)
}

// Header is one Kafka header as package events sees it (events links no Kafka client). Value is
// the raw bytes, as received.
type Header struct {
	Key   string
	Value []byte
}

// CloudEventHeaders are e's CloudEvents binary-mode headers, in this order: ce_specversion,
// ce_id (event_id), ce_source, ce_type, ce_time (occurred_at, spelled as the body spells it),
// ce_subject (listing_key) and content-type.
func CloudEventHeaders(e Event) []Header {
	return []Header{
		{HeaderCESpecVersion, []byte(CloudEventsSpecVersion)},
		{HeaderCEID, []byte(e.EventID.String())},
		{HeaderCESource, []byte(CloudEventSource(e.Source))},
		{HeaderCEType, []byte(CloudEventType(e.EventType))},
		{HeaderCETime, []byte(FormatTime(e.OccurredAt))},
		{HeaderCESubject, []byte(e.ListingKey)},
		{ContentTypeHeader, []byte(ContentType)},
	}
}

// CheckCloudEvents checks the CloudEvents headers among hs against e, the message's decoded body.
// A message without ce_ headers passes (CloudEvents is optional for producers); with any, it needs
// ce_specversion 1.0, and a ce_id, ce_type or ce_time present must agree with event_id,
// CloudEventType(event_type) and occurred_at (the same instant, in any RFC 3339 spelling). The
// error is a *FieldError of kind ErrCEMismatch or ErrCESpecVersion naming the header. Other headers are ignored.
func CheckCloudEvents(hs []Header, e Event) error {
	ce, spec := false, false
	for _, h := range hs {
		if !strings.HasPrefix(h.Key, CloudEventsHeaderPrefix) {
			continue
		}
		ce = true
		ok := true
		switch h.Key {
		case HeaderCESpecVersion:
			spec, ok = true, string(h.Value) == CloudEventsSpecVersion
		case HeaderCEID:
			id, err := uuid.ParseBytes(h.Value)
			ok = err == nil && id == e.EventID
		case HeaderCEType:
			ok = string(h.Value) == CloudEventType(e.EventType)
		case HeaderCETime:
			t, err := time.Parse(time.RFC3339Nano, string(h.Value))
			ok = err == nil && t.Equal(e.OccurredAt)
		}
		switch {
		case !ok && h.Key == HeaderCESpecVersion:
			return &FieldError{Field: h.Key, Kind: ErrCESpecVersion, Value: clip(h.Value)}
		case !ok:
			return &FieldError{Field: h.Key, Kind: ErrCEMismatch, Value: clip(h.Value)}
		}
	}
	if ce && !spec {
		return &FieldError{Field: HeaderCESpecVersion, Kind: ErrCESpecVersion}
	}
	return nil
}

// clip keeps a header value quoted in an error short (a header may be kilobytes).
func clip(b []byte) string {
	const max = 100
	if len(b) <= max {
		return string(b)
	}
	return string(b[:max]) + "..."
}
