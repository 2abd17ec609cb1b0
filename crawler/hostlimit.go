package crawler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// hostLimits is the politeness of each host (URL host, port included, as colly's limits match it)
// shared by every site a run crawls there, so that sites crawled in parallel on one host never
// add up their limits: per host, at most the smallest parallelism of those sites is in flight,
// and each slot waits the largest delay (plus up to the largest random_delay) after its request
// before the next one. A host no site names up front (a follow link to another allowed domain)
// gets the politeness of the first site that reaches it. Safe for concurrent use.
//
// The slots of a host are shared fairly between its sites (hostLimit), and a site whose requests
// to a host time out twice in a row stops requesting it for the rest of its crawl (one
// hanging site must not starve the other sites on its host).
type hostLimits struct {
	mu    sync.Mutex
	hosts map[string]*hostLimit
}

// maxHostTimeouts is how many requests in a row of one site crawl to one host may time out
// before the crawl stops requesting that host (errHostTimeouts; the crawl is incomplete with
// reason IncompleteTimeouts).
const maxHostTimeouts = 2

// errHostTimeouts ends every request of a site crawl to a host after maxHostTimeouts timeouts in
// a row there; backOff does not retry it.
var errHostTimeouts = fmt.Errorf("requests to this host timed out %d times in a row: the crawl stops requesting it", maxHostTimeouts)

// errRequestTimeout is the cause of a request's context ended by the site's request_timeout; it
// is a context.DeadlineExceeded.
var errRequestTimeout = fmt.Errorf("request_timeout reached: %w", context.DeadlineExceeded)

// hostLimit is one host's slots and the sites that use them. The rules of a grant (grant):
//
//   - fair share: while k > 1 sites are registered on the host (from the start of their crawl to
//     its end: hostLimits.join) or hold or wait for its slots, none holds more than ⌈par/k⌉ of
//     them, even when another one is between two requests: a slot held by a hanging request
//     cannot be taken back, so a site's share is kept for it. With parallelism 2, a site whose
//     requests hang holds at most one slot beside another site, never both;
//   - a site whose last request to the host failed (no answer, 408, 429, 5xx) waits behind the
//     others: its retries queue behind their first attempts;
//   - then the site holding fewer slots, then the first come.
type hostLimit struct {
	par           int
	delay, jitter time.Duration

	mu    sync.Mutex
	busy  int                   // slots held by a request or in their delay after one
	sites map[*hostUse]struct{} // the uses registered, holding or waiting
	queue []*hostWaiter         // requests waiting for a slot, in order of arrival
}

// hostUse is one site crawl's use of one host.
type hostUse struct {
	site       string
	registered bool                 // from hostLimits.join to hostShare.leave
	held       int                  // slots its requests hold
	waiters    int                  // its requests in the queue
	timeouts   int                  // its requests that timed out in a row
	failed     bool                 // its last request failed: its next one waits behind the other sites'
	stopped    bool                 // timeouts reached maxHostTimeouts: every request of the crawl fails
	inflight   map[*hostWaiter]bool // its requests holding a slot: stop cancels them
}

func (u *hostUse) active() bool { return !u.stopped && (u.registered || u.held > 0 || u.waiters > 0) }

// hostWaiter is one request waiting for, then holding, a slot.
type hostWaiter struct {
	use     *hostUse
	ready   chan error              // buffered: nil once granted, errHostTimeouts once its site stopped
	cancel  context.CancelCauseFunc // ends the request (stop)
	done    bool                    // granted or failed
	granted bool
}

// newHostLimits builds the limits of every host the sites name (their start URLs, template,
// requests and login), each the strictest of the sites on it (compiled: their politeness has its
// defaults).
func newHostLimits(sites []*site.Site) *hostLimits {
	type strictest struct {
		par           int
		delay, jitter time.Duration
	}
	merged := map[string]*strictest{}
	var order []string
	for _, st := range sites {
		p := st.Politeness
		for _, h := range hostKeys(st) {
			m := merged[h]
			if m == nil {
				merged[h] = &strictest{p.Parallelism, p.Delay.D(), p.RandomDelay.D()}
				order = append(order, h)
				continue
			}
			m.par, m.delay, m.jitter = min(m.par, p.Parallelism), max(m.delay, p.Delay.D()), max(m.jitter, p.RandomDelay.D())
		}
	}
	hl := &hostLimits{hosts: map[string]*hostLimit{}}
	for _, h := range order {
		m := merged[h]
		hl.hosts[h] = newHostLimit(m.par, m.delay, m.jitter)
	}
	return hl
}

func newHostLimit(par int, delay, jitter time.Duration) *hostLimit {
	return &hostLimit{par: max(par, 1), delay: delay, jitter: jitter, sites: map[*hostUse]struct{}{}}
}

// hostKeys are the URL hosts (with port, lower case) of the site's known URLs.
func hostKeys(s *site.Site) []string {
	urls, _ := s.URLs(time.Date(2026, 1, 1, 0, 0, 0, 0, site.Seoul()))
	urls = append(urls, s.RequestURLs()...)
	var out []string
	seen := map[string]bool{}
	for _, raw := range urls {
		if u, err := url.Parse(raw); err == nil && u.Host != "" && !seen[strings.ToLower(u.Host)] {
			seen[strings.ToLower(u.Host)] = true
			out = append(out, strings.ToLower(u.Host))
		}
	}
	return out
}

// get returns host's limit, created from p when no site named the host.
func (hl *hostLimits) get(host string, p site.Politeness) *hostLimit {
	host = strings.ToLower(host)
	hl.mu.Lock()
	defer hl.mu.Unlock()
	l := hl.hosts[host]
	if l == nil {
		l = newHostLimit(p.Parallelism, p.Delay.D(), p.RandomDelay.D())
		hl.hosts[host] = l
	}
	return l
}

// waiting is the number of requests to host waiting for a slot.
func (hl *hostLimits) waiting(host string) int64 {
	hl.mu.Lock()
	l := hl.hosts[strings.ToLower(host)]
	hl.mu.Unlock()
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(len(l.queue))
}

// hostShare is one site crawl's registration on the run's hosts: its use of each host it names
// (registered at join, so that the hosts keep its share before its first request) and of any
// other it reaches. Safe for concurrent use.
type hostShare struct {
	hosts *hostLimits
	site  *site.Site
	mu    sync.Mutex
	uses  map[*hostLimit]*hostUse
	left  bool
}

// join registers a crawl of site on every host it names. The caller calls leave once the crawl
// has made its last request.
func (hl *hostLimits) join(st *site.Site) *hostShare {
	sh := &hostShare{hosts: hl, site: st, uses: map[*hostLimit]*hostUse{}}
	for _, h := range hostKeys(st) {
		l := hl.get(h, st.Politeness)
		u := sh.use(l)
		l.mu.Lock()
		u.registered = true
		l.sites[u] = struct{}{}
		l.mu.Unlock()
	}
	return sh
}

// use is the crawl's use of l, made on first use.
func (sh *hostShare) use(l *hostLimit) *hostUse {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	u := sh.uses[l]
	if u == nil {
		u = &hostUse{site: sh.site.Name, inflight: map[*hostWaiter]bool{}}
		sh.uses[l] = u
	}
	return u
}

// leave ends the crawl's registration on its hosts: the other sites there get its share. It
// may be called more than once.
func (sh *hostShare) leave() {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.left {
		return
	}
	sh.left = true
	for l, u := range sh.uses {
		l.mu.Lock()
		u.registered = false
		l.forget(u)
		l.grant()
		l.mu.Unlock()
	}
}

// stopped is the hosts the crawl stopped requesting after maxHostTimeouts timeouts in a row.
func (sh *hostShare) stopped() []string {
	sh.hosts.mu.Lock()
	names := map[*hostLimit]string{}
	for h, l := range sh.hosts.hosts {
		names[l] = h
	}
	sh.hosts.mu.Unlock()
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var out []string
	for l, u := range sh.uses {
		l.mu.Lock()
		if u.stopped {
			out = append(out, names[l])
		}
		l.mu.Unlock()
	}
	sort.Strings(out)
	return out
}

// forget drops u from l's sites once it neither is registered nor holds nor waits. l.mu is held.
func (l *hostLimit) forget(u *hostUse) {
	if !u.registered && u.held == 0 && u.waiters == 0 {
		delete(l.sites, u)
	}
}

// share is the most slots one site may hold now (l.mu is held): ⌈par/k⌉ over the k active sites.
func (l *hostLimit) share() int {
	k := 0
	for u := range l.sites {
		if u.active() {
			k++
		}
	}
	if k <= 1 {
		return l.par
	}
	return (l.par + k - 1) / k
}

// grant hands the free slots to the waiting requests by the rules of hostLimit. l.mu is held.
func (l *hostLimit) grant() {
	for l.busy < l.par {
		share, best := l.share(), -1
		for i, w := range l.queue {
			if w.use.held >= share {
				continue
			}
			if best < 0 || before(w.use, l.queue[best].use) {
				best = i
			}
		}
		if best < 0 {
			return
		}
		w := l.queue[best]
		l.queue = slices.Delete(l.queue, best, best+1)
		w.use.waiters--
		w.use.held++
		w.use.inflight[w] = true
		l.busy++
		w.done, w.granted = true, true
		w.ready <- nil
	}
}

// before reports whether a's request goes before b's, which came first.
func before(a, b *hostUse) bool {
	if a.failed != b.failed {
		return !a.failed
	}
	return a.held < b.held
}

// acquire takes a slot for u's request (cancel ends it if u stops while it holds the slot), or
// returns ctx's error when ctx ends first, or errHostTimeouts once u stopped requesting the host.
func (l *hostLimit) acquire(ctx context.Context, u *hostUse, cancel context.CancelCauseFunc) (*hostWaiter, error) {
	l.mu.Lock()
	if u.stopped {
		l.mu.Unlock()
		return nil, errHostTimeouts
	}
	w := &hostWaiter{use: u, ready: make(chan error, 1), cancel: cancel}
	l.sites[u] = struct{}{}
	l.queue = append(l.queue, w)
	u.waiters++
	l.grant()
	l.mu.Unlock()
	select {
	case err := <-w.ready:
		return w, err
	case <-ctx.Done():
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case !w.done: // still waiting
		l.queue = slices.DeleteFunc(l.queue, func(q *hostWaiter) bool { return q == w })
		u.waiters--
	case w.granted: // granted meanwhile: the slot goes back unused
		u.held--
		delete(u.inflight, w)
		l.busy--
	}
	w.done = true
	l.forget(u)
	l.grant()
	return nil, ctx.Err()
}

// outcome is how a request that held a slot ended, for its site's standing on the host.
type outcome int

const (
	outcomeOK        outcome = iota // answered (a status not retried)
	outcomeFailed                   // no answer, or 408, 429, 5xx
	outcomeTimeout                  // request_timeout reached
	outcomeCancelled                // the crawl ended it (cancelled, deadline, stopped): no evidence
)

// release gives w's slot back after the host's delay (and jitter), without blocking the caller,
// and records how its request ended. It reports whether the request made its site stop
// requesting the host (the maxHostTimeouts-th timeout in a row).
func (l *hostLimit) release(w *hostWaiter, o outcome) (stopped bool) {
	l.mu.Lock()
	u := w.use
	delete(u.inflight, w)
	u.held--
	switch o {
	case outcomeOK:
		u.timeouts, u.failed = 0, false
	case outcomeFailed:
		u.timeouts, u.failed = 0, true
	case outcomeTimeout:
		u.timeouts++
		u.failed = true
		if u.timeouts >= maxHostTimeouts && !u.stopped {
			stopped = true
			l.stop(u)
		}
	}
	l.forget(u)
	l.grant() // the share may have grown
	l.mu.Unlock()
	d := l.delay
	if l.jitter > 0 {
		d += rand.N(l.jitter)
	}
	free := func() {
		l.mu.Lock()
		l.busy--
		l.grant()
		l.mu.Unlock()
	}
	if d <= 0 {
		free()
	} else {
		time.AfterFunc(d, free)
	}
	return stopped
}

// stop makes u's waiting requests and every later one fail with errHostTimeouts, and cancels its
// requests in flight. l.mu is held.
func (l *hostLimit) stop(u *hostUse) {
	u.stopped = true
	l.queue = slices.DeleteFunc(l.queue, func(w *hostWaiter) bool {
		if w.use != u {
			return false
		}
		u.waiters--
		w.done = true
		w.ready <- errHostTimeouts
		return true
	})
	for w := range u.inflight {
		w.cancel(errHostTimeouts)
	}
}

// hostTransport is one site crawl's transport under the run's host limits: each request
// (robots.txt, login and redirect hops included) waits for a slot of its host, then gets the
// site's request_timeout, which covers the response body too; the slot is held until the body is
// closed. The wait does not count against the timeout: with many sites on one host, a page
// waiting its turn is not a page timing out. Every request also ends with the crawl's context,
// even one colly sends without it (robots.txt), so a deadline or a cancelled run never waits on a
// dead server. newCollector sees this transport and leaves the delay and the timeout to it.
type hostTransport struct {
	crawl   context.Context
	next    http.RoundTripper
	share   *hostShare
	pol     site.Politeness
	timeout time.Duration
	log     *slog.Logger
}

// limitedTransport wraps next (nil: http.DefaultTransport) for one crawl (ctx) of site, registered
// on the run's hosts as share; log gets the line of a host the crawl stops requesting.
func limitedTransport(ctx context.Context, next http.RoundTripper, share *hostShare, st *site.Site, log *slog.Logger) *hostTransport {
	if next == nil {
		next = http.DefaultTransport
	}
	return &hostTransport{crawl: ctx, next: next, share: share, pol: st.Politeness, timeout: st.Politeness.RequestTimeout.D(), log: log}
}

// RoundTrip implements http.RoundTripper.
func (t *hostTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	stop := context.AfterFunc(t.crawl, func() { cancel(context.Cause(t.crawl)) })
	end := func() { stop(); cancel(nil) }
	l := t.share.hosts.get(req.URL.Host, t.pol)
	u := t.share.use(l)
	w, err := l.acquire(ctx, u, cancel)
	if err != nil {
		end()
		if req.Body != nil {
			_ = req.Body.Close() // RoundTrip closes the body, on errors too
		}
		return nil, err
	}
	rctx := ctx
	if t.timeout > 0 {
		var cancelTimeout context.CancelFunc
		rctx, cancelTimeout = context.WithTimeoutCause(ctx, t.timeout, errRequestTimeout)
		stopCrawl := end
		end = func() { cancelTimeout(); stopCrawl() }
	}
	// done ends the request: how it ended (err: of the round trip or of reading the body) decides
	// its site's standing on the host.
	done := func(status int, err error) (stopped bool) {
		o := outcomeOK
		switch {
		case errors.Is(context.Cause(rctx), errRequestTimeout) && err != nil:
			o = outcomeTimeout
		case ctx.Err() != nil:
			o = outcomeCancelled
		case err != nil, retryStatus(status):
			o = outcomeFailed
		}
		end()
		if stopped = l.release(w, o); stopped {
			t.log.WarnContext(t.crawl, "requests to the host timed out twice in a row: the crawl stops requesting it (incomplete, reason timeouts)",
				"host", strings.ToLower(req.URL.Host), "request_timeout", t.timeout)
		}
		return stopped
	}
	resp, err := t.next.RoundTrip(req.WithContext(rctx))
	if err != nil {
		if done(0, err) || errors.Is(context.Cause(ctx), errHostTimeouts) {
			err = fmt.Errorf("%w: %w", errHostTimeouts, err)
		}
		return nil, err
	}
	body := &releasingBody{ReadCloser: resp.Body}
	body.done = func() { _ = done(resp.StatusCode, body.err()) }
	resp.Body = body
	return resp, nil
}

// releasingBody calls done once, when the body is closed, and keeps the first error of a read
// that is not io.EOF.
type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	done    func()
	mu      sync.Mutex
	readErr error
}

func (b *releasingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.mu.Lock()
		if b.readErr == nil {
			b.readErr = err
		}
		b.mu.Unlock()
	}
	return n, err
}

func (b *releasingBody) err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.readErr
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}
