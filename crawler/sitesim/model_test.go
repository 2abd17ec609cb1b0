package sitesim

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestGroundTruthGolden pins the simulated lives byte for byte: a site's listings depend on (seed,
// date) only, and the crawler's tests, the demo and the chaos scenarios count on them staying the
// same. Two sites (with and without an epoch, malformed rows at 10%) over three weeks, every
// booking and change revealed; the golden holds each one's count and the hash of the JSON of its
// ground truth (UPDATE_GOLDENS=1 writes it after a deliberate change of the model).
func TestGroundTruthGolden(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, KST)
	var got strings.Builder
	for _, cfg := range []Config{
		{Seed: 22, BadRowRate: 0.1},
		{Seed: 23, BadRowRate: 0.1, Epoch: t0.Add(-36 * time.Hour), BookingSpeed: 6, TeeTimesPerDay: 9},
	} {
		cfg.Now = func() time.Time { return t0 }
		truth := New(cfg).GroundTruth(t0.AddDate(0, 0, -7), t0.AddDate(0, 0, 14))
		b, err := json.Marshal(truth)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&got, "seed %d: %d listings, sha256 %x\n", cfg.Seed, len(truth), sha256.Sum256(b))
	}
	testkit.Golden(t, "testdata/ground-truth.sha256", []byte(got.String()))
}
