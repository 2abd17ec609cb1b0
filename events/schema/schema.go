// Package schema holds the JSON Schemas (2020-12) of the booking events, one per event type
// (listing_opened.json, listing_changed.json, listing_closed.json, embedded), the contract for
// consumers that do not read Go, and Validate, which checks one encoded event against the schema
// its event_type names. The schema files are generated from package events' structs (events.Event
// says how; UPDATE_GOLDENS=1 go test ./events -run TestSchemaFilesAreGenerated writes them, and
// the test fails when a committed file differs): never edit them by hand. The schemas accept every
// event events.Decode accepts; where Decode is stricter, each schema's description lists the
// rules (events' TestSchemaStricterRules holds the list to the code). It does not import package
// events, so events' own tests can use it.
package schema

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// FS holds the schema files, named <event_type>.json, and AsyncAPIFile.
//
//go:embed *.json asyncapi.yaml
var FS embed.FS

// AsyncAPIFile is the AsyncAPI 3.0 document of the booking-events topic, whose messages' payloads
// are the schemas.
const AsyncAPIFile = "asyncapi.yaml"

// Types are the event types that have a schema, in the order of the contract.
var Types = []string{"listing_opened", "listing_changed", "listing_closed"}

// BaseURL is the prefix of every schema's $id: the schema of type t is BaseURL + t + ".json".
const BaseURL = "https://github.com/golfcrawler/golf-crawler/events/schema/"

// ErrInvalid is what Validate's errors wrap when the event does not satisfy its schema (or names
// no known event_type).
var ErrInvalid = errors.New("event does not match its JSON Schema")

var (
	compileOnce sync.Once
	compiled    map[string]*jsonschema.Schema
	compileErr  error
)

// Schemas compiles the embedded schemas (once) and returns them by event type.
func Schemas() (map[string]*jsonschema.Schema, error) {
	compileOnce.Do(func() {
		c := jsonschema.NewCompiler()
		for _, t := range Types {
			doc, err := Document(t)
			if err != nil {
				compileErr = err
				return
			}
			if err := c.AddResource(BaseURL+t+".json", doc); err != nil {
				compileErr = fmt.Errorf("schema %s: %w", t, err)
				return
			}
		}
		compiled = map[string]*jsonschema.Schema{}
		for _, t := range Types {
			s, err := c.Compile(BaseURL + t + ".json")
			if err != nil {
				compileErr = fmt.Errorf("compile schema %s: %w", t, err)
				return
			}
			compiled[t] = s
		}
	})
	return compiled, compileErr
}

// Document is the schema of event type t, parsed as the validator parses JSON (numbers as
// json.Number).
func Document(t string) (any, error) {
	b, err := FS.ReadFile(t + ".json")
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", t, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", t, err)
	}
	return doc, nil
}

// Validate checks one encoded event (a Kafka message value, a line of an events file) against the
// schema of its event_type. The error wraps ErrInvalid when the event does not match.
func Validate(b []byte) error {
	ss, err := Schemas()
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%w: not JSON: %v", ErrInvalid, err)
	}
	obj, _ := v.(map[string]any)
	t, _ := obj["event_type"].(string)
	s, ok := ss[t]
	if !ok {
		return fmt.Errorf("%w: no schema for event_type %q", ErrInvalid, t)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return nil
}
