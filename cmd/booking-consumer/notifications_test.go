package main

import (
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestNotificationsListsUnknownInSeoulTime: `notifications` prints its times in Asia/Seoul like
// every other output (it printed UTC), and --status unknown lists the claims whose outcome is
// unknown (a chat channel that timed out may have posted the alert).
func TestNotificationsListsUnknownInSeoulTime(t *testing.T) {
	t.Parallel()
	db, dbURL := storetest.NewDBURL(t)
	_, err := db.Exec(t.Context(), `insert into notifications (key, watch, channel, event_id, crawl_id, listing_key, occurred_at,
	    event, status, error, attempts, claimed_at)
	  values (gen_random_uuid(), 'w', 'slack', gen_random_uuid(), 'c1', 'k', '2026-12-01T08:00:00Z',
	    '{"event_type":"listing_opened","course_name":"레이크 CC","play_date":"2026-12-05","tee_time":"07:00"}', 'unknown',
	    'channel slack: no answer within 1s', 1, '2026-12-01T08:04:28Z')`)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, t.Context(), map[string]string{"DATABASE_URL": dbURL}, "notifications", "--status", "unknown")
	if err != nil || !strings.Contains(out, "2026-12-01T17:04:28.000000+09:00") || !strings.Contains(out, "unknown") ||
		!strings.Contains(out, "no answer within 1s") {
		t.Errorf("notifications --status unknown: %v\n%s\nwant the claim at 2026-12-01T17:04:28.000000+09:00", err, out)
	}
}

// TestNotificationsShowPartAndPrice: `notifications` shows each claim's course part, price and
// old price (rows looked duplicated without them); a claim without them prints "-".
func TestNotificationsShowPartAndPrice(t *testing.T) {
	t.Parallel()
	db, dbURL := storetest.NewDBURL(t)
	_, err := db.Exec(t.Context(), `insert into notifications (key, watch, channel, event_id, crawl_id, listing_key, occurred_at,
	    event, status, attempts, claimed_at)
	  values (gen_random_uuid(), 'w', 'hook', gen_random_uuid(), 'c1', 'k1', '2026-12-01T08:00:00Z',
	    '{"event_type":"listing_changed","course_name":"레이크 CC","course_part":"OUT","play_date":"2026-12-05","tee_time":"07:00",
	      "price_krw":140000,"previous":{"price_krw":160000}}', 'sent', 1, '2026-12-01T08:04:28Z'),
	         (gen_random_uuid(), 'w', 'hook', gen_random_uuid(), 'c1', 'k2', '2026-12-01T08:00:00Z',
	    '{"event_type":"listing_opened","course_name":"레이크 CC","play_date":"2026-12-05","tee_time":"07:00"}', 'sent', 1, '2026-12-01T08:04:27Z')`)
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, t.Context(), map[string]string{"DATABASE_URL": dbURL}, "notifications")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 3 || !strings.Contains(lines[0], "part") || !strings.Contains(lines[0], "price") ||
		!strings.Contains(lines[0], "old_price") || !strings.Contains(lines[1], "OUT") || !strings.Contains(lines[1], "140,000") ||
		!strings.Contains(lines[1], "160,000") || strings.Count(lines[2], " - ") < 3 {
		t.Errorf("notifications: %v\n%s\nwant part OUT, price 140,000 and old price 160,000 on the first row, - on the second", err, out)
	}
	out, _, err = runCLI(t, t.Context(), map[string]string{"DATABASE_URL": dbURL}, "notifications", "--json")
	if err != nil || !strings.Contains(out, `"course_part":"OUT"`) || !strings.Contains(out, `"price_krw":140000`) || !strings.Contains(out, `"previous_price_krw":160000`) {
		t.Errorf("notifications --json: %v\n%s", err, out)
	}
	// Its times in events.FormatTime's spelling, like every other JSON output (a whole second
	// kept its six zeros; encoding/json dropped them).
	if !strings.Contains(out, `"claimed_at":"2026-12-01T17:04:28.000000+09:00"`) || !strings.Contains(out, `"occurred_at":"2026-12-01T17:00:00.000000+09:00"`) {
		t.Errorf("notifications --json:\n%s\nwant claimed_at 2026-12-01T17:04:28.000000+09:00 and occurred_at 2026-12-01T17:00:00.000000+09:00", out)
	}
}
