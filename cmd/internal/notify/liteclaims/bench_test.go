package liteclaims_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/liteclaims"
)

// BenchmarkClaimTransaction is the price of a durable claim: one Claim transaction (WAL,
// synchronous=FULL, so an fsync per commit) of a site crawl's matches, 20 claims and 5 closes, on
// the test's temp dir.
func BenchmarkClaimTransaction(b *testing.B) {
	st, err := openB(b)
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		batch := notify.ClaimBatch{Now: time.Now()}
		for j := range 20 {
			e := opening(fmt.Sprint("bench-", i, "-", j))
			batch.Claims = append(batch.Claims, notify.Claim{Key: notify.ClaimKey("w", "a", e.EventID), Watch: "w", Channel: "a", Event: e})
		}
		for j := range 5 {
			batch.Closes = append(batch.Closes, notify.Close{ListingKey: fmt.Sprint("closed-", i, "-", j), At: time.Now()})
		}
		if _, err := st.Claim(b.Context(), batch); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func openB(b *testing.B) (notify.ClaimStore, error) {
	st, err := liteclaims.Open(b.Context(), filepath.Join(b.TempDir(), "alerts.db"))
	if err != nil {
		return nil, err
	}
	b.Cleanup(func() { st.Close() })
	return st, nil
}
