package store

import (
	"fmt"
	"testing"

	"github.com/golfcrawler/golf-crawler/events"
)

// TestHeadersRoundTrip: raw_headers keeps every header byte for byte, text or not, and tells
// "none" from "not kept".
func TestHeadersRoundTrip(t *testing.T) {
	for _, hs := range [][]events.Header{
		{},
		{{Key: "ce_id", Value: []byte("7235f047-a316-565a-850f-7cfa5d22e878")}, {Key: "empty", Value: []byte{}}},
		{{Key: "bin", Value: []byte("\xff\x00")}, {Key: "nul\x00key", Value: []byte("레이크")}, {Key: "\xfe", Value: nil}},
	} {
		raw := encodeHeaders(hs)
		got, kept, err := decodeHeaders(raw)
		if err != nil || !kept || fmt.Sprintf("%q", got) != fmt.Sprintf("%q", hs) {
			t.Errorf("%s: decoded %q (kept %v, %v), want %q", raw, got, kept, err, hs)
		}
	}
	if hs, kept, err := decodeHeaders(nil); hs != nil || kept || err != nil {
		t.Errorf("null raw_headers: %v %v %v, want not kept", hs, kept, err)
	}
}
