package notify_test

import (
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/notify"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestDryRunSaysWhatAClaimWouldDoAndWritesNothing: claim.sql in its dry-run mode reports a new
// match as sent, a stale one as skipped, and one that already has a row as claimed, and adds no row.
func TestDryRunSaysWhatAClaimWouldDoAndWritesNothing(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	cfg, err := notify.Parse([]byte("channels:\n  a: {type: webhook, url: http://x/}\nwatches:\n  - name: w\n    channels: [a]\n"),
		func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	claimed := events.Opened(listing("claimed"), "c1", now)
	if res, err := (&notify.Claimer{Pool: db, Config: cfg, Owner: "test"}).Ingest(t.Context(), msgs(claimed)); err != nil || res.Inserted != 1 {
		t.Fatalf("claim: %d, %v", res.Inserted, err)
	}
	var out testkit.SyncBuffer
	dry := &notify.Claimer{Pool: db, Config: cfg, Owner: "test", DryRun: &out}
	fresh, old := events.Opened(listing("fresh"), "c2", now), events.Opened(listing("old"), "c2", now.Add(-31*time.Minute))
	if _, err := dry.Ingest(t.Context(), msgs(claimed, fresh, old)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"would send to a (watch w", "fresh", "would skip " + claimed.EventID.String() + " for a", ": claimed",
		"would skip " + old.EventID.String() + " for a", ": stale"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run printed:\n%s\nwant %q", out.String(), want)
		}
	}
	if n := strings.Count(out.String(), "would "); n != 3 {
		t.Errorf("dry run printed %d lines for 3 matches:\n%s", n, out.String())
	}
	var rows int
	if err := db.QueryRow(t.Context(), "select count(*) from notifications").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Errorf("%d notifications after the dry run, want the 1 claimed before", rows)
	}
}
