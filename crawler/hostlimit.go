package crawler

import (
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// hostLimits is the politeness of each host (URL host, port included, as colly's limits match it)
// shared by every site a run crawls there, so that sites crawled in parallel on one host never
// add up their limits: per host, at most the smallest parallelism of those sites is in flight,
// and each slot waits the largest delay (plus up to the largest random_delay) after its request
// before the next one. A host no site names up front (a follow link to another allowed domain)
// gets the politeness of the first site that reaches it. Safe for concurrent use.
type hostLimits struct {
	mu    sync.Mutex
	hosts map[string]*hostLimit
}

// hostLimit is one host's slots.
type hostLimit struct {
	slots   chan struct{}
	delay   time.Duration
	jitter  time.Duration
	waiting atomic.Int64 // requests waiting for a slot (tests watch it)
}

// newHostLimits builds the limits of every host the sites name (their start URLs, template,
// requests and login), each the strictest of the sites on it (compiled: their politeness has its
// defaults).
func newHostLimits(sites []*Site) *hostLimits {
	type strictest struct {
		par           int
		delay, jitter time.Duration
	}
	merged := map[string]*strictest{}
	var order []string
	for _, site := range sites {
		p := site.Politeness
		for _, h := range site.hostKeys() {
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
	return &hostLimit{slots: make(chan struct{}, max(par, 1)), delay: delay, jitter: jitter}
}

// hostKeys are the URL hosts (with port, lower case) of the site's known URLs.
func (s *Site) hostKeys() []string {
	urls, _ := s.URLs(time.Date(2026, 1, 1, 0, 0, 0, 0, Seoul()))
	urls = append(urls, s.requestURLs()...)
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
func (hl *hostLimits) get(host string, p Politeness) *hostLimit {
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
	return l.waiting.Load()
}

// acquire takes a slot, or returns ctx's error when ctx ends first.
func (l *hostLimit) acquire(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		return nil
	default:
	}
	l.waiting.Add(1)
	defer l.waiting.Add(-1)
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release gives the slot back after the host's delay (and jitter), without blocking the caller.
func (l *hostLimit) release() {
	d := l.delay
	if l.jitter > 0 {
		d += rand.N(l.jitter)
	}
	if d <= 0 {
		<-l.slots
		return
	}
	time.AfterFunc(d, func() { <-l.slots })
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
	hosts   *hostLimits
	pol     Politeness
	timeout time.Duration
}

// limitedTransport wraps next (nil: http.DefaultTransport) for one crawl (ctx) of site under hosts.
func limitedTransport(ctx context.Context, next http.RoundTripper, hosts *hostLimits, site *Site) *hostTransport {
	if next == nil {
		next = http.DefaultTransport
	}
	return &hostTransport{crawl: ctx, next: next, hosts: hosts, pol: site.Politeness, timeout: site.Politeness.RequestTimeout.D()}
}

// RoundTrip implements http.RoundTripper.
func (t *hostTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	stop := context.AfterFunc(t.crawl, func() { cancel(context.Cause(t.crawl)) })
	end := func() { stop(); cancel(nil) }
	l := t.hosts.get(req.URL.Host, t.pol)
	if err := l.acquire(ctx); err != nil {
		end()
		if req.Body != nil {
			_ = req.Body.Close() // RoundTrip closes the body, on errors too
		}
		return nil, err
	}
	if t.timeout > 0 {
		var cancelTimeout context.CancelFunc
		ctx, cancelTimeout = context.WithTimeout(ctx, t.timeout)
		stopCrawl := end
		end = func() { cancelTimeout(); stopCrawl() }
	}
	resp, err := t.next.RoundTrip(req.WithContext(ctx))
	if err != nil {
		end()
		l.release()
		return nil, err
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, done: func() { end(); l.release() }}
	return resp, nil
}

// releasingBody calls done once, when the body is closed.
type releasingBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.done)
	return err
}
