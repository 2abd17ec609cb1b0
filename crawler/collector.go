package crawler

import (
	"context"
	"fmt"
	"net/http"

	"github.com/gocolly/colly/v2"
	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// newCollector builds the colly collector for site: async, bounded by the site's politeness (per
// host across sites when transport is the run's hostTransport), robots.txt obeyed unless the site
// opts out, bodies cut one byte past max_body_bytes so an oversized page is seen.
func newCollector(ctx context.Context, st *site.Site, transport http.RoundTripper) (*colly.Collector, error) {
	p := st.Politeness
	c := colly.NewCollector(
		colly.StdlibContext(ctx),
		colly.Async(true),
		colly.UserAgent(p.UserAgent),
		colly.MaxBodySize(p.MaxBodyBytes+1),
		colly.AllowedDomains(st.AllowedDomains...),
	)
	// NewCollector applies COLLY_* environment variables after the options; set again everything
	// this crawler relies on so that the environment cannot override the sites file.
	c.UserAgent = p.UserAgent
	c.MaxBodySize = p.MaxBodyBytes + 1
	c.IgnoreRobotsTxt = p.IgnoreRobotsTxt
	c.AllowedDomains = st.AllowedDomains
	c.AllowURLRevisit = false // retries revisit through Request.Retry, which skips the visited check
	c.MaxDepth, c.MaxRequests = 0, 0
	c.CacheDir = ""
	c.ParseHTTPErrorResponse = false
	c.Async = true
	c.SetRequestTimeout(p.RequestTimeout.D())
	if transport == nil {
		transport = http.DefaultTransport
	}
	c.WithTransport(rawCharset{transport}) // the crawler decodes bodies itself (decodeBody)
	rule := &colly.LimitRule{
		DomainGlob:  "*",
		Parallelism: p.Parallelism,
		Delay:       p.Delay.D(),
		RandomDelay: p.RandomDelay.D(),
	}
	if _, ok := transport.(*hostTransport); ok {
		// The run's host limits space the requests and time each one once it has its slot.
		rule.Delay, rule.RandomDelay = 0, 0
		c.SetRequestTimeout(0)
	}
	err := c.Limit(rule)
	if err != nil {
		return nil, fmt.Errorf("limit rule: %w", err)
	}
	return c, nil
}
