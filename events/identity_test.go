package events

import (
	"testing"
	"time"
)

// TestListingKeyInjective : a '|' (or the escape character)
// inside a part must not let two different listings share a key, and so event ids.
func TestListingKeyInjective(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	base := Listing{Source: "s", RoundDate: "12/05", PlayDate: "2026-12-05", TeeTime: "07:00"}
	pairs := [][2][2]string{
		{{"Lake|OUT", ""}, {"Lake", "OUT|"}},
		{{"Lake|", "OUT"}, {"Lake", "|OUT"}},
		{{`Lake\`, "OUT"}, {"Lake", `\OUT`}},
		{{`Lake\|`, "OUT"}, {`Lake`, `|OUT`}},
		{{`Lake\`, `|OUT`}, {`Lake\|`, `OUT`}},
	}
	for _, p := range pairs {
		a, b := base, base
		a.CourseName, a.CoursePart = p[0][0], p[0][1]
		b.CourseName, b.CoursePart = p[1][0], p[1][1]
		if a.Key() == b.Key() {
			t.Errorf("(%q, %q) and (%q, %q) share the listing key %q", a.CourseName, a.CoursePart, b.CourseName, b.CoursePart, a.Key())
		}
		ea, eb := Opened(a, "c1", at), Opened(b, "c1", at)
		if ea.EventID == eb.EventID {
			t.Errorf("(%q, %q) and (%q, %q) share the event id %s", a.CourseName, a.CoursePart, b.CourseName, b.CoursePart, ea.EventID)
		}
		for _, e := range []Event{ea, eb} {
			if err := e.Validate(); err != nil {
				t.Errorf("%q: %v", e.ListingKey, err)
			}
		}
	}
	// Plain names keep their key: snapshots and stored events of ordinary listings are unchanged.
	if got, want := ListingKey("sim-golf", " 레이크  CC ", "OUT", "2026-12-05", "07:30"), "sim-golf|레이크 CC|OUT|2026-12-05|07:30"; got != want {
		t.Errorf("ListingKey = %q, want %q", got, want)
	}
	if got, want := ListingKey("s", `a|b\c`, "", "2026-12-05", "07:30"), `s|a\|b\\c||2026-12-05|07:30`; got != want {
		t.Errorf("ListingKey = %q, want %q", got, want)
	}
}
