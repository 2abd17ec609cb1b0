package main

// The freshness benchmark of #51 (make bench): how soon a cancellation reaches the golfer, how
// many of them do, how many messages announce a slot nobody could book, and at how many requests,
// for two configurations side by side. Everything runs in one synctest bubble: its clock is the
// one clock that the schedule, the politeness delays, the simulator's rebooking and the receiver
// read, and it advances only when every goroutine waits, so a simulated hour takes seconds and no
// real sleep is involved. The alerts are the product's: the crawler's hook into the alert service
// (cmd/internal/alerts) over its SQLite claim store, the confirm rule of the service and the
// sender posting to a webhook whose receiver notes each message at the bubble's time. It is a
// test (synctest needs a *testing.T) that runs only with BENCH_FRESHNESS=1 and prints one
// FRESHNESS line per configuration for compose/dev/bench.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/liteclaims"
	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
)

// freshConfig is one configuration of the benchmark.
type freshConfig struct {
	name     string
	schedule string
	watched  bool          // the watches are the demand (watched_every, watched_budget), as crawler run makes them
	every    time.Duration // watched_every
	budget   float64       // watched_budget
	confirm  time.Duration // confirm_after: the alert service sends an opening once a crawl this much later still shows it
}

// freshResult is what one configuration measured over the simulated hour.
type freshResult struct {
	p50, p95          time.Duration // slot opening → message, over the openings open ≥ 2 min that got one while open
	recall            float64       // of those openings, the share alerted while still open
	openings, flicker int           // reopenings of the watched slots in the hour: open ≥ 2 min; under 30 s
	messages, ghosts  int           // messages about openings of the hour; those about a slot gone or open < 30 s
	withheld          int           // alerts the service withheld (the slot closed first; crawler_alerts_withheld_total)
	unmatched         int           // messages about a slot with no reopening (a close the crawler got wrong)
	requestsPerHour   float64       // requests to the one host in the hour
}

const (
	freshSite     = "sim-api-post"
	freshLongOpen = 2 * time.Minute
	freshGhostMin = 30 * time.Second
)

// TestFreshnessBenchmark runs configurations A (everything every 5 minutes, alerts at first
// sighting), B0 (schedule every 20 minutes, the 6 watched page sets every minute, alerts at first
// sighting) and B (B0 with confirm_after 20s) over one simulated hour of a 4-club × 14-date site
// with cancellation waves, and prints each one's figures.
func TestFreshnessBenchmark(t *testing.T) {
	if os.Getenv("BENCH_FRESHNESS") == "" {
		t.Skip("a benchmark: BENCH_FRESHNESS=1 (make bench) runs it")
	}
	configs := []freshConfig{
		{name: "A", schedule: "*/5 * * * *"},
		{name: "B0", schedule: "*/20 * * * *", watched: true, every: time.Minute, budget: 3},
		{name: "B", schedule: "*/20 * * * *", watched: true, every: time.Minute, budget: 3, confirm: 20 * time.Second},
	}
	for _, cfg := range configs {
		var r freshResult
		synctest.Test(t, func(t *testing.T) { r = runFreshness(t, cfg) })
		fmt.Printf("FRESHNESS config=%s p50_s=%.1f p95_s=%.1f recall=%.4f openings=%d flickers=%d messages=%d ghosts=%d withheld=%d unmatched=%d requests_per_host_hour=%.0f\n",
			cfg.name, r.p50.Seconds(), r.p95.Seconds(), r.recall, r.openings, r.flicker, r.messages, r.ghosts, r.withheld, r.unmatched, r.requestsPerHour)
	}
}

// countingTransport answers every request from the handler in memory (no socket: a goroutine
// blocked on one would stop the bubble's clock) and notes when each was made.
type countingTransport struct {
	h  http.Handler
	mu sync.Mutex
	at []time.Time
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.at = append(c.at, time.Now())
	c.mu.Unlock()
	rec := httptest.NewRecorder()
	c.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}

func (c *countingTransport) between(from, to time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, at := range c.at {
		if !at.Before(from) && at.Before(to) {
			n++
		}
	}
	return n
}

// freshMessage is one alert as the receiver got it: about the listing of key, at its arrival.
type freshMessage struct {
	key string
	at  time.Time
}

// freshReceiver is the webhook the alert service posts to (its channel's transport: in memory, no
// socket, so that the bubble's clock runs): it notes each match of each message at the bubble's
// time and answers 200. Backlog matches (already open) are not alerts of an opening.
type freshReceiver struct {
	mu       sync.Mutex
	messages []freshMessage
}

func (f *freshReceiver) RoundTrip(r *http.Request) (*http.Response, error) {
	var body struct {
		Matches []struct {
			Source      string `json:"source"`
			CourseName  string `json:"course_name"`
			CoursePart  string `json:"course_part"`
			PlayDate    string `json:"play_date"`
			TeeTime     string `json:"tee_time"`
			AlreadyOpen bool   `json:"already_open"`
		} `json:"matches"`
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, err
	}
	f.mu.Lock()
	for _, m := range body.Matches {
		if !m.AlreadyOpen {
			f.messages = append(f.messages, freshMessage{events.ListingKey(m.Source, m.CourseName, m.CoursePart, m.PlayDate, m.TeeTime), time.Now()})
		}
	}
	f.mu.Unlock()
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("{}")), Header: http.Header{}, Request: r}, nil
}

// freshWatches is the watches file of the golfer: one watch per watched page set (its club, its
// date), posting to the receiver's webhook.
func freshWatches(t *testing.T, watched []crawler.PageSet) *notify.Config {
	t.Helper()
	var b strings.Builder
	b.WriteString("channels:\n  hook: {type: webhook, url: http://receiver.invalid/}\nwatches:\n")
	for i, p := range watched {
		fmt.Fprintf(&b, "  - {name: w%d, sources: [%s], courses_exact: [%q], play_dates: {from: %s, to: %s}, channels: [hook]}\n",
			i, freshSite, p.Course, p.PlayDate, p.PlayDate)
	}
	cfg, err := notify.Parse([]byte(b.String()), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runFreshness runs one configuration inside the bubble: from 15:00 (a whole crawl at start, the
// warm-up) to 17:15 on a Tuesday; the hour measured is 16:00-17:00, the cancellations of the
// day's 17:00 deadline coming before it.
func runFreshness(t *testing.T, cfg freshConfig) freshResult {
	day := time.Date(2000, 1, 4, 0, 0, 0, 0, sitesim.KST) // the bubble's clock starts at 2000-01-01 09:00 KST
	start, from, to, end := day.Add(15*time.Hour), day.Add(16*time.Hour), day.Add(17*time.Hour), day.Add(17*time.Hour+15*time.Minute)
	time.Sleep(time.Until(start))

	sim := sitesim.New(sitesim.Config{Seed: 11, Now: time.Now, DaysAhead: 13, BadRowRate: -1,
		Cancellations: &sitesim.Cancellations{Share: 0.6, FlickersPerHour: 0.5}})
	tr := &countingTransport{h: sim}
	st := freshSiteOf(t, cfg)
	times, err := st.Times(crawler.DefaultSchedule)
	if err != nil {
		t.Fatal(err)
	}
	var watched []crawler.PageSet
	for _, club := range st.Targets[:2] {
		for _, d := range []int{1, 3, 5} { // the dates of today's D-1, D-3 and D-5 deadlines
			watched = append(watched, crawler.PageSet{PlayDate: day.AddDate(0, 0, d).Format("2006-01-02"), Course: site.CleanText(club["name"])})
		}
	}
	dir := t.TempDir()
	store, err := liteclaims.Open(t.Context(), filepath.Join(dir, alertsFile))
	if err != nil {
		t.Fatal(err)
	}
	recv := &freshReceiver{}
	svc, err := alerts.New(store, alerts.Config{Watches: freshWatches(t, watched), Transport: recv, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	r := &crawler.Runner{Sites: []*site.Site{st}, State: crawler.StateDir{Dir: dir}, Logger: slog.New(slog.DiscardHandler),
		Transport: tr, Now: time.Now, Alerts: crawlHook{svc}}
	sched := crawler.SiteSchedule{Sites: r.Sites, Times: []*site.SiteTimes{times}, Logger: slog.New(slog.DiscardHandler), RunAtStart: true,
		Crawl: func(ctx context.Context, jobs []crawler.Job, done func(int, crawler.SiteSummary)) {
			_, _ = r.RunJobs(ctx, jobs, done)
		}}
	if cfg.watched { // as crawler run: the watches in force are the demand, and confirm_after holds where it schedules page sets
		sched.Demand = watchDemand{svc.InForce}
		r.PerSite = map[string]crawler.SiteRun{st.Name: {ConfirmAfter: times.ConfirmAfter()}}
	}
	ran := make(chan error, 1)
	go func() { ran <- sched.Run(ctx) }()
	time.Sleep(time.Until(end))
	cancel()
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	stop, done := context.WithTimeout(context.Background(), time.Minute)
	defer done()
	if err := svc.Stop(stop); err != nil {
		t.Fatal(err)
	}
	r.Unlock()
	if err := store.Close(); err != nil {
		t.Fatal(err)
	}
	res := freshResult{requestsPerHour: float64(tr.between(from, to)) / to.Sub(from).Hours(), withheld: int(svc.Withheld())}
	in := func(l events.Listing) bool {
		return slices.ContainsFunc(watched, func(p crawler.PageSet) bool { return p.Covers(l) })
	}
	truth := map[string][]sitesim.Reopening{}
	for _, tr := range sim.GroundTruth(start, end) {
		l := events.Listing{Source: freshSite, CourseName: tr.Course, CoursePart: tr.Part, PlayDate: tr.PlayDate, TeeTime: tr.TeeTime}
		if in(l) && len(tr.Reopenings) > 0 {
			truth[l.Key()] = tr.Reopenings
		}
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	return res.score(truth, recv.messages, from, to)
}

// score fills in the latencies, the recall and the ghosts: each reopening that began in [from,
// to) against the messages about its slot; a message belongs to the last reopening of its slot
// begun at or before it.
func (res freshResult) score(truth map[string][]sitesim.Reopening, messages []freshMessage, from, to time.Time) freshResult {
	byKey := map[string][]time.Time{}
	for _, m := range messages {
		byKey[m.key] = append(byKey[m.key], m.at)
	}
	var lat []time.Duration
	long := 0
	for key, rs := range truth {
		for _, r := range rs {
			if r.From.Before(from) || !r.From.Before(to) {
				continue
			}
			if r.Lasted() < freshGhostMin && !r.To.IsZero() {
				res.flicker++
			}
			if r.To.IsZero() || r.Lasted() < freshLongOpen {
				continue
			}
			long++
			if i := slices.IndexFunc(byKey[key], func(at time.Time) bool { return !at.Before(r.From) && at.Before(r.To) }); i >= 0 {
				lat = append(lat, byKey[key][i].Sub(r.From))
			}
		}
	}
	for key, ats := range byKey {
		for _, at := range ats {
			var r sitesim.Reopening // the last reopening of the slot begun at or before the message
			for _, x := range truth[key] {
				if !x.From.After(at) {
					r = x
				}
			}
			switch {
			case r.From.IsZero():
				res.unmatched++ // about no reopening: a slot the crawler had closed while it was open
				continue
			case r.From.Before(from) || !r.From.Before(to):
				continue // about an opening outside the hour
			}
			res.messages++
			if !r.To.IsZero() && (!at.Before(r.To) || r.Lasted() < freshGhostMin) {
				res.ghosts++
			}
		}
	}
	res.openings = long
	if long > 0 {
		res.recall = float64(len(lat)) / float64(long)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	res.p50, res.p95 = percentile(lat, 0.50), percentile(lat, 0.95)
	return res
}

// percentile is the nearest-rank q-quantile of sorted d; 0 when empty.
func percentile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[max(0, int(math.Ceil(q*float64(len(d))))-1)]
}

// freshSiteOf is sitesim's sim-api-post site (a JSON POST per club and date) over 4 clubs and 14
// dates with the default politeness (1 s + up to 0.5 s between requests, 2 at a time), timed as
// cfg says.
func freshSiteOf(t *testing.T, cfg freshConfig) *site.Site {
	t.Helper()
	sites, err := site.ParseSites(sitesim.SitesYAML)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(sites, func(s *site.Site) bool { return s.Name == freshSite })
	spec := sites[i].SiteSpec
	func(s *site.SiteSpec) {
		s.DaysAhead = 13
		s.Politeness = site.Politeness{IgnoreRobotsTxt: true}
		s.Schedule = cfg.schedule
		if cfg.watched {
			s.WatchedEvery, s.WatchedBudget = site.Duration(cfg.every), cfg.budget
		}
		ca := site.Duration(cfg.confirm)
		s.ConfirmAfter = &ca
		s.AllowedDomains = nil
		for k := range s.Requests {
			s.Requests[k].URL = strings.Replace(s.Requests[k].URL, "127.0.0.1:8089", "sim.invalid", 1)
		}
	}(&spec)
	st, err := spec.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return st
}
