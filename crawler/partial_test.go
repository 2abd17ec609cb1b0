package crawler

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
)

// clubDateSite is the simulator's sim-api-post site (a POST per club and date; the club's name
// and the date come from the request, so each (club, date) is a page set) at base, with clubs
// clubs and days+1 dates, and no politeness delay.
func clubDateSite(t testing.TB, base string, clubs, days int) *site.Site {
	t.Helper()
	sites, err := site.ParseSites(sitesim.SitesYAML)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sites {
		if s.Name != "sim-api-post" {
			continue
		}
		return fast(t, recompiled(t, s, func(spec *site.SiteSpec) {
			spec.Targets = spec.Targets[:clubs]
			spec.DaysAhead = days
			for i := range spec.Requests {
				spec.Requests[i].URL = base + "/api/v2/teetime/list"
			}
			spec.AllowedDomains = nil
		}))
	}
	t.Fatal("no sim-api-post in sitesim's sites")
	return nil
}

// clubDateSim serves a simulator of the first clubs courses, its clock stopped at 05:00 on a
// Monday (simNow), and returns clubDateSite over it.
func clubDateSim(t *testing.T, clubs, days int) (st *site.Site, simNow time.Time) {
	t.Helper()
	simNow = time.Date(2026, 3, 9, 5, 0, 0, 0, sitesim.KST)
	sim := sitesim.New(sitesim.Config{Seed: 3, Now: func() time.Time { return simNow }, Courses: sitesim.DefaultCourses()[:clubs], BadRowRate: -1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return clubDateSite(t, srv.URL, clubs, days), simNow
}

// TestPartialCrawlsCloseNothingOutside (#51 item 2): a site of 3 clubs × 14 dates, crawled whole
// once, then 10 times only its 6 watched page sets, the site unchanged: the partial crawls close
// nothing (their page sets show the same listings, the other 36 are not fetched), and every
// listing outside them stays open and unmissed. Without Crawl.Fetched the partial crawls
// collapse against the whole site's count, and once the collapse is believed (the 3rd) every
// listing outside the 6 page sets closes.
func TestPartialCrawlsCloseNothingOutside(t *testing.T) {
	t.Parallel()
	st, simNow := clubDateSim(t, 3, 13)
	now := simNow
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: t.TempDir()}, Logger: slog.New(slog.DiscardHandler),
		Now: func() time.Time { return now }}
	written := eventsOut(t, r)
	run := func(sets []PageSet) SiteSummary {
		t.Helper()
		sum, _ := r.RunJobs(context.Background(), []Job{{Site: st, Sets: sets}}, nil)
		now = now.Add(time.Minute)
		if err := sum.Sites[0].Err; err != nil {
			t.Fatalf("crawl at %s: %v", now, err)
		}
		return sum.Sites[0]
	}
	first := run(nil)
	if first.Pages != 42 || !first.Complete {
		t.Fatalf("the whole crawl: %d pages, complete %v; want 42, complete", first.Pages, first.Complete)
	}
	var watched []PageSet
	for _, club := range st.Targets[:2] {
		for _, d := range []int{1, 3, 5} {
			watched = append(watched, PageSet{PlayDate: simNow.AddDate(0, 0, d).Format("2006-01-02"), Course: site.CleanText(club["name"])})
		}
	}
	before := len(written())
	var incomplete []string
	for i := range 10 {
		if s := run(watched); s.Pages != 6 || !s.Complete {
			incomplete = append(incomplete, fmt.Sprintf("crawl %d: %d pages, %s", i+1, s.Pages, s.Incomplete))
		}
	}
	evs := written()[before:]
	if n := closes(evs); n != 0 || len(evs) != 0 {
		t.Fatalf("the 10 partial crawls made %d events, %d of them closes; want none (incomplete: %v)", len(evs), n, incomplete)
	}
	if len(incomplete) > 0 {
		t.Fatalf("partial crawls not complete with 6 pages: %v", incomplete)
	}
	snap, err := r.State.Load(st.Name)
	if err != nil {
		t.Fatal(err)
	}
	in := covered(watched)
	outside := 0
	for _, e := range snap.Listings {
		if in(e.Listing) {
			continue
		}
		outside++
		if !e.Open() || e.Misses != 0 || e.Suspect != 0 {
			t.Fatalf("%s outside the watched page sets: %+v, want open and unmissed", e.Listing.Key(), e)
		}
	}
	if outside < 100 || snap.LastCompleteSeen != first.Listings {
		t.Fatalf("%d listings outside, last complete count %d (first crawl %d)", outside, snap.LastCompleteSeen, first.Listings)
	}
}

// alertCrawls is an Alerts hook that keeps every AlertCrawl.
type alertCrawls struct {
	mu     sync.Mutex
	crawls []AlertCrawl
}

func (a *alertCrawls) Claim(_ context.Context, c AlertCrawl) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.crawls = append(a.crawls, c)
	return nil
}

// TestAlertCrawlCovered (#51 item 3, the crawler's side of confirm): the alerts hook learns when
// the crawl looked, the site's confirm_after, and which listings it saw completely: a partial
// crawl covers the listings of its page sets only.
func TestAlertCrawlCovered(t *testing.T) {
	t.Parallel()
	st, simNow := clubDateSim(t, 2, 2)
	rec := &alertCrawls{}
	now := simNow
	r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: t.TempDir()}, Alerts: rec, Logger: slog.New(slog.DiscardHandler),
		Now: func() time.Time { return now }, PerSite: map[string]SiteRun{st.Name: {ConfirmAfter: 20 * time.Second}}}
	set := PageSet{PlayDate: "2026-03-10", Course: site.CleanText(st.Targets[0]["name"])}
	for _, sets := range [][]PageSet{nil, {set}} {
		if _, err := r.RunJobs(context.Background(), []Job{{Site: st, Sets: sets}}, nil); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Minute)
	}
	in := events.Listing{CourseName: set.Course, PlayDate: set.PlayDate}
	out := events.Listing{CourseName: set.Course, PlayDate: "2026-03-11"}
	for i, c := range rec.crawls {
		if !c.At.Equal(simNow.Add(time.Duration(i)*time.Minute)) || c.ConfirmAfter != 20*time.Second {
			t.Errorf("crawl %d: at %s, confirm_after %s", i, c.At, c.ConfirmAfter)
		}
		if !c.Covered(in) || c.Covered(out) != (i == 0) {
			t.Errorf("crawl %d (partial %v): covers %s %v, %s %v", i, i == 1, in.PlayDate, c.Covered(in), out.PlayDate, c.Covered(out))
		}
	}
	if len(rec.crawls) != 2 {
		t.Fatalf("%d crawls reached the hook, want 2", len(rec.crawls))
	}
}
