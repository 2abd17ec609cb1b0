package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// benchMaxAge is the benchmarks' --alert-max-age: their simulated clock is fixed in 2025, and
// with a year the events of a crawl became stale (claimed skipped, never sent) from 2026-12-01
// on, so that BenchmarkCrawlAlerts measured no sending at all.
const benchMaxAge = 100 * 365 * 24 * time.Hour

// benchAlerts opens crawler-side alerts in a fresh dir for the watches file wf.
func benchAlerts(b *testing.B, wf string) *alertsRuntime {
	b.Helper()
	watches, err := notify.LoadFile(wf, func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	a, err := openAlerts(b.Context(), cli.Env{Logger: slog.New(slog.DiscardHandler)}, b.TempDir(),
		alertsConfig{Config: alerts.Config{MaxAge: benchMaxAge, MaxAttempts: 6, RetryBase: time.Second, Retention: 365 * 24 * time.Hour}},
		watches, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := a.svc.Start(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = a.close(0) })
	return a
}

// benchWatchesFile is a watch of openings under 150,000원 (and, with weekend, one of weekend
// tee times) on one webhook at url.
func benchWatchesFile(b *testing.B, url string, weekend bool) string {
	w := "channels:\n  hook: {type: webhook, url: \"" + url + "/alerts\", timeout: 1h}\n" +
		"watches:\n  - name: cheap\n    max_price_krw: 150000\n    channels: [hook]\n"
	if weekend {
		w += "  - name: weekend\n    weekdays: [sat, sun]\n    channels: [hook]\n"
	}
	return testkit.WriteTemp(b, "watches.yaml", w)
}

// BenchmarkCrawlAlerts is the wall time of one crawl of the simulated site (the default sim, 14
// days ahead: ~1600 events, zero politeness delay, every crawl from an empty snapshot, so every
// listing is an event and about half of them are alerts) three ways, taking turns in one loop:
// no alerts; crawler-side alerts to a healthy receiver; and to a receiver that accepts the
// request and never answers (channel timeout 1h). It reports the median ms per crawl of each, the
// median time of the healthy receiver's hook (claim_ms/crawl: matching and the claim transaction,
// the part of on's cost spent in the crawl itself; the rest is the senders' CPU beside it), the
// machine's median fsync of a 4 KiB write in the same directory (fsync_ms: the claim transaction
// is synced once, its floor), and the median over the rounds of each round's ratios
//
//	on_vs_off     target ≤ 1.3: the synced claim transaction per site crawl is the price
//	hung_vs_on    target ≤ 1.05: a hung channel does not slow the crawl
//
// A round is one crawl of each kind, back to back (the order turns each round), so a ratio
// compares crawls made under the same load; on a shared machine the load drifts within a run,
// and a ratio of the three medians, each over the whole run, moved by ±15 % with it.
//
// After a crawl with alerts its service sends what it claimed before the next crawl begins, and
// the heap is collected before each crawl (both outside the time measured): a crawl is measured
// with the senders of its own claims beside it, never with the previous one's still sending or
// its garbage still to mark.
func BenchmarkCrawlAlerts(b *testing.B) {
	benchCrawlAlerts(b, true)
}

// BenchmarkCrawlAlertsPolite is BenchmarkCrawlAlerts with the sites' shipped politeness (100 ms
// between requests, up to 50 ms more at random): what alerts cost a crawl as it runs in
// production (target on_vs_off ≤ 1.02).
func BenchmarkCrawlAlertsPolite(b *testing.B) {
	benchCrawlAlerts(b, false)
}

func benchCrawlAlerts(b *testing.B, noDelay bool) {
	clock := newSimClock(time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST))
	srv := httptest.NewServer(sitesim.New(sitesim.Config{Seed: 42, Now: clock.Now}))
	b.Cleanup(srv.Close)
	sites := benchSites(b, srv.URL, noDelay)
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	b.Cleanup(healthy.Close)
	stop := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	b.Cleanup(hung.Close)
	b.Cleanup(func() { close(stop) })
	onAlerts := benchAlerts(b, benchWatchesFile(b, healthy.URL, true))
	claims := &durationAlerts{next: onAlerts.hook}
	hooks := []crawler.Alerts{nil, claims, benchAlerts(b, benchWatchesFile(b, hung.URL, true)).hook}
	const off, on, hang = 0, 1, 2
	dir := b.TempDir()
	crawl := func(a crawler.Alerts) time.Duration {
		state, err := os.MkdirTemp(dir, "state-")
		if err != nil {
			b.Fatal(err)
		}
		r := &crawler.Runner{Sites: sites, State: crawler.StateDir{Dir: state}, Logger: slog.New(slog.DiscardHandler), Alerts: a, Now: clock.Now}
		runtime.GC() // each crawl starts from a collected heap, not with the previous one's garbage to mark
		t0 := time.Now()
		sum, err := r.Run(b.Context())
		d := time.Since(t0)
		if sum.Events() == 0 {
			b.Fatalf("crawl: %v, no events", err)
		}
		if a == claims {
			if left, err := onAlerts.svc.Wait(b.Context(), time.Minute); err != nil || left > 0 {
				b.Fatalf("the healthy channel's alerts: %d unsent after a minute (%v)", left, err)
			}
		}
		return d
	}
	for _, a := range hooks { // warm up
		crawl(a)
	}
	var ms [3][]float64
	var claimMS, onOff, hungOn []float64
	i := 0
	for b.Loop() {
		var round [3]float64
		for k := range hooks {
			h := (i + k) % len(hooks)
			round[h] = crawl(hooks[h]).Seconds() * 1000
			ms[h] = append(ms[h], round[h])
			if h == on {
				claimMS = append(claimMS, claims.last.Seconds()*1000)
			}
		}
		onOff, hungOn = append(onOff, round[on]/round[off]), append(hungOn, round[hang]/round[on])
		i++
		clock.Add(time.Second) // crawl ids have second resolution
	}
	b.ReportMetric(benchMedian(ms[off]), "off_ms/crawl")
	b.ReportMetric(benchMedian(ms[on]), "on_ms/crawl")
	b.ReportMetric(benchMedian(ms[hang]), "hung_ms/crawl")
	b.ReportMetric(benchMedian(claimMS), "claim_ms/crawl")
	b.ReportMetric(fsyncMS(b, dir), "fsync_ms")
	b.ReportMetric(benchMedian(onOff), "on_vs_off")
	b.ReportMetric(benchMedian(hungOn), "hung_vs_on")
}

// fsyncMS is the median time of writing 4 KiB to a file in dir and fsyncing it, 50 times.
func fsyncMS(b *testing.B, dir string) float64 {
	f, err := os.CreateTemp(dir, "fsync-")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	page := make([]byte, 4096)
	var ms []float64
	for range 50 {
		if _, err := f.Write(page); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
		ms = append(ms, time.Since(t0).Seconds()*1000)
	}
	return benchMedian(ms)
}

// BenchmarkCrawlerAlertLatency is the crawler-side alert latency of an opening: from the Runner's
// call of the alerts hook (the moment the crawl's events exist; the Kafka path's counterpart is
// the Publish call of BenchmarkNotifyLatency) to the request reaching a local webhook. Each
// iteration opens one tee time on a local site and crawls it, after the previous alert arrived.
func BenchmarkCrawlerAlertLatency(b *testing.B) {
	var open atomic.Int64
	st := teePage(b, func() []teeRow {
		rows := make([]teeRow, open.Load())
		for i := range rows {
			rows[i] = teeRow{Date: fmt.Sprintf("12/%02d", 10+i/100%18), Time: fmt.Sprintf("%02d:%02d", 5+i%100/6, i%6*10), Price: 120000}
		}
		return rows
	})
	arrived := make(chan time.Time, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, _ *http.Request) { arrived <- time.Now() }))
	b.Cleanup(hook.Close)
	a := benchAlerts(b, benchWatchesFile(b, hook.URL, false))
	timed := &timedAlerts{next: a.hook}
	clock := newSimClock(time.Now()) // the events must not be stale by the real clock at send time
	sites, err := site.LoadSites(teeSitesFile(b, st.URL))
	if err != nil {
		b.Fatal(err)
	}
	r := &crawler.Runner{Sites: sites, State: crawler.StateDir{Dir: b.TempDir()}, Logger: slog.New(slog.DiscardHandler),
		Alerts: timed, Now: clock.Now}
	var lat []float64
	for b.Loop() {
		open.Add(1)
		clock.Add(time.Minute)
		if _, err := r.Run(b.Context()); err != nil {
			b.Fatal(err)
		}
		select {
		case t := <-arrived:
			lat = append(lat, t.Sub(timed.at.Load().(time.Time)).Seconds()*1000)
		case <-time.After(30 * time.Second):
			b.Fatal("no alert within 30s")
		}
	}
	slices.Sort(lat)
	b.ReportMetric(lat[len(lat)/2], "p50_ms")
	b.ReportMetric(lat[min(len(lat)-1, len(lat)*99/100)], "p99_ms")
	b.ReportMetric(float64(len(lat)), "openings")
}

// durationAlerts records how long the hook's last call took.
type durationAlerts struct {
	next crawler.Alerts
	last time.Duration // the crawls of one benchmark run one after another
}

func (d *durationAlerts) Claim(ctx context.Context, c crawler.AlertCrawl) error {
	t0 := time.Now()
	err := d.next.Claim(ctx, c)
	d.last = time.Since(t0)
	return err
}

// timedAlerts records when the hook was last called.
type timedAlerts struct {
	next crawler.Alerts
	at   atomic.Value // time.Time
}

func (t *timedAlerts) Claim(ctx context.Context, c crawler.AlertCrawl) error {
	t.at.Store(time.Now())
	return t.next.Claim(ctx, c)
}

// benchSimSites is the HTML site of compose/dev/sites.yaml against base, 14 days ahead, no delay.
func benchSimSites(b *testing.B, base string) []*site.Site { return benchSites(b, base, true) }

// benchSites is the HTML site of compose/dev/sites.yaml against base, 14 days ahead, with its
// shipped politeness or none (noDelay).
func benchSites(b *testing.B, base string, noDelay bool) []*site.Site {
	raw, err := os.ReadFile("../../compose/dev/sites.yaml")
	if err != nil {
		b.Fatal(err)
	}
	s := strings.ReplaceAll(string(raw), "http://"+sitesim.DefaultAddr, base)
	s = strings.ReplaceAll(s, `allowed_domains: ["127.0.0.1"]`, "")
	if noDelay {
		s = strings.ReplaceAll(s, "      delay: 100ms\n      random_delay: 50ms\n", "      no_delay: true\n")
	}
	s, _, _ = strings.Cut(s, "\n\n  - name: sim-api-get")
	sites, err := site.LoadSites(testkit.WriteTemp(b, "sites.yaml", s))
	if err != nil {
		b.Fatal(err)
	}
	return sites
}

func benchMedian(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// captureAlerts keeps the last site crawl the hook was called with.
type captureAlerts struct{ last crawler.AlertCrawl }

func (c *captureAlerts) Claim(_ context.Context, ac crawler.AlertCrawl) error {
	c.last = ac
	return nil
}

// BenchmarkCrawlAlertsHook is the alerts hook alone on BenchmarkCrawlAlerts's first crawl of the
// simulated site (~1600 events, every open listing the backlog of both watches), each iteration
// a fresh id epoch and first-seen time so that every claim is new, into one growing alerts.db; the receiver never
// answers, so no sender runs beside it. claims/crawl is how many claims one call makes.
func BenchmarkCrawlAlertsHook(b *testing.B) {
	clock := newSimClock(time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST))
	srv := httptest.NewServer(sitesim.New(sitesim.Config{Seed: 42, Now: clock.Now}))
	b.Cleanup(srv.Close)
	stop := make(chan struct{})
	hung := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	b.Cleanup(hung.Close)
	b.Cleanup(func() { close(stop) })
	capture := &captureAlerts{}
	r := &crawler.Runner{Sites: benchSimSites(b, srv.URL), State: crawler.StateDir{Dir: b.TempDir()},
		Logger: slog.New(slog.DiscardHandler), Alerts: capture, Now: clock.Now}
	if _, err := r.Run(b.Context()); err != nil {
		b.Fatal(err)
	}
	c := capture.last
	if !c.First || len(c.Events) == 0 {
		b.Fatalf("captured crawl: first %v, %d events; want a first crawl with events", c.First, len(c.Events))
	}
	a := benchAlerts(b, benchWatchesFile(b, hung.URL, true))
	epoch := c.Next.Epoch
	i := 0
	for b.Loop() {
		c.Next.Epoch, c.CrawlID = fmt.Sprint(epoch, "-", i), fmt.Sprint(c.CrawlID, "-", i)
		for k, e := range c.Next.Listings { // a later lifetime: the backlog claims it again
			e.FirstSeen = e.FirstSeen.Add(time.Second)
			c.Next.Listings[k] = e
		}
		if err := a.hook.Claim(b.Context(), c); err != nil {
			b.Fatal(err)
		}
		i++
	}
	n, err := a.store.List(b.Context(), notify.Filter{Limit: 1_000_000})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(n))/float64(i), "claims/crawl")
}
