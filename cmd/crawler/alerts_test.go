package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
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
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// simClock is the simulated time shared by a sim and a runner.
type simClock struct{ ns atomic.Int64 }

func newSimClock(t time.Time) *simClock { c := &simClock{}; c.ns.Store(t.UnixNano()); return c }
func (c *simClock) Now() time.Time      { return time.Unix(0, c.ns.Load()).In(sitesim.KST) }
func (c *simClock) Add(d time.Duration) { c.ns.Add(int64(d)) }

// simSites is the HTML site of compose/dev/sites.yaml against base, days days ahead, no retries.
func simSites(t *testing.T, base string, days int) []*site.Site {
	t.Helper()
	s := strings.Replace(readFile(t, sitesFile(t, base)), "days_ahead: 1", fmt.Sprintf("days_ahead: %d", days), 1)
	sites, err := site.LoadSites(testkit.WriteTemp(t, "sites.yaml", s))
	if err != nil {
		t.Fatal(err)
	}
	return sites
}

// alertsRig is a Runner over a simulated site with the crawler-side alerts wired as `crawler
// run --watches` wires them, on a simulated clock.
type alertsRig struct {
	clock   *simClock
	runner  *crawler.Runner
	alerts  *alertsRuntime
	watches *notify.Config
	events  string // the events file
	metrics *crawlerMetrics
}

func newAlertsRig(t *testing.T, sim sitesim.Config, days int, watchesPath string) *alertsRig {
	t.Helper()
	clock := newSimClock(time.Now())
	sim.Now, sim.DaysAhead = clock.Now, days
	srv := httptest.NewServer(sitesim.New(sim))
	t.Cleanup(srv.Close)
	watches, err := notify.LoadFile(watchesPath, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logger := testkit.Logger(t, slog.LevelWarn)
	m := newCrawlerMetrics(nil)
	a, err := openAlerts(t.Context(), cli.Env{Logger: logger}, dir, alertsConfig{Config: alerts.Config{MaxAge: 365 * 24 * time.Hour,
		MaxAttempts: 20, RetryBase: time.Millisecond, Retention: 365 * 24 * time.Hour, Now: clock.Now}}, watches, m)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.svc.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := a.close(0); err != nil {
			t.Error(err)
		}
	})
	out, err := crawler.OpenEventLog(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
	r := &crawler.Runner{Sites: simSites(t, srv.URL, days), State: crawler.StateDir{Dir: dir}, Logger: logger,
		Alerts: a.hook, EventsOut: out, Metrics: m, Now: clock.Now}
	return &alertsRig{clock: clock, runner: r, alerts: a, watches: watches, events: out.Path(), metrics: m}
}

// crawl runs one crawl and waits for its alerts to be sent.
func (g *alertsRig) crawl(t *testing.T) {
	t.Helper()
	if _, err := g.runner.Run(t.Context()); err != nil {
		t.Logf("crawl at %s: %v", g.clock.Now().Format(time.DateTime), err) // the sim's bad rows make some crawls incomplete
	}
	left, err := g.alerts.svc.Wait(t.Context(), time.Minute)
	if err != nil || left != 0 {
		t.Fatalf("after the crawl at %s: %d alerts unsent after a minute (%v)", g.clock.Now().Format(time.DateTime), left, err)
	}
}

// expected returns, per channel, the "watch event_id" of every match of the events file, and
// the number of messages they make: one per watch, channel and site crawl (of at most
// notify.MaxEventsPerMessage matches).
func (g *alertsRig) expected(t *testing.T) (map[string]map[string]bool, map[string]int) {
	out := map[string]map[string]bool{}
	groups := map[string]int{}
	for _, e := range eventstest.ReadEvents(t, g.events) {
		for _, w := range g.watches.MatchAll(&e, e.OccurredAt) {
			for _, ch := range w.Channels {
				if out[ch] == nil {
					out[ch] = map[string]bool{}
				}
				if k := w.Name + " " + e.EventID.String(); !out[ch][k] {
					out[ch][k] = true
					groups[ch+" "+w.Name+" "+e.CrawlID]++
				}
			}
		}
	}
	messages := map[string]int{}
	for k, n := range groups {
		ch, _, _ := strings.Cut(k, " ")
		messages[ch] += (n + notify.MaxEventsPerMessage - 1) / notify.MaxEventsPerMessage
	}
	return out, messages
}

// TestAlertsWeekDeliveredOncePerChannel: a week of hourly crawls of the simulator with the
// crawler-side alerts, no Kafka: every match of the events file reaches each of its channels
// exactly once, the flaky one (500 every 5th request, a 429 with Retry-After) included, and one
// site crawl's matches of one watch go out as one message.
func TestAlertsWeekDeliveredOncePerChannel(t *testing.T) {
	t.Parallel()
	flaky := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) bool {
		switch {
		case n == 3:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case n%5 == 0:
			http.Error(w, "on purpose", http.StatusInternalServerError)
		default:
			return false
		}
		return true
	})
	steady := newReceiver(t, nil)
	wf := watchesFile(t, map[string]string{"flaky": flaky.srv.URL, "steady": steady.srv.URL},
		"  - name: cheap\n    max_price_krw: 170000\n    channels: [flaky, steady]\n"+
			"  - name: weekend-morning\n    weekdays: [sat, sun]\n    tee_time: {from: \"05:00\", to: \"08:00\"}\n    channels: [steady]\n")
	g := newAlertsRig(t, sitesim.Config{Seed: 11, TeeTimesPerDay: 8}, 3, wf)
	for range 7 * 24 {
		g.crawl(t)
		g.clock.Add(time.Hour)
	}
	want, messages := g.expected(t)
	t.Logf("%d events", len(eventstest.ReadEvents(t, g.events)))
	if len(want["flaky"]) < 50 || len(want["steady"]) <= len(want["flaky"]) {
		t.Fatalf("too few matches to mean anything: %d flaky, %d steady", len(want["flaky"]), len(want["steady"]))
	}
	for ch, rc := range map[string]*receiver{"flaky": flaky, "steady": steady} {
		got := rc.delivered()
		for m := range want[ch] {
			if got[m] != 1 {
				t.Errorf("%s: match %s delivered %d times", ch, m, got[m])
			}
		}
		for m, n := range got {
			if !want[ch][m] {
				t.Errorf("%s: %s delivered %d times, not a match", ch, m, n)
			}
		}
		requests, accepted := rc.count()
		t.Logf("%s: %d matches in %d messages (%d requests)", ch, len(got), accepted, requests)
		if accepted != messages[ch] {
			t.Errorf("%s: %d messages accepted, want %d: one per watch and site crawl", ch, accepted, messages[ch])
		}
	}
	if rows, err := g.alerts.store.List(t.Context(), notify.Filter{Limit: 1_000_000}); err != nil || len(rows) != len(want["flaky"])+len(want["steady"]) {
		t.Errorf("%d claims (%v), want one per match and channel: %d", len(rows), err, len(want["flaky"])+len(want["steady"]))
	}
}

// TestHungChannelDoesNotHoldUpTheCrawl: one channel's receiver takes every request and never
// answers (channel timeout 1h); the other answers at once. Crawl after crawl completes and the
// healthy channel gets every match of each crawl while the hung channel's first request is still
// without an answer: the crawl and the other channel never wait for it. /healthz's alerts
// section shows the hung request.
func TestHungChannelDoesNotHoldUpTheCrawl(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var hungRequests, hungAnswered atomic.Int64
	hung := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) bool {
		hungRequests.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
		hungAnswered.Add(1)
		return true
	})
	t.Cleanup(func() { close(release) }) // before the receiver's Close (cleanups run last in, first out)
	steady := newReceiver(t, nil)
	wf := testkit.WriteTemp(t, "watches.yaml", "channels:\n"+
		"  hung: {type: webhook, url: \""+hung.srv.URL+"/alerts\", timeout: 1h}\n"+
		"  steady: {type: webhook, url: \""+steady.srv.URL+"/alerts\"}\n"+
		"watches:\n  - name: all\n    channels: [hung, steady]\n")
	g := newAlertsRig(t, sitesim.Config{Seed: 5, TeeTimesPerDay: 4, BookingSpeed: 4}, 2, wf)
	for i := range 5 {
		if _, err := g.runner.Run(t.Context()); err != nil {
			t.Logf("crawl %d: %v", i, err)
		}
		want, _ := g.expected(t)
		testkit.WaitFor(t, time.Minute, fmt.Sprintf("the steady channel got crawl %d's matches", i), func() bool {
			got := steady.delivered()
			for m := range want["steady"] {
				if got[m] == 0 {
					return false
				}
			}
			return true
		})
		if hungRequests.Load() != 1 || hungAnswered.Load() != 0 {
			t.Fatalf("crawl %d: the hung channel got %d requests, %d answered; want its first still hanging", i, hungRequests.Load(), hungAnswered.Load())
		}
		g.clock.Add(time.Hour)
	}
	v, _ := g.alerts.svc.Health()[0].Check()
	if st := v.(map[string]any)["channels"].(map[string]alerts.ChannelState)["hung"]; st.Requests != 1 || st.Failures != 0 {
		t.Errorf("health of the hung channel: %+v", st)
	}
}
