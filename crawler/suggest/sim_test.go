package suggest

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// simClock is the clock of a simulated week, shared by the site and the crawls.
type simClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *simClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *simClock) Set(t time.Time)     { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *simClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

const (
	simPassword = "suggest-secret"
	simDays     = 4 // the simulator's window
	crawlDays   = 6 // the crawl's: the last two days are sold out (empty answers)
)

var simStart = time.Date(2025, 12, 28, 8, 5, 0, 0, sitesim.KST)

// simServer serves a simulated site on the clock.
func simServer(t *testing.T, clock *simClock) (*sitesim.Site, *httptest.Server) {
	sim := sitesim.New(sitesim.Config{Seed: 2026, Now: clock.Now, DaysAhead: simDays, TeeTimesPerDay: 8, LoginPassword: simPassword})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return sim, srv
}

// fastPoliteness is the politeness both entries crawl the test server with.
func fastPoliteness() site.Politeness {
	return site.Politeness{NoDelay: true, BackoffBase: site.Duration(time.Millisecond), BackoffCap: site.Duration(4 * time.Millisecond),
		RequestTimeout: site.Duration(5 * time.Second), Retries: 1}
}

func testFetcher(t testing.TB) Fetcher {
	return Fetcher{Logger: testkit.Logger(t, slog.LevelError), Politeness: fastPoliteness()}
}

// handWritten is the entry name of compose/dev/sites.yaml pointed at base.
func handWritten(t *testing.T, name, base string) *site.Site {
	t.Helper()
	sites, err := site.LoadSites(filepath.Join("..", "..", "compose", "dev", "sites.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fix := func(u string) string { return strings.Replace(u, "http://"+sitesim.DefaultAddr, base, 1) }
	for _, st := range sites {
		if st.Name != name {
			continue
		}
		s := st.SiteSpec
		s.URLTemplate = fix(s.URLTemplate)
		s.Requests = append([]site.RequestTemplate(nil), s.Requests...)
		for i := range s.Requests {
			s.Requests[i].URL = fix(s.Requests[i].URL)
		}
		if s.Login != nil {
			l := *s.Login
			l.URL = fix(l.URL)
			s.Login = &l
		}
		s.AllowedDomains = nil
		compiled, err := s.Compile()
		if err != nil {
			t.Fatal(err)
		}
		return compiled
	}
	t.Fatalf("no site %s in compose/dev/sites.yaml", name)
	return nil
}

// clubTargets are --target for every club of the simulator.
func clubTargets(sim *sitesim.Site) []site.Target {
	var out []site.Target
	for _, c := range sim.Clubs() {
		out = append(out, site.Target{"id": c.ID, "name": c.Name})
	}
	return out
}

// runSuggest runs Suggest on curl text, failing the test on an error; it returns the
// suggestion and its reasoning.
func runSuggest(t testing.TB, curl string, o Options) (Suggestion, string) {
	t.Helper()
	sg, stderr, err := trySuggest(t, curl, o)
	if err != nil {
		t.Fatalf("Suggest: %v", err)
	}
	return sg, stderr
}

// trySuggest is runSuggest returning Suggest's error (o.Fetcher's Transport and Getenv, when set, are kept).
func trySuggest(t testing.TB, curl string, o Options) (Suggestion, string, error) {
	t.Helper()
	req, err := ParseCurl(curl)
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	o.Request = req
	transport, getenv := o.Fetcher.Transport, o.Fetcher.Getenv
	o.Fetcher = testFetcher(t)
	o.Fetcher.Transport, o.Fetcher.Getenv = transport, getenv
	o.Say = func(format string, args ...any) { fmt.Fprintf(&log, format+"\n", args...) }
	sg, err := Suggest(t.Context(), o)
	t.Logf("stderr:\n%s", log.String())
	t.Logf("stdout:\n%s", sg.YAML)
	return sg, log.String(), err
}

// crawlWeek crawls both entries every 4 hours over a simulated week and returns each one's
// events, without what names the entry (event and crawl ids, source, listing key), in order.
func crawlWeek(t *testing.T, clock *simClock, getenv func(string) string, entries ...*site.Site) [][]string {
	t.Helper()
	evs := crawlWeekEvents(t, clock, getenv, entries...)
	per := make([][]string, len(evs))
	for i, es := range evs {
		for _, e := range es {
			per[i] = append(per[i], eventText(e))
		}
	}
	return per
}

// crawlTimes are the instants crawlWeek crawls at: every 4 hours of the week from simStart.
func crawlTimes() []time.Time {
	var out []time.Time
	for at := simStart; at.Before(simStart.AddDate(0, 0, 7)); at = at.Add(4 * time.Hour) {
		out = append(out, at)
	}
	return out
}

// crawlWeekEvents is crawlWeek with each entry's events as they were written.
func crawlWeekEvents(t testing.TB, clock *simClock, getenv func(string) string, entries ...*site.Site) [][]events.Event {
	t.Helper()
	per, err := tryCrawlWeek(t, clock, getenv, entries...)
	if err != nil {
		t.Fatal(err)
	}
	return per
}

// tryCrawlWeek is crawlWeekEvents returning, rather than failing on, the first crawl that was
// not complete.
func tryCrawlWeek(t testing.TB, clock *simClock, getenv func(string) string, entries ...*site.Site) ([][]events.Event, error) {
	t.Helper()
	sites := make([]*site.Site, len(entries))
	for i, e := range entries {
		s := e.SiteSpec
		s.Politeness = fastPoliteness()
		s.Name = fmt.Sprintf("entry-%d", i)
		s.DaysAhead = crawlDays
		var err error
		if sites[i], err = s.Compile(); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "events.jsonl")
	out, err := crawler.OpenEventLog(path)
	if err != nil {
		t.Fatal(err)
	}
	r := &crawler.Runner{Sites: sites, State: crawler.StateDir{Dir: t.TempDir()}, Logger: testkit.Logger(t, slog.LevelError),
		EventsOut: out, Now: clock.Now, Getenv: getenv}
	var incomplete error
	for _, at := range crawlTimes() {
		clock.Set(at)
		sum, _ := r.Run(t.Context()) // an incomplete site is in sum; its error says no more
		for _, s := range sum.Sites {
			if !s.Complete && incomplete == nil {
				why := string(s.Incomplete)
				if len(s.FailedPages) > 0 {
					why += fmt.Sprintf(": %d page(s) failed, first %s", len(s.FailedPages), s.FailedPages[0])
				}
				if s.Err != nil {
					why += fmt.Sprintf(" (%v)", s.Err)
				}
				incomplete = fmt.Errorf("the crawl at %s was incomplete (%s)", at.Format("2006-01-02 15:04"), why)
			}
		}
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	if incomplete != nil {
		return nil, incomplete
	}
	per := make([][]events.Event, len(sites))
	for _, e := range eventstest.ReadEvents(t, path) {
		i := 0
		if _, err := fmt.Sscanf(e.Source, "entry-%d", &i); err != nil {
			t.Fatalf("event of source %q", e.Source)
		}
		per[i] = append(per[i], e)
	}
	return per, nil
}

func eventText(e events.Event) string {
	e.EventID, e.CrawlID, e.Source, e.ListingKey = [16]byte{}, "", "", ""
	b, _ := json.Marshal(e)
	return string(b)
}

// sameEvents fails the test unless both entries gave the same events, and some of every kind.
func sameEvents(t *testing.T, per [][]string) {
	t.Helper()
	hand, sugg := per[0], per[1]
	kinds := map[string]int{}
	for _, e := range hand {
		var ev events.Event
		_ = json.Unmarshal([]byte(e), &ev)
		kinds[string(ev.EventType)]++
	}
	t.Logf("hand-written: %d events %v; suggested: %d", len(hand), kinds, len(sugg))
	if len(kinds) < 3 {
		t.Errorf("the week lacks opens, changes or closes: %v", kinds)
	}
	a, b := append([]string(nil), hand...), append([]string(nil), sugg...)
	sort.Strings(a)
	sort.Strings(b)
	if strings.Join(a, "\n") == strings.Join(b, "\n") {
		return
	}
	d1, d2 := onlyIn(a, b), onlyIn(b, a)
	t.Errorf("the entries' events differ: %d only from the hand-written one, %d only from the suggested one;\nfirst hand-written only: %v\nfirst suggested only: %v",
		len(d1), len(d2), first(d1), first(d2))
}

func first(s []string) []string { return s[:min(len(s), 3)] }

// onlyIn is x without y, counting repeats (what x has more of than y).
func onlyIn(x, y []string) []string {
	set := map[string]int{}
	for _, v := range y {
		set[v]++
	}
	var out []string
	for _, v := range x {
		if set[v] > 0 {
			set[v]--
			continue
		}
		out = append(out, v)
	}
	return out
}

var noEnv = func(string) string { return "" }

func TestSuggestedEntryCrawlsLikeTheHandWrittenOne(t *testing.T) {
	day := simStart.AddDate(0, 0, 1)
	d8, dISO := day.Format("20060102"), day.Format("2006-01-02")
	for _, tc := range []struct {
		name, hand string
		curl       func(base string) string
		noTargets  bool
	}{
		{name: "json get", hand: "sim-api-get", curl: func(base string) string {
			return "curl '" + base + "/api/getTeeTimeList?club=138&roundDay=" + dISO + "' \\\n  -H 'accept: application/json, text/plain, */*' \\\n" +
				"  -H 'accept-language: ko-KR,ko;q=0.9' \\\n  -b '_ga=GA1.1.123; JSESSIONID=0A1B2C' \\\n  -H 'user-agent: Mozilla/5.0 (X11; Linux x86_64)'"
		}},
		{name: "json post", hand: "sim-api-post", curl: func(base string) string {
			return "curl '" + base + "/api/v2/teetime/list' -H 'User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0' " +
				"-H 'Accept: application/json' -H 'Content-Type: application/json' -H 'X-CSRF-TOKEN: 8f1e' --data-raw '{\"clubId\":\"138\",\"date\":\"" + d8 + "\"}'"
		}},
		{name: "html list with pages", hand: "sim-golf", noTargets: true, curl: func(base string) string {
			return "curl '" + base + "/tee?date=" + d8 + "&page=1' -H 'Accept: text/html,application/xhtml+xml' -H 'Upgrade-Insecure-Requests: 1'"
		}},
		{name: "one club per page", hand: "sim-club-page", curl: func(base string) string {
			return "curl '" + base + "/list.asp?club_code=138&book_date=" + d8 + "' -H 'Referer: " + base + "/main.asp'"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &simClock{t: simStart}
			sim, srv := simServer(t, clock)
			o := Options{Date: day, DaysAhead: crawlDays, ProbeEmpty: true}
			if !tc.noTargets {
				o.Targets = clubTargets(sim)
			}
			sg, _ := runSuggest(t, tc.curl(srv.URL), o)
			if !sg.Complete {
				t.Fatalf("the suggestion is partial: missing %v, login %v", sg.Missing, sg.Login)
			}
			if strings.Contains(string(sg.YAML), "JSESSIONID") || strings.Contains(string(sg.YAML), "8f1e") {
				t.Errorf("a credential reached the output:\n%s", sg.YAML)
			}
			sameEvents(t, crawlWeek(t, clock, noEnv, handWritten(t, tc.hand, srv.URL), sg.Site))
		})
	}
}

// TestSuggestedLoginEntry: the golfer's copied request carries the session cookie of their
// browser; without it the site answers with its login page. The suggestion says so, exits 2 with
// the login block to fill in (here: its two variables set), and then crawls like the hand-written
// entry.
func TestSuggestedLoginEntry(t *testing.T) {
	day := simStart.AddDate(0, 0, 1)
	clock := &simClock{t: simStart}
	sim, srv := simServer(t, clock)
	resp, err := http.PostForm(srv.URL+sitesim.PathLogin, map[string][]string{"user_id": {sitesim.DefaultUser}, "user_pw": {simPassword}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie string
	for _, c := range resp.Cookies() {
		cookie = c.Name + "=" + c.Value
	}
	curl := "curl '" + srv.URL + "/club/ajax/teeList' \\\n  -H 'accept: */*' \\\n  -H 'content-type: application/x-www-form-urlencoded; charset=UTF-8' \\\n" +
		"  -b '" + cookie + "; _ga=GA1.1.9' \\\n  -H 'x-requested-with: XMLHttpRequest' \\\n  --data-raw 'golfResDate=" + day.Format("20060102") + "&courseId=138'"
	sg, stderr := runSuggest(t, curl, Options{Date: day, DaysAhead: crawlDays, ProbeEmpty: true, Targets: clubTargets(sim), Name: "club"})
	if sg.Complete || !sg.Login {
		t.Fatalf("complete %v login %v; want a partial entry with a login to fill in", sg.Complete, sg.Login)
	}
	if !strings.Contains(stderr, "login page") || strings.Contains(string(sg.YAML), cookie) {
		t.Errorf("stderr does not say login page, or the cookie reached the output")
	}
	getenv := func(k string) string {
		return map[string]string{"SIM_CLUB_USER": sitesim.DefaultUser, "SIM_CLUB_PASSWORD": simPassword,
			"CLUB_USER": sitesim.DefaultUser, "CLUB_PASSWORD": simPassword}[k]
	}
	sameEvents(t, crawlWeek(t, clock, getenv, handWritten(t, "sim-club-login", srv.URL), sg.Site))
}
