package liteclaims_test

import (
	"fmt"
	"path/filepath"
	"syscall"
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

// BenchmarkClaimCrawl is the claim transaction of a source's first crawl as BenchmarkCrawlAlerts
// (cmd/crawler) makes it: 800 listings open, each the backlog of two watches (1,600 claims) and
// their fingerprints, on a store that holds 20,000 claims of earlier crawls. It isolates the
// store's part of claim_ms/crawl from the crawl's noise.
func BenchmarkClaimCrawl(b *testing.B) {
	st, err := openB(b)
	if err != nil {
		b.Fatal(err)
	}
	batch := func(round int) notify.ClaimBatch {
		bt := notify.ClaimBatch{Now: time.Now(), MaxAge: time.Hour,
			Fingerprints: []notify.WatchFingerprint{{Watch: "cheap", Source: "s", Fingerprint: fmt.Sprint(round)},
				{Watch: "weekend", Source: "s", Fingerprint: fmt.Sprint(round)}}}
		for j := range 800 {
			e := opening(fmt.Sprint("club-", round, "-", j))
			for _, w := range []string{"cheap", "weekend"} {
				bt.Claims = append(bt.Claims, notify.Claim{Key: notify.ClaimKey(w, "hook", e.EventID), Watch: w, Channel: "hook", Event: e, Backlog: true})
			}
		}
		return bt
	}
	for r := range 12 { // 20,000 claims before
		if _, err := st.Claim(b.Context(), batch(-1-r)); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		bt := batch(i)
		c0 := cpuTime(b)
		b.StartTimer()
		if _, err := st.Claim(b.Context(), bt); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuTime(b) - c0
		b.StartTimer()
		i++
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(i), "cpu_ms/op")
}

// cpuTime is the process's user and system CPU time so far: a figure less swayed than the wall
// time by the other work of a shared machine.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
