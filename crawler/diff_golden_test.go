package crawler

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestDiffGolden pins what Diff emits, byte for byte: every event (id, contents, order), the
// stats and a hash of the next snapshot, over pseudo-random crawls (fixed seed) of a small site
// that open, change, miss, close as booked and expired, reopen from tombstones, collapse (believed
// and not), withhold page sets, and carry duplicates and invalid rows. It starts from a snapshot
// written before epochs, so the legacy epoch rule is pinned too. The file is
// testdata/diff.golden; rewrite it with UPDATE_GOLDENS=1 (testkit.Golden) only for an intended change of the events.
func TestDiffGolden(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	r := rand.New(rand.NewPCG(7, 22))
	var pool []events.Listing
	for i := range 14 {
		pool = append(pool, mkListing(fmt.Sprintf("C%d", i%3), fmt.Sprintf("2026-11-2%d", 1+i%4), fmt.Sprintf("%02d:%02d", 6+i, 10*(i%6)), 100000, 4))
	}
	start := seoulTime(t, "2026-11-20 06:00")
	snap := snapOf(start, 0, pool[0], pool[1]) // no Epoch: a snapshot from before epochs
	for n := 1; n <= 48; n++ {
		collapse := n%11 >= 8 || r.IntN(6) == 0 // crawls 8-10, 19-21, ...: a collapse that repeats
		cur := goldenCrawlListings(r, pool, n, collapse)
		c := Crawl{ID: fmt.Sprintf("g-c%d", n), Source: coreTestSource, At: start.Add(time.Duration(n) * 90 * time.Minute), Complete: n%11 >= 8 || r.IntN(5) != 0}
		reference := snap.LastCompleteSeen
		if snap.LastCompleteAt.IsZero() {
			reference = snap.OpenCount()
		}
		c.Collapsed = c.Complete && Collapsed(0, reference, len(cur))
		if c.Complete && r.IntN(6) == 0 {
			c.Withheld = func(l events.Listing) bool { return l.CourseName == "C1" }
		}
		opt := DiffOptions{}
		if n%7 == 0 {
			opt = DiffOptions{MissesToClose: 3, CollapseCrawls: 2}
		}
		out, next, stats := Diff(snap, cur, c, opt)
		writeGoldenCrawl(t, &buf, n, c, out, next, stats)
		snap = next
	}
	testkit.Golden(t, filepath.Join("testdata", "diff.golden"), buf.Bytes())
}

// goldenCrawlListings is crawl n's listings: prices and players drift, rows vanish, a crawl in
// collapse shows at most two rows, and some crawls repeat a row or carry an invalid one.
func goldenCrawlListings(r *rand.Rand, pool []events.Listing, n int, collapse bool) []events.Listing {
	var cur []events.Listing
	for i := range pool {
		if r.IntN(8) == 0 {
			pool[i].PriceKRW = pointerTo(int64(90000 + 10000*r.IntN(4)))
		}
		if r.IntN(12) == 0 {
			pool[i].Players = pointerTo(1 + r.IntN(4))
		}
		if r.IntN(9) == 0 {
			pool[i].URL = fmt.Sprintf("https://example.test/%d/%d", i, n) // cosmetic: no event
		}
		if (collapse && i >= 2) || r.IntN(3) == 0 {
			continue
		}
		cur = append(cur, pool[i])
	}
	if len(cur) > 0 && r.IntN(4) == 0 {
		dup := cur[0]
		dup.PriceKRW = pointerTo[int64](1) // the first of a key wins
		cur = append(cur, dup)
	}
	if len(cur) > 0 && r.IntN(5) == 0 {
		bad := cur[len(cur)-1]
		bad.PriceKRW = pointerTo[int64](-5) // invalid: kept as seen when open
		cur[len(cur)-1] = bad
	}
	return cur
}

// writeGoldenCrawl writes one crawl: a header with the stats and the next snapshot's hash, then
// every event as its JSON.
func writeGoldenCrawl(t *testing.T, buf *bytes.Buffer, n int, c Crawl, out []events.Event, next Snapshot, stats DiffStats) {
	t.Helper()
	snapJSON, err := json.Marshal(next)
	if err != nil {
		t.Fatal(err)
	}
	invalid := make([]string, 0, len(stats.Invalid))
	for _, inv := range stats.Invalid {
		invalid = append(invalid, inv.Listing.Key()+": "+inv.Err.Error())
	}
	fmt.Fprintf(buf, "crawl %d complete=%v collapsed=%v withheld=%v: seen=%d opened=%d changed=%d closed=%d missed=%d past=%d kept=%d dups=%d %v reasons=%v collapses=%d believed=%v invalid=%q snapshot=%x\n",
		n, c.Complete, c.Collapsed, c.Withheld != nil, stats.Seen, stats.Opened, stats.Changed, stats.Closed, stats.Missed,
		stats.Past, stats.Kept, stats.Duplicates, stats.DuplicateKeys, stats.Reasons, stats.Collapses, stats.Believed,
		invalid, sha256.Sum256(snapJSON))
	for _, e := range out {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
}
