package crawler

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// errSiteDeadline is the cause of a site's context ended by its deadline.
var errSiteDeadline = errors.New("site deadline reached")

// crawlSites crawls every site, up to MaxSites at the same time, each in a goroutine of its own
// (crawlSite, then its metrics), and returns their summaries in the order of Sites. The events
// file takes each site's events in one locked write (EventLog.Append), so lines of parallel sites
// never interleave; snapshots are per site. A cancelled ctx still starts every site, which then
// ends at once with the cancellation as its error.
func (r *Runner) crawlSites(ctx context.Context, now func() time.Time) []SiteSummary {
	if r.hosts == nil {
		r.hosts = newHostLimits(r.Sites)
	}
	n := r.MaxSites
	if n <= 0 {
		n = DefaultMaxSites
	}
	out := make([]SiteSummary, len(r.Sites))
	slots := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, site := range r.Sites {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			s := r.crawlSite(ctx, site, now)
			if r.Metrics != nil {
				r.Metrics.SiteCrawled(s)
			}
			out[i] = s
		})
	}
	wg.Wait()
	return out
}

// siteDeadline is the bound of one crawl of site: its own deadline, else SiteDeadline; 0: none.
func (r *Runner) siteDeadline(site Site) time.Duration {
	if site.Deadline > 0 {
		return site.Deadline.D()
	}
	return r.SiteDeadline
}

// collect is Collect under the site's deadline. deadline is true when the deadline ended the
// crawl (the run's ctx still going): the partial result is returned with a nil error, and the
// crawl is incomplete. Any other error is Collect's.
func (r *Runner) collect(ctx context.Context, site Site, start time.Time, deps CollectDeps, log *slog.Logger) (res Result, deadline bool, err error) {
	d := r.siteDeadline(site)
	if d <= 0 {
		res, err = Collect(ctx, site, start, deps)
		return res, false, err
	}
	cctx, cancel := context.WithTimeoutCause(ctx, d, errSiteDeadline)
	defer cancel()
	res, err = Collect(cctx, site, start, deps)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(cctx), errSiteDeadline) {
		log.WarnContext(ctx, "site deadline reached: the crawl is cancelled and closes nothing", "deadline", d,
			"pages", res.Pages, "listings", len(res.Listings))
		return res, true, nil
	}
	return res, false, err
}
