package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/retry"
)

// Metrics receives a crawl's counters; implementations must be safe for concurrent use. A nil
// Metrics in CollectDeps counts nothing.
type Metrics interface {
	// PageFetched is called once per HTTP attempt, retries included; status is 0 when no response
	// arrived (timeout, connection refused).
	PageFetched(site string, status int)
	// RowRejected is called once per skipped row; reason is one of the site.Reject* constants.
	RowRejected(site, reason string)
	// Retry is called once per re-fetch of a page.
	Retry(site string)
	// PageFailed is called once per page that fails (after its retries); reason is one of the
	// Fail* constants.
	PageFailed(site, reason string)
}

// CollectDeps are Collect's dependencies. Only Logger is required.
type CollectDeps struct {
	Logger    *slog.Logger
	Transport http.RoundTripper // nil: http.DefaultTransport (tests plug in their own)
	Metrics   Metrics           // nil: none
	Now       func() time.Time  // reads Retry-After dates and times the crawl; nil: time.Now
	// Sleep waits between retries; nil: a timer that returns ctx.Err() when ctx ends first.
	// Tests record the waits instead of sleeping.
	Sleep func(ctx context.Context, d time.Duration) error
	// Getenv reads the login credentials' environment variables; nil: os.Getenv.
	Getenv func(string) string
	// OnPage, optional, is called once per page with what it gave (`crawler try`).
	OnPage func(PageReport)
	// Sets, when not nil, are the only page sets the crawl fetches (a partial crawl by design,
	// #51): the requests of the other page sets, and the start URLs (no page set), are not sent.
	// nil: every page.
	Sets []PageSet
	// ListHint, optional, is the holder of the rows on the site's last page with rows
	// (Snapshot.ListSeen, Result.ListSeen): what a page without rows must show when the site has
	// no list selector of its own.
	ListHint string

	// hosts is the crawl's registration on the Runner's per-host politeness limits, shared with
	// the other sites crawled at the same time (see hostLimits); nil: the site's own limits
	// (colly's).
	hosts *hostShare
}

// Result is what one crawl of one site saw.
type Result struct {
	Site     string
	Listings []events.Listing // unique by Key, sorted by Key
	Pages    int              // pages fetched and parsed
	Rows     int              // rows seen, rejected ones included
	Rejected int              // rows skipped (see the Reject* reasons)
	// OtherDateRows are the rows of another play date than their page's, dropped: a site whose
	// requests name the date and whose rows say theirs (a week's answer, grouped by date).
	OtherDateRows int
	Retries       int      // page re-fetches
	FailedPages   []string // URLs that failed after their retries, or were refused (robots.txt, size)
	MaxPagesHit   bool     // the max_pages guard stopped the crawl
	// TimedOutHosts are the hosts the crawl stopped requesting after maxHostTimeouts timeouts
	// in a row there (IncompleteTimeouts): one hanging site must not hold its host's slots.
	TimedOutHosts []string
	Relogins      int // fresh logins after a page answered with the login page
	// FailedSets are the page sets (play date and target of requests) of the failed pages; a
	// failed page of a site without requests has a zero PageSet, which covers every listing.
	FailedSets []PageSet
	// NotOpenSets are the page sets whose answer said the date is not open for booking yet
	// (not_open, json.not_open_when): the crawl saw nothing of them, and closes none of their
	// listings.
	NotOpenSets []PageSet
	// Complete is true when every page that the crawl found was fetched and parsed: no failed
	// page, no max_pages stop, no cancellation. Only a complete crawl can tell that a listing is
	// gone; an incomplete one only that the listings it has exist.
	Complete bool
	Duration time.Duration
	// ListSeen is the holder of the rows seen on most pages with rows (the next crawl's
	// CollectDeps.ListHint); empty when no page had rows.
	ListSeen string
}

// NotOpenMetrics is an optional Metrics method: PageNotOpen is called once per page that answered
// not_open (json.not_open_when).
type NotOpenMetrics interface {
	PageNotOpen(site string)
}

type noMetrics struct{}

func (noMetrics) PageFetched(string, int)    {}
func (noMetrics) RowRejected(string, string) {}
func (noMetrics) Retry(string)               {}
func (noMetrics) PageFailed(string, string)  {}

// attemptKey is the colly request context key of a page's attempt number (0 for the first fetch).
const attemptKey = "golf-crawler.attempt"

// crawl is the state of one Collect call, shared by colly's callbacks.
type crawl struct {
	ctx       context.Context
	site      *site.Site
	deps      CollectDeps
	log       *slog.Logger
	crawledAt time.Time
	c         *colly.Collector

	mu       sync.Mutex
	visited  map[string]bool
	failed   map[string]bool
	listings map[string]events.Listing
	holders  map[string]int // holderOf of the pages with rows: how many pages had each
	res      Result

	// requests, page sets and login (site/request.go, login.go); zero for a site without them
	sets       []site.RequestVars
	failedSets map[int]bool
	notOpen    map[int]bool    // page sets answered not_open
	attributed map[string]bool // failed pages that belong to a page set
	sess       *session
	secrets    *secretSet // the login's credentials and the captured values (capture.go)
	jar        http.CookieJar
}

// Collect crawls site once: its start URLs, the next-page and follow links they lead to, each page
// retried on timeouts, 5xx and 429 with capped exponential backoff. Rows are turned into listings
// with PlayDate (relative to crawledAt), ParseTeeTime, ParsePrice and ParsePlayers; a row that does
// not parse is logged (url, raw, err), counted and skipped, and the crawl goes on.
//
// The error is non-nil only when the crawl could not start (its URLs do not expand) or ctx ended; in the
// latter case the partial Result is returned too, with Complete false.
func Collect(ctx context.Context, st *site.Site, crawledAt time.Time, deps CollectDeps) (Result, error) {
	if deps.Logger == nil {
		return Result{}, errors.New("collect: CollectDeps.Logger is required")
	}
	if deps.Metrics == nil {
		deps.Metrics = noMetrics{}
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	if deps.Sleep == nil {
		deps.Sleep = retry.Sleep
	}
	if deps.Getenv == nil {
		deps.Getenv = os.Getenv
	}
	start := deps.Now()
	urls, err := st.URLs(crawledAt)
	if err != nil {
		return Result{Site: st.Name}, fmt.Errorf("collect %s: %w", st.Name, err)
	}
	if deps.hosts != nil {
		deps.Transport = limitedTransport(ctx, deps.Transport, deps.hosts, st, deps.Logger.With("site", st.Name))
	}
	c, err := newCollector(ctx, st, deps.Transport)
	if err != nil {
		return Result{Site: st.Name}, fmt.Errorf("collect %s: %w", st.Name, err)
	}
	cr := &crawl{
		ctx: ctx, site: st, deps: deps, crawledAt: crawledAt, c: c,
		log:     deps.Logger.With("site", st.Name),
		visited: map[string]bool{}, failed: map[string]bool{}, listings: map[string]events.Listing{},
		holders: map[string]int{}, res: Result{Site: st.Name}, secrets: &secretSet{},
	}
	if st.Login != nil || st.Captures() {
		// the credentials and captured values never reach a log line (added as they are read)
		cr.log = slog.New(redactHandler{h: cr.log.Handler(), secrets: cr.secrets})
	}
	c.OnResponse(cr.onResponse)
	c.OnError(cr.onError)
	if err := cr.startRequests(ctx, urls); err != nil {
		return Result{Site: st.Name}, fmt.Errorf("collect %s: %w", st.Name, err)
	}
	c.Wait()
	cr.finishSets()
	if deps.hosts != nil {
		cr.res.TimedOutHosts = deps.hosts.stopped()
	}

	res := cr.res
	for _, l := range cr.listings {
		res.Listings = append(res.Listings, l)
	}
	sort.Slice(res.Listings, func(i, j int) bool { return res.Listings[i].Key() < res.Listings[j].Key() })
	sort.Strings(res.FailedPages)
	res.Complete = len(res.FailedPages) == 0 && !res.MaxPagesHit && len(res.TimedOutHosts) == 0 && ctx.Err() == nil
	res.ListSeen = mostSeen(cr.holders)
	res.Duration = deps.Now().Sub(start)
	cr.log.InfoContext(ctx, "crawl finished", "pages", res.Pages, "rows", res.Rows, "listings", len(res.Listings),
		"rejected", res.Rejected, "retries", res.Retries, "failed_pages", len(res.FailedPages),
		"max_pages_hit", res.MaxPagesHit, "timed_out_hosts", res.TimedOutHosts, "complete", res.Complete, "duration", res.Duration)
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("collect %s: %w", st.Name, err)
	}
	return res, nil
}

// claim marks key as scheduled and reports whether the caller should fetch it: false when key was
// already scheduled or the max_pages guard is reached (warned about once, with key under logKey).
func (cr *crawl) claim(key, logKey string) bool {
	cr.mu.Lock()
	if cr.visited[key] {
		cr.mu.Unlock()
		return false
	}
	if len(cr.visited) >= cr.site.Politeness.MaxPages {
		first := !cr.res.MaxPagesHit
		cr.res.MaxPagesHit = true
		cr.mu.Unlock()
		if first {
			cr.log.WarnContext(cr.ctx, "max_pages reached; the crawl is incomplete", logKey, key,
				"max_pages", cr.site.Politeness.MaxPages)
		}
		return false
	}
	cr.visited[key] = true
	cr.mu.Unlock()
	return true
}

// visit schedules a page unless it was already scheduled or the max_pages guard is reached.
func (cr *crawl) visit(raw string) {
	u, err := url.Parse(raw)
	if err != nil {
		cr.fail(raw, 0, fmt.Errorf("parse URL: %w", err))
		return
	}
	key := u.String()
	if !cr.claim(key, "url") {
		return
	}

	rctx := colly.NewContext()
	rctx.Put(attemptKey, 0)
	if err := scheduleErr(cr.c.Request(http.MethodGet, key, nil, rctx, nil)); err != nil {
		cr.fail(key, 0, err)
	}
}

// scheduleErr is the failure of a page colly refused to schedule, nil when it was scheduled or
// was already visited.
func scheduleErr(err error) error {
	var already *colly.AlreadyVisitedError
	switch {
	case err == nil, errors.As(err, &already):
		return nil
	case errors.Is(err, colly.ErrRobotsTxtBlocked):
		return fmt.Errorf("refused by robots.txt (set ignore_robots_txt to opt out): %w", err)
	default:
		return err
	}
}

// fail records a page that will not be parsed in this crawl.
func (cr *crawl) fail(u string, status int, err error) {
	cr.mu.Lock()
	dup := cr.failed[u]
	if !dup {
		cr.failed[u] = true
		cr.res.FailedPages = append(cr.res.FailedPages, u)
	}
	cr.mu.Unlock()
	if !dup {
		reason := failReason(err)
		cr.deps.Metrics.PageFailed(cr.site.Name, reason)
		cr.log.WarnContext(cr.ctx, "page failed; the crawl is incomplete", "url", u, "status", status, "reason", reason, "err", err)
	}
}

func (cr *crawl) onResponse(r *colly.Response) {
	if cr.onRequestResponse(r) {
		return
	}
	u := r.Request.URL.String()
	cr.deps.Metrics.PageFetched(cr.site.Name, r.StatusCode)
	if len(r.Body) > cr.site.Politeness.MaxBodyBytes {
		cr.fail(u, r.StatusCode, fmt.Errorf("body is larger than max_body_bytes (%d)", cr.site.Politeness.MaxBodyBytes))
		return
	}
	body, dec := decodeBody(cr.site, responseContentType(r.Headers), r.Body)
	pg, err := parsePage(cr.site, r.Request.URL, body, cr.deps.ListHint, cr.crawledAt)
	if err == nil {
		err = checkDecoded(cr.site, pg.Rows, dec)
	}
	if err == nil {
		err = cr.seen(pg)
	}
	if err != nil {
		cr.fail(u, r.StatusCode, err)
		return
	}
	var ok []events.Listing
	rejected := 0
	for _, row := range pg.Rows {
		l, reason, err := cr.site.Listing(row, u, cr.crawledAt)
		if err != nil && site.SoldOutMarker(row, reason) {
			continue // a sold-out date's marker row (empty_when): no listing and no reject
		}
		if err != nil {
			rejected++
			cr.deps.Metrics.RowRejected(cr.site.Name, reason)
			cr.log.WarnContext(cr.ctx, "row skipped", "url", u, "reason", reason, "raw", row.String(), "err", err)
			continue
		}
		ok = append(ok, l)
	}
	cr.mu.Lock()
	cr.res.Pages++
	cr.res.Rows += len(pg.Rows)
	cr.res.Rejected += rejected
	for _, l := range ok {
		// A row that moved to the next page while we paged (a booking above it) is seen twice.
		if _, dup := cr.listings[l.Key()]; !dup {
			cr.listings[l.Key()] = l
		}
	}
	cr.mu.Unlock()
	cr.log.DebugContext(cr.ctx, "page parsed", "url", u, "rows", len(pg.Rows), "rejected", rejected, "links", len(pg.Links))
	for _, link := range pg.Links {
		cr.visit(link)
	}
}

// backOff prepares another try of r's failed fetch (key names it in the log): it waits as the
// politeness and the response ask and counts the retry. It returns the error that ends the page
// instead: the retries spent or a failure not worth retrying (spent true), or the wait cut short.
// A host the crawl stopped requesting (errHostTimeouts) is not retried.
func (cr *crawl) backOff(r *colly.Response, key string, err error) (stop error, spent bool) {
	attempt, _ := r.Ctx.GetAny(attemptKey).(int)
	if errors.Is(err, errHostTimeouts) {
		return fmt.Errorf("attempt %d: %w", attempt+1, err), true
	}
	var hdr http.Header
	if r.Headers != nil {
		hdr = *r.Headers
	}
	p := cr.site.Politeness
	wait, retry := retryDelay(r.StatusCode, hdr, attempt, p.BackoffBase.D(), p.BackoffCap.D(), cr.deps.Now())
	if !retry || attempt >= p.Retries {
		return fmt.Errorf("attempt %d of %d: %w", attempt+1, p.Retries+1, err), true
	}
	cr.log.InfoContext(cr.ctx, "page retry", "url", key, "status", r.StatusCode, "attempt", attempt+1,
		"wait", wait, "err", err)
	if err := cr.deps.Sleep(cr.ctx, wait); err != nil {
		return err, false
	}
	r.Ctx.Put(attemptKey, attempt+1)
	cr.deps.Metrics.Retry(cr.site.Name)
	cr.mu.Lock()
	cr.res.Retries++
	cr.mu.Unlock()
	return nil, false
}

func (cr *crawl) onError(r *colly.Response, err error) {
	if cr.onRequestError(r, err) {
		return
	}
	u := r.Request.URL.String()
	cr.deps.Metrics.PageFetched(cr.site.Name, r.StatusCode)
	if cr.ctx.Err() != nil {
		cr.fail(u, r.StatusCode, cr.ctx.Err())
		return
	}
	if stop, _ := cr.backOff(r, u, err); stop != nil {
		cr.fail(u, r.StatusCode, stop)
		return
	}
	if err := r.Request.Retry(); err != nil {
		cr.fail(u, 0, fmt.Errorf("retry: %w", err))
	}
}
