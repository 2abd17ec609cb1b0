package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

// TestCrashBeforeSnapshotSaveThenPriceDrop stages what TestSIGKILLCrawlerAlerts (chaos) hits when
// a kill lands between a crawl's claim and its snapshot save and the site changes before the
// restarted crawler's next crawl: a tee time opens at 200,000원 ("all" fires, "cheap" not), the
// claim is committed and sent, the snapshot is not saved (the previous one is put back, as after a
// SIGKILL), and the price drops to 140,000원 before the next crawl. That crawl re-derives the
// opening from the old snapshot, now at 140,000원, under the same event id: "all" already has
// that claim (nothing more), "cheap" gets it, as listing_opened. No watch the tee time entered
// misses it and none hears of it twice; there is no listing_changed, because no saved snapshot
// ever held the 200,000원 price.
func TestCrashBeforeSnapshotSaveThenPriceDrop(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	rows := []teeRow{{"12/20", "06:00", 120000}}
	site := teePage(t, func() []teeRow { mu.Lock(); defer mu.Unlock(); return slices.Clone(rows) })
	rc := newReceiver(t, nil)
	o := newOnceRun(t, site.URL, rc.srv.URL, cheapAndAll)
	step := func(name string, rs ...teeRow) {
		t.Helper()
		mu.Lock()
		rows = rs
		mu.Unlock()
		if out, err := o.once(t); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	step("baseline", teeRow{"12/20", "06:00", 120000}) // the state's epoch, as in the chaos phases after the first
	saved := snapshotFiles(t, o.state)
	step("opening at 200000", teeRow{"12/20", "06:00", 120000}, teeRow{"12/20", "06:10", 200000})
	restoreSnapshots(t, o.state, saved) // SIGKILL after the claim, before the save
	step("drop to 140000", teeRow{"12/20", "06:00", 120000}, teeRow{"12/20", "06:10", 140000})

	got := deliveredMatches(t, rc)
	want := []string{"all listing_opened 06:00 120000", "all listing_opened 06:10 200000",
		"cheap listing_opened 06:00 120000", "cheap listing_opened 06:10 140000"}
	if !slices.Equal(got, want) {
		t.Errorf("delivered %q\nwant      %q", got, want)
	}
}

// snapshotFiles reads the snapshot files of the state dir (name: content).
func snapshotFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "snapshot-*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no snapshot in %s: %v", dir, err)
	}
	out := map[string][]byte{}
	for _, n := range names {
		out[n] = []byte(readFile(t, n))
	}
	return out
}

// restoreSnapshots puts back the snapshot files saved: the state dir as a crash before the save
// leaves it (the claims database keeps what was committed).
func restoreSnapshots(t *testing.T, dir string, saved map[string][]byte) {
	t.Helper()
	if got := snapshotFiles(t, dir); len(got) != len(saved) {
		t.Fatalf("snapshot files %d, want %d", len(got), len(saved))
	}
	for n, b := range saved {
		if err := os.WriteFile(n, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// deliveredMatches is every match the receiver got, as "watch event_type tee_time price", sorted.
func deliveredMatches(t *testing.T, rc *receiver) []string {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, b := range rc.all {
		var body notify.WebhookBody
		if err := json.Unmarshal([]byte(b), &body); err != nil {
			t.Fatal(err)
		}
		for _, m := range body.Matches {
			out = append(out, fmt.Sprintf("%s %s %s %d", body.Watch, m.EventType, m.TeeTime, *m.PriceKRW))
		}
	}
	slices.Sort(out)
	return out
}
