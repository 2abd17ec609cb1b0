package store

import (
	"strings"
	"testing"
)

// The expanded inserts stay recognisable where operators (and the chaos suite) look for them:
// pg_stat_activity keeps only the first 1 KB of a statement's text. The expansion once filled the
// placeholder names quoted in the files' comments too, pushing "insert into booking_events" past
// that 1 KB, and the chaos suite's lock-wait probe never saw a waiting insert.
func TestExpandedInsertsFitPgStatActivity(t *testing.T) {
	t.Parallel()
	for name, q := range map[string]string{"insert_events.sql": insertEventsSQL, "dead_insert_event.sql": deadInsertEventSQL,
		"insert_staged_events.sql": insertStagedSQL} {
		const trackActivityQuerySize = 1024 // PostgreSQL's default track_activity_query_size
		i := strings.Index(q, "insert into booking_events (")
		if i < 0 || i > trackActivityQuerySize-64 {
			t.Errorf("%s: \"insert into booking_events (\" at byte %d of the expanded statement, want within the first %d", name, i, trackActivityQuerySize-64)
		}
		if strings.Contains(q, "{{") {
			t.Errorf("%s: a placeholder is left unexpanded:\n%s", name, q)
		}
		for _, line := range strings.Split(q, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "--") && strings.Contains(line, "event_id, event_type") {
				t.Errorf("%s: the expansion filled a comment: %s", name, line)
			}
		}
	}
}

// A column whose Go type does not match its parameter type, or has no binary encoder, cannot be
// declared: binaryElem panics, so eventColumns (a package variable) fails every test at once.
func TestBinaryElemRefusesAMismatch(t *testing.T) {
	t.Parallel()
	for name, declare := range map[string]func(){
		"string as int":   func() { binaryElem("x", "int", func(*eventRow) string { return "" }) },
		"int64 as int":    func() { binaryElem("x", "int", func(*eventRow) int64 { return 0 }) },
		"*int as int":     func() { binaryElem("x", "int", func(*eventRow) *int { return nil }) },
		"float64 as text": func() { binaryElem("x", "text", func(*eventRow) float64 { return 0 }) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: declared without a panic", name)
				}
			}()
			declare()
		}()
	}
	if oid, f := binaryElem("x", "int", func(*eventRow) int32 { return 7 }); oid != 23 || string(f(nil, nil)) != "\x00\x00\x00\x04\x00\x00\x00\x07" {
		t.Errorf("int32 as int: oid %d, %q", oid, f(nil, nil))
	}
	// An event's int (eventfields.go) goes whole as a bigint, cast to its column by PostgreSQL.
	if oid, f := binaryElem("x", "bigint", func(*eventRow) *int { v := 1 << 40; return &v }); oid != 20 || string(f(nil, nil)) != "\x00\x00\x00\x08\x00\x00\x01\x00\x00\x00\x00\x00" {
		t.Errorf("*int as bigint: oid %d, %q", oid, f(nil, nil))
	}
}
