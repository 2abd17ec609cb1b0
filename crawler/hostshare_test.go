package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// hangingHost is one test server (one host: 127.0.0.1 and its port) that serves two sites:
// /hang, whose requests block until the test ends, and /good?p=N, a page with one row (and, if
// next, a link to page N+1). It counts the requests of each and keeps their order of arrival.
type hangingHost struct {
	srv      *httptest.Server
	host     string
	hangIn   atomic.Int64 // /hang requests in flight
	hangSeen atomic.Int64 // /hang requests that arrived
	mu       sync.Mutex
	order    []string // "hang" or "good", in order of arrival
	// goodGate, if set, runs first in each /good request; it returns a value the test records.
	goodGate func(r *http.Request) int64
	gateSeen []int64
	next     bool // /good pages link to the next one, up to 4
}

func newHangingHost(t *testing.T, next bool, gate func(h *hangingHost, r *http.Request) int64) *hangingHost {
	t.Helper()
	h := &hangingHost{next: next}
	if gate != nil {
		h.goodGate = func(r *http.Request) int64 { return gate(h, r) }
	}
	stop := make(chan struct{})
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/hang") {
			h.arrived("hang")
			h.hangSeen.Add(1)
			h.hangIn.Add(1)
			defer h.hangIn.Add(-1)
			select { // hangs until the test ends (or the crawler gives the request up)
			case <-stop:
			case <-r.Context().Done():
			}
			return
		}
		h.arrived("good")
		if h.goodGate != nil {
			v := h.goodGate(r)
			h.mu.Lock()
			h.gateSeen = append(h.gateSeen, v)
			h.mu.Unlock()
		}
		p, _ := strconv.Atoi(r.URL.Query().Get("p"))
		fmt.Fprintf(w, `<table><tr class="slot"><td class="course">Good CC</td><td class="date">2025-12-02</td><td class="time">07:%02d</td></tr></table>`, p)
		if h.next && p < 4 {
			fmt.Fprintf(w, `<a class="next" href="/good?p=%d">next</a>`, p+1)
		}
	}))
	t.Cleanup(h.srv.Close)
	t.Cleanup(func() { close(stop) }) // before Close, which waits for the handlers
	h.host = strings.TrimPrefix(h.srv.URL, "http://")
	return h
}

func (h *hangingHost) arrived(what string) {
	h.mu.Lock()
	h.order = append(h.order, what)
	h.mu.Unlock()
}

func (h *hangingHost) arrivals() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.order...)
}

// hangingHostSites is the two sites of h: "hanging" (4 pages, one per play date, on /hang) and
// "healthy" (4 pages on /good: a chain of next links when h.next, else 4 start URLs), with the
// politeness given (YAML flow mappings).
func hangingHostSites(t *testing.T, h *hangingHost, hangingPol, healthyPol string) []*site.Site {
	t.Helper()
	healthyURLs := `start_urls: ["` + h.srv.URL + `/good?p=1"]
    next_page: "a.next"`
	if !h.next {
		healthyURLs = fmt.Sprintf(`start_urls: ["%[1]s/good?p=1", "%[1]s/good?p=2", "%[1]s/good?p=3", "%[1]s/good?p=4"]`, h.srv.URL)
	}
	yml := fmt.Sprintf(`sites:
  - name: hanging
    url_template: '%[1]s/hang?date={{.Date.Format "20060102"}}'
    days_ahead: 3
    row: "tr.slot"
    fields: &fields
      course: {selector: "td.course"}
      round_date: {selector: "td.date"}
      tee_time: {selector: "td.time"}
    politeness: %[2]s
  - name: healthy
    %[3]s
    row: "tr.slot"
    fields: *fields
    politeness: %[4]s
`, h.srv.URL, hangingPol, healthyURLs, healthyPol)
	sites, err := site.ParseSites([]byte(yml))
	if err != nil {
		t.Fatalf("%v\n%s", err, yml)
	}
	return sites
}

// TestHangingSiteLeavesHealthySiteASlot: a site whose every request hangs (4 pages, a
// 5-minute request_timeout, no retries) and a healthy site (4 pages, one after the other) on one
// host with parallelism 2. The healthy site always has a slot while the hanging one holds the
// other: each healthy request is answered only once the hanging site has a request in flight and
// another waiting for the host, and then finds exactly one hanging request in flight; the healthy
// site's crawl ends complete while the hanging requests still hang. Once the healthy site is done,
// the hanging site takes both slots: a share, not a cap. Before the fix (slots first come, first
// served) the hanging site's waiting request took the slot the healthy page freed, and the
// healthy site's next page waited for a slot that never came.
func TestHangingSiteLeavesHealthySiteASlot(t *testing.T) {
	t.Parallel()
	var hl *hostLimits
	h := newHangingHost(t, true, func(h *hangingHost, r *http.Request) int64 {
		for h.hangIn.Load() < 1 || hl.waiting(h.host) < 1 { // the hanging site holds a slot and wants another
			select {
			case <-r.Context().Done():
				return -1
			case <-time.After(time.Millisecond):
			}
		}
		return h.hangIn.Load()
	})
	pol := `{no_delay: true, no_retry: true, parallelism: 2, ignore_robots_txt: true, request_timeout: 5m}`
	sites := hangingHostSites(t, h, pol, pol)
	hl = newHostLimits(sites)
	logs := &testkit.SyncBuffer{}
	r := &Runner{Sites: sites, State: StateDir{Dir: t.TempDir()}, Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		Now: newRunClock(t0).Now}
	r.hosts = hl
	done := make(chan RunSummary, 1)
	go func() {
		sum, _ := r.Run(t.Context())
		done <- sum
	}()
	testkit.WaitForf(t, 30*time.Second, func() string {
		return fmt.Sprintf("the healthy site crawled beside the hanging one (arrivals %v, hanging requests in flight at each healthy one %v)",
			h.arrivals(), h.gateSeen)
	}, func() bool { return siteCrawledLine(logs.String(), "healthy") != nil })
	line := siteCrawledLine(logs.String(), "healthy")
	h.mu.Lock()
	seen := append([]int64(nil), h.gateSeen...)
	h.mu.Unlock()
	t.Logf("healthy: %v; hanging requests in flight at each healthy request: %v; arrivals %v", line, seen, h.arrivals())
	if line["complete"] != true || line["pages"] != float64(4) {
		t.Errorf("healthy site: complete=%v pages=%v; want complete with 4 pages", line["complete"], line["pages"])
	}
	for i, n := range seen {
		if n != 1 {
			t.Errorf("healthy request %d: %d hanging requests in flight; want 1 (the rest of the host's 2 slots)", i+1, n)
		}
	}
	testkit.WaitForf(t, 30*time.Second, func() string {
		return fmt.Sprintf("%d hanging requests in flight after the healthy site left the host; want both slots", h.hangIn.Load())
	}, func() bool { return h.hangIn.Load() == 2 })
	select {
	case <-done:
		t.Fatal("the run ended while the hanging site's requests hang")
	default:
	}
}

// TestHangingSiteStopsAfterTwoTimeouts: the hanging site (parallelism 1, 3 retries, a short
// request_timeout) beside the healthy one (4 start URLs) on one host: after two timeouts in a row
// it stops requesting the host for this crawl: exactly 2 requests reach /hang instead of 4 pages ×
// 4 attempts, its crawl is incomplete with reason timeouts (summary, log, metric), and the
// healthy site's crawl is complete.
func TestHangingSiteStopsAfterTwoTimeouts(t *testing.T) {
	t.Parallel()
	h := newHangingHost(t, false, nil)
	sites := hangingHostSites(t, h,
		`{no_delay: true, parallelism: 1, retries: 3, backoff_base: 1ms, backoff_cap: 5ms, ignore_robots_txt: true, request_timeout: 300ms}`,
		`{no_delay: true, no_retry: true, parallelism: 2, ignore_robots_txt: true}`)
	logs := &testkit.SyncBuffer{}
	m := newTestMetrics(time.Now)
	r := &Runner{Sites: sites, State: StateDir{Dir: t.TempDir()}, Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		Now: newRunClock(t0).Now, Metrics: m}
	sum, _ := r.Run(t.Context())
	t.Logf("arrivals: %v", h.arrivals())
	for _, s := range sum.Sites {
		t.Logf("site %s: complete=%v incomplete=%q pages=%d failed=%d err=%v", s.Source, s.Complete, s.Incomplete, s.Pages, len(s.FailedPages), s.Err)
	}
	if got := h.hangSeen.Load(); got != 2 {
		t.Errorf("%d requests reached the hanging site; want 2 (it stops after two timeouts in a row)", got)
	}
	hanging, healthy := sum.Sites[0], sum.Sites[1]
	if hanging.Complete || hanging.Incomplete != IncompleteTimeouts || hanging.Err != nil {
		t.Errorf("hanging site: complete=%v incomplete=%q err=%v; want incomplete with reason %q", hanging.Complete, hanging.Incomplete, hanging.Err, IncompleteTimeouts)
	}
	if !healthy.Complete || healthy.Pages != 4 {
		t.Errorf("healthy site: complete=%v pages=%d; want complete with 4 pages", healthy.Complete, healthy.Pages)
	}
	if !strings.Contains(logs.String(), `"reason":"timeouts"`) {
		t.Errorf("no log line with reason timeouts:\n%s", logs.String())
	}
	if got := metricSum(t, m, "crawler_incomplete_crawls_total", map[string]string{"source": "hanging", "reason": IncompleteTimeouts}); got != 1 {
		t.Errorf("crawler_incomplete_crawls_total{source=hanging,reason=timeouts} = %v; want 1", got)
	}
}

// limitSites are two compiled sites, "hanging" and "healthy", on one host with parallelism par.
func limitSites(t *testing.T, par int) (hanging, healthy *site.Site, host string) {
	t.Helper()
	var b strings.Builder
	b.WriteString("sites:\n")
	for _, name := range []string{"hanging", "healthy"} {
		fmt.Fprintf(&b, `  - name: %s
    start_urls: ["http://127.0.0.1:9/%[1]s"]
    row: "tr.slot"
    fields: {course: {selector: "td.course"}, round_date: {selector: "td.date"}, tee_time: {selector: "td.time"}}
    politeness: {no_delay: true, parallelism: %d}
`, name, par)
	}
	sites, err := site.ParseSites([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return sites[0], sites[1], "127.0.0.1:9"
}

// limitState is a host's slots as a test sees them: the slots each site holds and how many
// requests wait.
func limitState(l *hostLimit, uses ...*hostUse) (held []int, waiting int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, u := range uses {
		held = append(held, u.held)
	}
	return held, len(l.queue)
}

type acquired struct {
	w   *hostWaiter
	err error
}

// acquireAsync asks for a slot for u and waits until the request is granted or queued.
func acquireAsync(t *testing.T, l *hostLimit, u *hostUse, cancel context.CancelCauseFunc) <-chan acquired {
	t.Helper()
	_, before := limitState(l)
	l.mu.Lock()
	held := u.held
	l.mu.Unlock()
	ch := make(chan acquired, 1)
	go func() {
		w, err := l.acquire(t.Context(), u, cancel)
		ch <- acquired{w, err}
	}()
	testkit.WaitFor(t, 10*time.Second, "the request granted or queued", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return u.held > held || len(l.queue) > before || u.stopped
	})
	return ch
}

func pending(ch <-chan acquired) bool {
	select {
	case a := <-ch:
		panic(fmt.Sprintf("granted or failed: %v", a.err))
	default:
		return true
	}
}

// TestHostLimitSharesSlots, on the slots themselves, parallelism 2: beside a registered
// site, even one between two requests, the hanging site gets one slot, never both; the healthy
// site then has the other at once; once the healthy site leaves, the hanging site's waiting
// request gets the second slot. Two timeouts in a row then stop it and end its request still in
// flight.
func TestHostLimitSharesSlots(t *testing.T) {
	t.Parallel()
	hanging, healthy, host := limitSites(t, 2)
	hl := newHostLimits([]*site.Site{hanging, healthy})
	sh, sg := hl.join(hanging), hl.join(healthy)
	l := hl.get(host, hanging.Politeness)
	uh, ug := sh.use(l), sg.use(l)
	nop := func(error) {}

	h1 := <-acquireAsync(t, l, uh, nop)
	h2 := acquireAsync(t, l, uh, nop)
	if held, waiting := limitState(l, uh, ug); !pending(h2) || held[0] != 1 || waiting != 1 {
		t.Fatalf("hanging site holds %d slots, %d waiting; want 1 held and its second request waiting (healthy registered, idle)", held[0], waiting)
	}
	g1 := <-acquireAsync(t, l, ug, nop)
	if g1.err != nil {
		t.Fatal(g1.err)
	}
	if held, _ := limitState(l, uh, ug); held[0] != 1 || held[1] != 1 {
		t.Fatalf("held %v; want the healthy site's slot beside the hanging one's", held)
	}
	l.release(g1.w, outcomeOK)
	if held, waiting := limitState(l, uh, ug); !pending(h2) || held[0] != 1 || waiting != 1 {
		t.Fatalf("after the healthy request: hanging holds %d, %d waiting; want its share, 1, while the healthy site is registered", held[0], waiting)
	}
	sg.leave()
	h2r := <-h2
	if h2r.err != nil {
		t.Fatal(h2r.err)
	}
	if held, _ := limitState(l, uh); held[0] != 2 {
		t.Fatalf("hanging site alone holds %d slots; want both", held[0])
	}
	// Two timeouts in a row stop it, and end its request still in flight.
	l.release(h1.w, outcomeTimeout)
	var cancelled atomic.Value
	h3 := <-acquireAsync(t, l, uh, func(err error) { cancelled.Store(err) })
	if h3.err != nil {
		t.Fatal(h3.err)
	}
	if !l.release(h2r.w, outcomeTimeout) {
		t.Fatal("the second timeout in a row did not stop the site")
	}
	if err, _ := cancelled.Load().(error); !errors.Is(err, errHostTimeouts) {
		t.Fatalf("its request in flight was ended with %v; want errHostTimeouts", err)
	}
	l.release(h3.w, outcomeCancelled)
	sh.leave()
	if held, waiting := limitState(l, uh); held[0] != 0 || waiting != 0 {
		t.Fatalf("after the crawl: %d held, %d waiting", held[0], waiting)
	}
}

// TestHostLimitTimeouts, on the slots themselves, parallelism 1: a site whose request
// timed out waits behind another site's first attempt that came after its own next request;
// its second timeout in a row stops it: its waiting request fails with errHostTimeouts, and so
// does every later one, while the other site's go on.
func TestHostLimitTimeouts(t *testing.T) {
	t.Parallel()
	hanging, healthy, host := limitSites(t, 1)
	hl := newHostLimits([]*site.Site{hanging, healthy})
	sh, sg := hl.join(hanging), hl.join(healthy)
	defer sh.leave()
	defer sg.leave()
	l := hl.get(host, hanging.Politeness)
	uh, ug := sh.use(l), sg.use(l)
	nop := func(error) {}

	h1 := <-acquireAsync(t, l, uh, nop)
	h2 := acquireAsync(t, l, uh, nop) // the hanging site's next page, queued first
	g1 := acquireAsync(t, l, ug, nop) // the healthy site's first attempt, queued after it
	l.release(h1.w, outcomeTimeout)
	g1r := <-g1
	if g1r.err != nil || !pending(h2) {
		t.Fatalf("after a timeout: healthy %v, hanging still waiting %v; want the healthy site's request first", g1r.err, pending(h2))
	}
	l.release(g1r.w, outcomeOK)
	h2r := <-h2
	if h2r.err != nil {
		t.Fatal(h2r.err)
	}
	h3 := acquireAsync(t, l, uh, nop)
	if !l.release(h2r.w, outcomeTimeout) {
		t.Fatal("the second timeout in a row did not stop the site")
	}
	if r := <-h3; !errors.Is(r.err, errHostTimeouts) {
		t.Fatalf("the stopped site's waiting request: %v; want errHostTimeouts", r.err)
	}
	if _, err := l.acquire(t.Context(), uh, nop); !errors.Is(err, errHostTimeouts) {
		t.Fatalf("a later request of the stopped site: %v; want errHostTimeouts", err)
	}
	if got := sh.stopped(); len(got) != 1 || got[0] != host {
		t.Fatalf("stopped hosts %v; want [%s]", got, host)
	}
	g2 := <-acquireAsync(t, l, ug, nop)
	if g2.err != nil {
		t.Fatalf("the healthy site after the other stopped: %v", g2.err)
	}
	l.release(g2.w, outcomeOK)
}
