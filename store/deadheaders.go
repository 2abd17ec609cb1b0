package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/golfcrawler/golf-crawler/events"
)

// headerJSON is one Kafka header in booking_events_dead.raw_headers (migration 009): key and
// value as JSON strings when jsonb can hold them as text (valid UTF-8 without NUL), otherwise in
// base64, so that the bytes are kept exactly either way.
type headerJSON struct {
	Key         *string `json:"key,omitempty"`
	KeyBase64   []byte  `json:"key_base64,omitempty"`
	Value       *string `json:"value,omitempty"`
	ValueBase64 []byte  `json:"value_base64,omitempty"`
}

func jsonText(b []byte) bool { return utf8.Valid(b) && !strings.ContainsRune(string(b), 0) }

// encodeHeaders is raw_headers of a message with headers hs: a JSON array, [] for none.
func encodeHeaders(hs []events.Header) []byte {
	out := make([]headerJSON, len(hs))
	for i, h := range hs {
		if jsonText([]byte(h.Key)) {
			out[i].Key = &h.Key
		} else {
			out[i].KeyBase64 = []byte(h.Key)
		}
		if jsonText(h.Value) {
			v := string(h.Value)
			out[i].Value = &v
		} else {
			out[i].ValueBase64 = h.Value
		}
	}
	b, _ := json.Marshal(out) // strings and byte slices always marshal
	return b
}

// decodeHeaders reads raw_headers back; kept is false for a null (a dead letter from before
// migration 009, whose headers were not kept).
func decodeHeaders(raw []byte) (hs []events.Header, kept bool, err error) {
	if raw == nil {
		return nil, false, nil
	}
	var in []headerJSON
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, true, fmt.Errorf("raw_headers: %w", err)
	}
	hs = make([]events.Header, len(in))
	for i, h := range in {
		hs[i].Key = string(h.KeyBase64)
		if h.Key != nil {
			hs[i].Key = *h.Key
		}
		hs[i].Value = h.ValueBase64
		if h.Value != nil {
			hs[i].Value = []byte(*h.Value)
		}
	}
	return hs, true, nil
}
