package suggest

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// Page is one answer of the site.
type Page struct {
	Request string // what was asked (the crawler's page key: URL, or method, URL and body)
	Status  int
	Body    []byte
	Err     error // the crawler gave up on the page (status, robots.txt, size)
}

// Fetcher fetches one request the way a crawl does (crawler.Collect: robots.txt obeyed, the
// politeness's timeout and retries, the crawler's decoding of the page), so that what suggest
// sees is what the crawl will see.
type Fetcher struct {
	Logger     *slog.Logger
	Transport  http.RoundTripper // nil: http.DefaultTransport
	Politeness site.Politeness
	// Getenv reads a login's credentials (FetchLoggedIn); nil: no login can be made.
	Getenv func(string) string
	// Charset decodes every page (the entry's charset: key); "": as each page declares itself.
	// An alert-only answer declares nothing, so the probe reads it in the charset of the rows' page.
	Charset site.Charset
}

// Fetch sends rt for the play date date (and target, nil for none) with extra headers added
// (the copied request's credentials, for the first look) and returns the answer.
func (f Fetcher) Fetch(ctx context.Context, rt site.RequestTemplate, target site.Target, date time.Time, extra http.Header) (Page, error) {
	return f.fetch(ctx, rt, target, date, extra, nil, nil, nil)
}

// FetchCapturing sends capturing (a request with capture:) and then rt, which reads what it
// captured ({{.Captured.NAME}}), as a crawl sends them (over one cookie jar), and returns rt's
// answer, or the capture's failure.
func (f Fetcher) FetchCapturing(ctx context.Context, capturing, rt site.RequestTemplate, target site.Target, date time.Time) (Page, error) {
	return f.fetch(ctx, rt, target, date, nil, nil, nil, &capturing)
}

// FetchLoggedIn is Fetch after the login (the crawler's login step, its credentials read with
// Getenv).
func (f Fetcher) FetchLoggedIn(ctx context.Context, rt site.RequestTemplate, target site.Target, date time.Time, login *site.Login) (Page, error) {
	return f.fetch(ctx, rt, target, date, nil, login, nil, nil)
}

// FetchEnv is Fetch of a request that reads an env block's values ({{.Env.NAME}}, env NAME →
// its variable), read with Getenv as a crawl reads them.
func (f Fetcher) FetchEnv(ctx context.Context, rt site.RequestTemplate, target site.Target, date time.Time, extra http.Header, env map[string]string) (Page, error) {
	return f.fetch(ctx, rt, target, date, extra, nil, env, nil)
}

func (f Fetcher) fetch(ctx context.Context, rt site.RequestTemplate, target site.Target, date time.Time, extra http.Header, login *site.Login,
	env map[string]string, capturing *site.RequestTemplate) (Page, error) {
	rt.Headers = copyMap(rt.Headers)
	for k, vs := range extra {
		if rt.Headers == nil {
			rt.Headers = map[string]string{}
		}
		rt.Headers[k] = literal(joinHeader(vs))
	}
	spec := site.SiteSpec{
		Name:     "suggest",
		Requests: []site.RequestTemplate{rt},
		// Nothing is read from the page here: only its bytes are wanted.
		Row: "suggest-reads-no-row",
		Fields: site.Fields{
			"course": {Value: "-"}, "round_date": {Value: "2026-01-01"}, "tee_time": {Value: "06:00"},
		},
		Politeness: f.Politeness,
		Login:      login,
		Env:        env,
		Charset:    f.Charset,
	}
	if target != nil {
		spec.Targets = []site.Target{target}
	}
	spec.Politeness.MaxPages = 1
	if capturing != nil {
		spec.Requests = []site.RequestTemplate{*capturing, rt}
		spec.Politeness.MaxPages = 2
	}
	st, err := spec.Compile()
	if err != nil {
		return Page{}, fmt.Errorf("fetch: %w", err)
	}
	var (
		mu   sync.Mutex
		page *Page
	)
	logger := f.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	_, err = crawler.Collect(ctx, st, date.Add(12*time.Hour), crawler.CollectDeps{
		Logger: logger, Transport: f.Transport, Getenv: f.getenv(),
		OnPage: func(p crawler.PageReport) {
			mu.Lock()
			defer mu.Unlock()
			if len(p.Captured) > 0 && p.Err == nil {
				return // the capturing request's page: rt's is wanted
			}
			page = &Page{Request: p.Request, Status: p.Status, Body: p.Body, Err: p.Err}
		},
	})
	if err != nil {
		return Page{}, fmt.Errorf("fetch: %w", err)
	}
	if page == nil {
		return Page{}, fmt.Errorf("fetch %s: the crawler reported no page", rt.URL)
	}
	return *page, nil
}

// delay is the politeness's delay between two requests (site.DefaultDelay unless set).
func (f Fetcher) delay() time.Duration {
	switch {
	case f.Politeness.NoDelay:
		return 0
	case f.Politeness.Delay > 0:
		return time.Duration(f.Politeness.Delay)
	}
	return site.DefaultDelay
}

func joinHeader(vs []string) string {
	out := ""
	for i, v := range vs {
		if i > 0 {
			out += "; "
		}
		out += v
	}
	return out
}

func copyMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (f Fetcher) getenv() func(string) string {
	if f.Getenv == nil {
		return func(string) string { return "" }
	}
	return f.Getenv
}
