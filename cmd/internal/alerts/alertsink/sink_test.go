package alertsink_test

import (
	"bytes"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts/alertsink"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/liteclaims"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
)

// TestIngestClaimsTheDecodedEvents: a batch's decoded events are claimed (two watches match the
// one opening: two claims), its undecodable messages ignored and logged; the batch again claims
// nothing.
func TestIngestClaimsTheDecodedEvents(t *testing.T) {
	t.Parallel()
	st, err := liteclaims.Open(t.Context(), filepath.Join(t.TempDir(), "alerts.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	watches, err := notify.Parse([]byte("channels:\n  hook: {type: webhook, url: http://127.0.0.1:1/}\n"+
		"watches:\n  - {name: lake, courses: [lake], channels: [hook]}\n  - {name: all, channels: [hook]}\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	svc, err := alerts.New(st, alerts.Config{Watches: watches})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	sink := alertsink.Sink{Service: svc, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	price, players := int64(100000), 4
	e := events.Opened(events.Listing{Source: "site-a", CourseName: "Lake", RoundDate: "2026-12-05", PlayDate: "2026-12-05",
		TeeTime: "07:00", Values: events.Values{PriceKRW: &price, Players: &players}}, "c1", time.Now())
	batch := []store.Message{{Event: &e}, {Err: errors.New("bad json")}, {}}
	if res, err := sink.Ingest(t.Context(), batch); err != nil || res != (store.Result{Inserted: 2, Duplicates: 1}) {
		t.Fatalf("Ingest: %+v, %v; want 2 claims", res, err)
	}
	if !strings.Contains(logs.String(), "ignoring undecodable messages") || !strings.Contains(logs.String(), "count=2") {
		t.Errorf("the undecodable messages are not logged:\n%s", logs.String())
	}
	if res, err := sink.Ingest(t.Context(), batch); err != nil || res != (store.Result{Duplicates: 3}) {
		t.Fatalf("Ingest again: %+v, %v; want nothing claimed", res, err)
	}
}
