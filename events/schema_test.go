package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/events/schema"
)

// schemaDoc is the schema of event type t as a map.
func schemaDoc(t *testing.T, typ Type) map[string]any {
	t.Helper()
	doc, err := schema.Document(string(typ))
	if err != nil {
		t.Fatal(err)
	}
	return doc.(map[string]any)
}

// typeSample is a valid event of typ, as a JSON object.
func typeSample(t *testing.T, typ Type) map[string]any {
	t.Helper()
	for _, e := range sampleEvents() {
		if e.EventType != typ {
			continue
		}
		b, _ := Encode(e)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	t.Fatalf("no sample of %s", typ)
	return nil
}

func marshal(t *testing.T, m map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSchemaTypesAndEnums: the schemas are exactly one per event type, and the enums of the
// contract's types (event_type, close_reason) are the schemas' values.
func TestSchemaTypesAndEnums(t *testing.T) {
	types := []Type{ListingOpened, ListingChanged, ListingClosed}
	var names []string
	for _, typ := range types {
		if !typ.Valid() {
			t.Fatalf("%s is not Valid", typ)
		}
		names = append(names, string(typ))
		if got := schemaDoc(t, typ)["properties"].(map[string]any)["event_type"].(map[string]any)["const"]; got != string(typ) {
			t.Errorf("schema %s: event_type const %v", typ, got)
		}
	}
	if !slices.Equal(names, schema.Types) {
		t.Errorf("schema.Types %v, the contract's types %v", schema.Types, names)
	}
	entries, _ := schema.FS.ReadDir(".")
	var files []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			files = append(files, strings.TrimSuffix(e.Name(), ".json"))
		}
	}
	if !slices.Equal(files, []string{"listing_changed", "listing_closed", "listing_opened"}) {
		t.Errorf("schema files %v, want one per type", files)
	}
	reasons := schemaDoc(t, ListingClosed)["properties"].(map[string]any)["close_reason"].(map[string]any)["enum"]
	if fmt.Sprint(reasons) != fmt.Sprint([]any{string(Booked), string(Expired)}) {
		t.Errorf("listing_closed close_reason enum %v, want [%s %s]", reasons, Booked, Expired)
	}
	if got := schemaDoc(t, ListingOpened)["properties"].(map[string]any)["schema_version"].(map[string]any)["const"]; fmt.Sprint(got) != fmt.Sprint(SchemaVersion) {
		t.Errorf("schema_version const %v, want %d", got, SchemaVersion)
	}
}

// jsonTypes are the JSON types a Go field of type rt decodes from (null for a pointer).
func jsonTypes(rt reflect.Type) []string {
	var out []string
	if rt.Kind() == reflect.Pointer {
		out = append(out, "null")
		rt = rt.Elem()
	}
	switch {
	case rt == reflect.TypeFor[uuid.UUID](), rt == reflect.TypeFor[time.Time](), rt.Kind() == reflect.String:
		out = append(out, "string")
	case rt.Kind() == reflect.Int, rt.Kind() == reflect.Int64:
		out = append(out, "integer")
	case rt.Kind() == reflect.Struct:
		out = append(out, "object")
	default:
		out = append(out, "unknown Go type "+rt.String())
	}
	slices.Sort(out)
	return out
}

// schemaTypes are the JSON types a property schema admits (from type, const or enum).
func schemaTypes(p map[string]any) []string {
	var out []string
	add := func(v any) {
		switch v.(type) {
		case nil:
			out = append(out, "null")
		case string:
			out = append(out, "string")
		case json.Number:
			out = append(out, "integer")
		}
	}
	switch ty := p["type"].(type) {
	case string:
		out = append(out, ty)
	case []any:
		for _, v := range ty {
			out = append(out, v.(string))
		}
	}
	if c, ok := p["const"]; ok {
		add(c)
	}
	if vs, ok := p["enum"].([]any); ok {
		for _, v := range vs {
			add(v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestSchemasMatchStructs: every JSON field of Event (and of Previous) has a property in every
// schema and the reverse, with the JSON types the Go type decodes from. A non-pointer Go field
// that Decode reads from null (as its zero value, which Validate accepts for course_part and
// close_reason) admits null too: TestSchemaNullAndMissing finds those from Decode itself.
func TestSchemasMatchStructs(t *testing.T) {
	for _, typ := range []Type{ListingOpened, ListingChanged, ListingClosed} {
		doc := schemaDoc(t, typ)
		checkStruct(t, string(typ), reflect.TypeFor[Event](), doc, func(field string) bool {
			return nullDecodes(t, typ, field)
		})
		prev := doc["properties"].(map[string]any)["previous"].(map[string]any)
		if typ == ListingChanged {
			checkStruct(t, string(typ)+".previous", reflect.TypeFor[Previous](), prev, func(string) bool { return false })
		} else if got := schemaTypes(prev); !slices.Equal(got, []string{"null"}) {
			t.Errorf("%s: previous admits %v, want only null", typ, got)
		}
	}
}

func checkStruct(t *testing.T, where string, rt reflect.Type, doc map[string]any, nullOK func(string) bool) {
	t.Helper()
	props := doc["properties"].(map[string]any)
	if doc["additionalProperties"] != false {
		t.Errorf("%s: additionalProperties is %v, want false (Decode rejects unknown fields)", where, doc["additionalProperties"])
	}
	fields := map[string]bool{}
	for _, f := range wireFields(rt) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		fields[name] = true
		p, ok := props[name].(map[string]any)
		if !ok {
			t.Errorf("%s: field %s (%s) has no property in the schema", where, name, f.Type)
			continue
		}
		if strings.HasPrefix(where, "listing_") && !strings.Contains(where, ".") && name == "previous" {
			continue // per type, checked by the caller
		}
		want := jsonTypes(f.Type)
		if !slices.Contains(want, "null") && nullOK(name) {
			want = append(want, "null")
			slices.Sort(want)
		}
		if got := schemaTypes(p); !slices.Equal(got, want) {
			t.Errorf("%s: property %s admits %v, the Go field %s decodes from %v", where, name, got, f.Type, want)
		}
		if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Int64 || f.Type.Kind() == reflect.Int64 {
			if fmt.Sprint(p["maximum"]) != "9223372036854775807" {
				t.Errorf("%s: property %s maximum %v, want the int64 maximum", where, name, p["maximum"])
			}
		}
	}
	for name := range props {
		if !fields[name] {
			t.Errorf("%s: schema property %s has no field in %s", where, name, rt)
		}
	}
}

// nullDecodes says whether Decode accepts a valid event of typ with field set to null.
func nullDecodes(t *testing.T, typ Type, field string) bool {
	m := typeSample(t, typ)
	m[field] = nil
	if field != "listing_key" {
		rekey(m)
	}
	_, err := Decode(marshal(t, m))
	return err == nil
}

// rekey sets m's listing_key to the one its (string) key fields derive, a null or missing one
// read as "", so that a change of a key field tests that field alone.
func rekey(m map[string]any) {
	s := func(f string) string { v, _ := m[f].(string); return v }
	if _, ok := m["listing_key"]; ok {
		m["listing_key"] = ListingKey(s("source"), s("course_name"), s("course_part"), s("play_date"), s("tee_time"))
	}
}

// TestSchemaNullAndMissing: for every field of every type, null and absence are accepted by the
// schema exactly when Decode accepts them, and the schema's required list is what Decode needs.
func TestSchemaNullAndMissing(t *testing.T) {
	ss, err := schema.Schemas()
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []Type{ListingOpened, ListingChanged, ListingClosed} {
		props := schemaDoc(t, typ)["properties"].(map[string]any)
		for field := range props {
			for _, how := range []string{"null", "missing"} {
				m := typeSample(t, typ)
				if how == "null" {
					m[field] = nil
				} else {
					delete(m, field)
				}
				if field != "listing_key" {
					rekey(m)
				}
				b := marshal(t, m)
				_, decErr := Decode(b)
				v, _ := schemaValue(b)
				schemaErr := ss[string(typ)].Validate(v)
				if (decErr == nil) != (schemaErr == nil) {
					t.Errorf("%s with %s %s: Decode says %v, the schema %v", typ, field, how, decErr, schemaErr)
				}
			}
		}
	}
}

// stricterRules are the rules Decode checks and the schemas cannot (or do not) express, each
// with an event of each kind the schema accepts and Decode rejects. Every schema's description
// lists exactly these, numbered in this order.
var stricterRules = []struct {
	text   string // a phrase of the rule as the description states it
	mutate func(m map[string]any)
	raw    func(b []byte) []byte // or a change of the encoded bytes
}{
	{text: "listing_key is the escaped join", mutate: func(m map[string]any) { m["listing_key"] = "sim-golf|other" }},
	{text: "bounded in UTF-8 bytes", mutate: func(m map[string]any) { m["course_name"] = strings.Repeat("가", 100) }},
	{text: "play_date is a real calendar date", mutate: func(m map[string]any) {
		m["play_date"] = "2026-02-30"
		m["listing_key"] = ListingKey(m["source"].(string), m["course_name"].(string), m["course_part"].(string), "2026-02-30", m["tee_time"].(string))
	}},
	{text: "event_id is not the nil UUID", mutate: func(m map[string]any) { m["event_id"] = uuid.Nil.String() }},
	{text: "whole JSON numbers without fraction or exponent", raw: func(b []byte) []byte {
		return bytes.Replace(b, []byte(`"players":4`), []byte(`"players":4.0`), 1)
	}},
	{text: "at most 65536 bytes of valid UTF-8", raw: func(b []byte) []byte {
		return append(b[:len(b)-1], []byte(`,"crawl_id":"`+strings.Repeat("x", 40)+"\xff"+`"}`)...)
	}},
}

// TestSchemaStricterRules: each rule Decode adds to the schemas is stated, in order, in every
// schema's description, and has an example the schema accepts and Decode rejects; the description
// states no other rule.
func TestSchemaStricterRules(t *testing.T) {
	ss, err := schema.Schemas()
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []Type{ListingOpened, ListingChanged, ListingClosed} {
		desc := schemaDoc(t, typ)["description"].(string)
		if strings.Contains(desc, fmt.Sprintf("(%d) ", len(stricterRules)+1)) {
			t.Errorf("%s: the description lists more than the %d rules of stricterRules", typ, len(stricterRules))
		}
		for i, r := range stricterRules {
			if !strings.Contains(desc, fmt.Sprintf("(%d) ", i+1)) || !strings.Contains(desc, r.text) ||
				strings.Index(desc, fmt.Sprintf("(%d) ", i+1)) > strings.Index(desc, r.text) {
				t.Errorf("%s: the description does not state rule (%d) %q", typ, i+1, r.text)
			}
			m := typeSample(t, typ)
			var b []byte
			if r.mutate != nil {
				r.mutate(m)
				b = marshal(t, m)
			} else {
				b = r.raw(marshal(t, m))
			}
			if _, err := Decode(b); err == nil {
				t.Errorf("%s, rule %q: Decode accepts %s", typ, r.text, b)
			}
			v, err := schemaValue(b)
			if err != nil {
				v, _ = schemaValue([]byte(strings.ToValidUTF8(string(b), "\ufffd")))
			}
			if err := ss[string(typ)].Validate(v); err != nil {
				t.Errorf("%s, rule %q: the schema rejects it too (%v): not a rule Decode adds", typ, r.text, err)
			}
		}
	}
}

// schemaValue parses b as the validator does.
func schemaValue(b []byte) (any, error) {
	return jsonschemaUnmarshal(b)
}

// TestSchemasAcceptSamples: the sample events, and the events with every field at its limit.
func TestSchemasAcceptSamples(t *testing.T) {
	for _, e := range sampleEvents() {
		b, _ := Encode(e)
		if err := schema.Validate(b); err != nil {
			t.Errorf("%s: %v", b, err)
		}
	}
}

// TestSchemaCaseOfFieldNames: field names are exact. A differently cased name is not the field
// (the schema says so with additionalProperties false), so Decode must reject it too: the
// consumer stores the value verbatim, and a reader of "price_krw" would find nothing.
func TestSchemaCaseOfFieldNames(t *testing.T) {
	m := typeSample(t, ListingOpened)
	m["PRICE_KRW"] = m["price_krw"]
	delete(m, "price_krw")
	b := marshal(t, m)
	if _, err := Decode(b); err == nil {
		t.Errorf("Decode accepts a field name in another case: %s", b)
	}
	if err := schema.Validate(b); !errors.Is(err, schema.ErrInvalid) {
		t.Errorf("the schema accepts a field name in another case: %v", err)
	}
}

// FuzzSchemaAcceptsDecoded: every input Decode accepts validates against its type's schema.
func FuzzSchemaAcceptsDecoded(f *testing.F) {
	for _, e := range sampleEvents() {
		b, _ := Encode(e)
		f.Add(b)
		s := string(b)
		f.Add([]byte(strings.Replace(s, `"course_part":"OUT"`, `"course_part":null`, 1)))
		f.Add([]byte(strings.Replace(s, `"players":4`, `"players":null`, 1)))
		f.Add([]byte(strings.Replace(s, `+09:00"`, `.5-03:30"`, 1)))
		f.Add([]byte(strings.Replace(s, `"event_id":"`, `"event_id":"urn:uuid:`, 1)))
		f.Add([]byte(strings.Replace(s, `"schema_version":1`, `"schema_version":1,"close_reason":""`, 1)))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Decode(b)
		if err != nil {
			return
		}
		if err := schema.Validate(b); err != nil {
			t.Fatalf("Decode accepts a %s event its schema rejects: %v\n%s", e.EventType, err, b)
		}
	})
}
