package notifylist

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
)

// TestWriteJSONSpellsTimesAsEvents: `notifications --json` spells claimed_at, occurred_at and
// sent_at as every other JSON output does (events.FormatTimeIn: RFC 3339 in the --tz zone, six
// fractional digits, also for a whole second); it wrote encoding/json's RFC 3339 with nanoseconds
// and the trailing zeros dropped, so that two outputs of one claim spelled one time two ways.
func TestWriteJSONSpellsTimesAsEvents(t *testing.T) {
	t.Parallel()
	price := int64(140000)
	sent := time.Date(2026, 12, 1, 8, 4, 29, 120_000_000, time.UTC)
	n := notify.Notification{
		Key: uuid.MustParse("00000000-0000-0000-0000-000000000001"), Watch: "cheap", Channel: "hook",
		EventID: uuid.MustParse("00000000-0000-0000-0000-000000000002"), CrawlID: "s@2026-12-01T17:00:00.000000+09:00",
		EventType: "listing_opened", Course: "레이크 CC", PriceKRW: &price, PlayDate: "2026-12-05", TeeTime: "07:00",
		OccurredAt: time.Date(2026, 12, 1, 8, 0, 0, 123_456_789, time.UTC), Status: "sent", Attempts: 1,
		ClaimedAt: time.Date(2026, 12, 1, 8, 4, 28, 0, time.UTC), SentAt: &sent,
	}
	seoul, err := time.LoadLocation("Asia/Seoul")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, []notify.Notification{n}, seoul, true); err != nil {
		t.Fatal(err)
	}
	want := `{"key":"00000000-0000-0000-0000-000000000001","watch":"cheap","channel":"hook",` +
		`"event_id":"00000000-0000-0000-0000-000000000002","crawl_id":"s@2026-12-01T17:00:00.000000+09:00",` +
		`"event_type":"listing_opened","course_name":"레이크 CC","price_krw":140000,"play_date":"2026-12-05","tee_time":"07:00",` +
		`"occurred_at":"` + events.FormatTime(n.OccurredAt) + `","status":"sent","attempts":1,` +
		`"claimed_at":"2026-12-01T17:04:28.000000+09:00","sent_at":"2026-12-01T17:04:29.120000+09:00"}` + "\n"
	if b.String() != want {
		t.Errorf("notifications --json:\n got %s\nwant %s", b.String(), want)
	}
	b.Reset()
	n.SentAt = nil
	if err := Write(&b, []notify.Notification{n}, time.UTC, true); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte(`"claimed_at":"2026-12-01T08:04:28.000000Z"`)) || bytes.Contains(b.Bytes(), []byte("sent_at")) {
		t.Errorf("notifications --json --tz UTC, not sent: %s\nwant claimed_at in UTC to the microsecond and no sent_at", b.String())
	}
}
