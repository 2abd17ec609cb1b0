package sitesim

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestGroundTruthGolden pins the simulated lives byte for byte: a site's listings depend on (seed,
// date) only, and the crawler's tests, the demo and the chaos scenarios count on them staying the
// same. Two sites (with and without an epoch, malformed rows at 10%) over three weeks, every
// booking and change revealed; the hash is of the JSON of their ground truth.
func TestGroundTruthGolden(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, KST)
	for _, c := range []struct {
		cfg  Config
		n    int
		hash string
	}{
		{Config{Seed: 22, BadRowRate: 0.1}, 3103, "a029cf221a4212c17cfb9e58be2f66336b066dd8f49df139ac2d39adee95435b"},
		{Config{Seed: 23, BadRowRate: 0.1, Epoch: t0.Add(-36 * time.Hour), BookingSpeed: 6, TeeTimesPerDay: 9}, 2233, "9a0bb87076bd376e7209f1d7ff518dca0c341d6bef03821d99ed98f413ea00e3"},
	} {
		c.cfg.Now = func() time.Time { return t0 }
		truth := New(c.cfg).GroundTruth(t0.AddDate(0, 0, -7), t0.AddDate(0, 0, 14))
		b, err := json.Marshal(truth)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprintf("%x", sha256.Sum256(b)); len(truth) != c.n || got != c.hash {
			t.Errorf("seed %d: %d listings, hash %s; want %d, %s", c.cfg.Seed, len(truth), got, c.n, c.hash)
		}
	}
}
