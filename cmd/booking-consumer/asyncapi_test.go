package main

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/schema"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// asyncAPIDoc is events/schema/asyncapi.yaml as JSON values (numbers as json.Number).
func asyncAPIDoc(t *testing.T) map[string]any {
	t.Helper()
	b, err := schema.FS.ReadFile(schema.AsyncAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	return testkit.YAMLDoc(t, b).(map[string]any)
}

// at follows a JSON pointer ("/a/b", "" for the root) in v.
func at(t *testing.T, v any, ptr string) any {
	t.Helper()
	if ptr == "" {
		return v
	}
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				t.Fatalf("pointer %s: no %q", ptr, tok)
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				t.Fatalf("pointer %s: no element %q", ptr, tok)
			}
			v = x[i]
		default:
			t.Fatalf("pointer %s: %q inside a %T", ptr, tok, v)
		}
	}
	return v
}

func str(t *testing.T, v any, ptr string) string {
	t.Helper()
	s, ok := at(t, v, ptr).(string)
	if !ok {
		t.Fatalf("%s is %T, want a string", ptr, at(t, v, ptr))
	}
	return s
}

// refs collects every $ref in v.
func refs(v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		if r, ok := x["$ref"].(string); ok {
			*out = append(*out, r)
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			refs(x[k], out)
		}
	case []any:
		for _, e := range x {
			refs(e, out)
		}
	}
}

// TestAsyncAPIDocument: events/schema/asyncapi.yaml is a valid AsyncAPI 3.0 document (the
// vendored AsyncAPI JSON Schema, testdata/asyncapi), every $ref in it resolves (to the document
// or to a schema file of events/schema), and it says what the code does: the channel is
// kafkabus.DefaultTopic with booking-consumer's partitions, one message per event type whose
// payload is that type's schema, the key is listing_key (kafkabus.Message's key), the headers are
// exactly kafkabus.Headers' with events' ce_type and ce_specversion.
func TestAsyncAPIDocument(t *testing.T) {
	doc := asyncAPIDoc(t)

	sch := testkit.JSONSchema(t, filepath.Join("testdata", "asyncapi", "asyncapi-3.0.0.schema.json"), "asyncapi-3.0.0.json")
	if err := sch.Validate(doc); err != nil {
		t.Fatalf("asyncapi.yaml is not a valid AsyncAPI 3.0.0 document: %v", err)
	}

	var all []string
	refs(doc, &all)
	for _, r := range all {
		file, ptr, _ := strings.Cut(r, "#")
		if file == "" {
			at(t, doc, ptr)
			continue
		}
		d, err := schema.Document(strings.TrimSuffix(strings.TrimPrefix(file, "./"), ".json"))
		if err != nil || !strings.HasPrefix(file, "./") {
			t.Errorf("$ref %s: not a schema file of events/schema (%v)", r, err)
			continue
		}
		at(t, d, ptr)
	}

	if got := str(t, doc, "/channels/bookingEvents/address"); got != kafkabus.DefaultTopic {
		t.Errorf("channel address %q, want kafkabus.DefaultTopic %q", got, kafkabus.DefaultTopic)
	}
	if got := str(t, doc, "/channels/bookingEvents/bindings/kafka/topic"); got != kafkabus.DefaultTopic {
		t.Errorf("channel binding topic %q, want %q", got, kafkabus.DefaultTopic)
	}
	if got := fmt.Sprint(at(t, doc, "/channels/bookingEvents/bindings/kafka/partitions")); got != strconv.Itoa(defaultPartitions) {
		t.Errorf("channel partitions %s, want booking-consumer's --create-partitions default %d", got, defaultPartitions)
	}

	msgs := at(t, doc, "/components/messages").(map[string]any)
	var names []string
	for _, key := range slices.Sorted(maps.Keys(msgs)) {
		m := "/components/messages/" + key
		name := events.Type(str(t, doc, m+"/name"))
		names = append(names, string(name))
		if got, want := str(t, doc, m+"/payload/$ref"), "./"+string(name)+".json"; got != want {
			t.Errorf("%s payload %s, want %s", key, got, want)
		}
		if got, want := str(t, doc, m+"/bindings/kafka/key/allOf/0/$ref"), "./"+string(name)+".json#/properties/listing_key"; got != want {
			t.Errorf("%s key %s, want the listing_key of its schema %s", key, got, want)
		}
		if got := str(t, doc, m+"/contentType"); got != events.ContentType {
			t.Errorf("%s contentType %q, want %q", key, got, events.ContentType)
		}
		if str(t, doc, "/channels/bookingEvents/messages/"+key+"/$ref") != "#"+m {
			t.Errorf("channel message %s does not refer to %s", key, m)
		}
	}
	slices.Sort(names)
	if want := slices.Sorted(slices.Values(schema.Types)); !slices.Equal(names, want) {
		t.Errorf("messages for %v, want one per event type %v", names, want)
	}
	if n := len(at(t, doc, "/operations/publishBookingEvents/messages").([]any)); n != len(schema.Types) {
		t.Errorf("the operation sends %d messages, want %d", n, len(schema.Types))
	}

	headers := at(t, doc, "/components/schemas/headers/properties").(map[string]any)
	var types []any
	when := time.Date(2026, 12, 1, 6, 30, 0, 0, time.UTC)
	for _, e := range []events.Event{
		events.Opened(events.Listing{Source: "s", CourseName: "c", RoundDate: "r", PlayDate: "2026-12-05", TeeTime: "07:00"}, "x", when),
		events.Changed(events.Listing{}, events.Listing{Source: "s", CourseName: "c", RoundDate: "r", PlayDate: "2026-12-05", TeeTime: "07:00"}, "x", when),
		events.Closed(events.Listing{Source: "s", CourseName: "c", RoundDate: "r", PlayDate: "2026-12-05", TeeTime: "07:00"}, "x", when, events.Booked),
	} {
		km, err := kafkabus.Message(e)
		if err != nil {
			t.Fatal(err)
		}
		if string(km.Key) != e.ListingKey {
			t.Errorf("kafkabus.Message key %q, want listing_key %q", km.Key, e.ListingKey)
		}
		var hk []string
		for _, h := range km.Headers {
			hk = append(hk, h.Key)
		}
		slices.Sort(hk)
		if want := slices.Sorted(maps.Keys(headers)); !slices.Equal(hk, want) {
			t.Errorf("kafkabus.Headers %v, the document's headers %v", hk, want)
		}
		types = append(types, events.CloudEventType(e.EventType))
	}
	if got := headers["ce_type"].(map[string]any)["enum"]; fmt.Sprint(got) != fmt.Sprint(types) {
		t.Errorf("ce_type enum %v, want %v", got, types)
	}
	if got := headers["ce_specversion"].(map[string]any)["const"]; got != events.CloudEventsSpecVersion {
		t.Errorf("ce_specversion %v, want %s", got, events.CloudEventsSpecVersion)
	}
}
