package crawler

// One site's crawl within a run: collect its pages under its deadline and host shares, judge the
// result (complete, withheld page sets, a collapse), diff it against the last snapshot and emit
// its events: the spool's batch prepared, the snapshot saved naming it, then the batch committed
// (the package doc has the order and why).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/atomicfile"
)

// errSiteDeadline is the cause of a site's context ended by its deadline.
var errSiteDeadline = errors.New("site deadline reached")

// crawlSites crawls every job's site, up to MaxSites at the same time, each in a goroutine of its
// own (crawlSite, then its metrics, then done when not nil), and returns their summaries in the
// order of jobs. The events
// file takes each site's events in one locked write (EventLog.Append), so lines of parallel sites
// never interleave; snapshots are per site. A cancelled ctx still starts every site, which then
// ends at once with the cancellation as its error.
//
// Each site crawl is registered on its hosts (hostLimits.join) before it starts, the first
// MaxSites of them before any starts, so that a host shares its slots fairly from its first
// request on: a site that starts first cannot take every slot of a host another site is about to
// use.
func (r *Runner) crawlSites(ctx context.Context, jobs []Job, now func() time.Time, done func(int, SiteSummary)) []SiteSummary {
	n := r.MaxSites
	if n <= 0 {
		n = DefaultMaxSites
	}
	r.initOnce.Do(func() {
		if r.hosts == nil { // a test may have set its own
			r.hosts = newHostLimits(r.Sites)
		}
		r.slots = make(chan struct{}, n)
	})
	out := make([]SiteSummary, len(jobs))
	shares := make([]*hostShare, len(jobs))
	for i := range min(n, len(jobs)) {
		shares[i] = r.hosts.join(jobs[i].Site)
	}
	slots := r.slots
	var wg sync.WaitGroup
	for i, job := range jobs {
		slots <- struct{}{}
		if shares[i] == nil {
			shares[i] = r.hosts.join(job.Site)
		}
		wg.Go(func() {
			defer func() { <-slots }()
			defer shares[i].leave()
			s := r.crawlSite(ctx, job, now, shares[i])
			if r.Metrics != nil {
				r.Metrics.SiteCrawled(s)
			}
			out[i] = s
			if done != nil {
				done(i, s)
			}
		})
	}
	wg.Wait()
	return out
}

// siteDeadline is the bound of one crawl of site: its own deadline, else its PerSite deadline,
// else SiteDeadline; 0: none.
func (r *Runner) siteDeadline(st *site.Site) time.Duration {
	if st.Deadline > 0 {
		return st.Deadline.D()
	}
	if d := r.PerSite[st.Name].Deadline; d > 0 {
		return d
	}
	return r.SiteDeadline
}

// collect is Collect under the site's deadline. deadline is true when the deadline ended the
// crawl (the run's ctx still going): the partial result is returned with a nil error, and the
// crawl is incomplete. Any other error is Collect's.
func (r *Runner) collect(ctx context.Context, st *site.Site, start time.Time, deps CollectDeps, log *slog.Logger) (res Result, deadline bool, err error) {
	d := r.siteDeadline(st)
	if d <= 0 {
		res, err = Collect(ctx, st, start, deps)
		return res, false, err
	}
	cctx, cancel := context.WithTimeoutCause(ctx, d, errSiteDeadline)
	defer cancel()
	res, err = Collect(cctx, st, start, deps)
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(cctx), errSiteDeadline) {
		log.WarnContext(ctx, "site deadline reached: the crawl is cancelled and closes nothing", "deadline", d,
			"pages", res.Pages, "listings", len(res.Listings))
		return res, true, nil
	}
	return res, false, err
}

// crawlSite does one site's crawl, in steps: load the snapshot, collect, decide what the crawl
// may close (crawlOf, guardTargetsOf), diff, record it (noteDiff) and hand the events on (emit).
// Every failure ends up in the summary's Err. share is the crawl's registration on the run's
// hosts; it leaves them once the collect is done.
func (r *Runner) crawlSite(ctx context.Context, job Job, now func() time.Time, share *hostShare) (s SiteSummary) {
	st := job.Site
	start := now()
	s = SiteSummary{Source: st.Name, CrawlID: CrawlID(st.Name, start), At: start, Sets: job.Sets}
	log := r.Logger.With("site", st.Name, "crawl_id", s.CrawlID)
	if job.Sets != nil {
		log = log.With("page_sets", len(job.Sets))
	}
	defer func() {
		s.Duration = now().Sub(start)
		if s.Err != nil {
			log.ErrorContext(ctx, "site crawl failed", "err", s.Err, "duration", s.Duration)
			return
		}
		log.InfoContext(ctx, "site crawled", "pages", s.Pages, "rows", s.Rows, "rejected", s.Rejected,
			"listings", s.Listings, "failed_pages", len(s.FailedPages), "opened", s.Opened, "changed", s.Changed,
			"closed", s.Closed, "complete", s.Complete, "duration", s.Duration)
	}()

	prev, err := r.State.Load(st.Name)
	if err != nil {
		s.Err = err
		return s
	}
	deps := CollectDeps{Logger: r.Logger, Transport: r.Transport, Now: now, Getenv: r.Getenv, ListHint: prev.ListSeen, Sets: job.Sets, hosts: share}
	if r.Metrics != nil {
		deps.Metrics = r.Metrics
	}
	res, deadline, err := r.collect(ctx, st, start, deps, log)
	share.leave()
	if err != nil {
		// An invalid site or a cancelled run: a partial result is not diffed, the snapshot stays.
		s.Err = err
		return s
	}
	s.Pages, s.Rows, s.Rejected, s.Listings, s.FailedPages = res.Pages, res.Rows, res.Rejected, len(res.Listings), res.FailedPages
	s.FailedSets = res.FailedSets
	s.Incomplete = incompleteReason(res, deadline)
	s.Complete = s.Incomplete == ""

	crawl, reference := crawlOf(ctx, st, prev, res, s, log)
	guard := r.guardTargetsOf(ctx, st, prev, res, &crawl, &s, log)
	opt := r.Diff
	opt.MissesMinInterval = cmp.Or(r.PerSite[st.Name].MissesMinInterval, opt.MissesMinInterval)
	out, next, stats := Diff(prev, res.Listings, crawl, opt)
	next.ListSeen, next.TargetCollapses = cmp.Or(res.ListSeen, prev.ListSeen), guard.Next
	next.SpoolBatch = prev.SpoolBatch
	noteDiff(ctx, log, &s, crawl, res, stats, next, reference)
	complete := stats.Effective(crawl)
	s.Err = r.emit(ctx, log, AlertCrawl{Site: st.Name, CrawlID: s.CrawlID, Events: out, Next: next, First: prev.CrawlID == "",
		At: s.At, ConfirmAfter: r.PerSite[st.Name].ConfirmAfter, Covered: func(l events.Listing) bool { return complete && !crawl.withheld(l) }})
	if a, ok := r.Alerts.(AlertsAwaiting); ok && s.Err == nil {
		s.Awaiting = a.Awaiting(st.Name)
	}
	if s.Err == nil {
		for _, e := range out {
			if e.EventType != events.ListingClosed {
				s.Entered = append(s.Entered, events.Listing{Source: e.Source, CourseName: e.CourseName,
					CoursePart: e.CoursePart, PlayDate: e.PlayDate, TeeTime: e.TeeTime})
			}
		}
	}
	return s
}

// incompleteReason is why the collected result is incomplete (an Incomplete* reason), or "".
func incompleteReason(res Result, deadline bool) string {
	switch {
	case deadline:
		return IncompleteDeadline
	case len(res.TimedOutHosts) > 0:
		return IncompleteTimeouts
	case len(res.FailedPages) > 0:
		return IncompleteFailedPages
	case res.MaxPagesHit:
		return IncompleteMaxPages
	case !res.Complete:
		return IncompleteCancelled
	}
	return ""
}

// crawlOf is the Crawl that Diff gets: complete as s says, collapsed against reference (the last
// complete crawl's listing count; a snapshot written before it was kept falls back to its open
// listings), and complete per page set when every failed page names the listings it would have
// shown (see withheldBy), unless the pages that answered collapsed against what they showed before.
// A partial crawl (s.Sets) fetched only the listings of its page sets (Crawl.Fetched): its
// reference is the open listings of those page sets in prev, never the last complete crawl's.
func crawlOf(ctx context.Context, st *site.Site, prev Snapshot, res Result, s SiteSummary, log *slog.Logger) (crawl Crawl, reference int) {
	defer func() { // a date not open yet is no evidence: its listings do not close
		if len(res.NotOpenSets) > 0 {
			crawl.Withheld = withhold(crawl.Withheld, res.NotOpenSets)
		}
	}()
	crawl = Crawl{ID: s.CrawlID, Source: st.Name, At: s.At, Complete: s.Complete}
	reference = prev.LastCompleteSeen
	if prev.LastCompleteAt.IsZero() {
		reference = prev.OpenCount()
	}
	if s.Sets != nil {
		crawl.Fetched = covered(s.Sets)
		reference = openIn(prev, crawl.Fetched)
	}
	crawl.Collapsed = s.Complete && Collapsed(st.MinCompleteRatio, reference, len(res.Listings))
	if s.Incomplete != IncompleteFailedPages || res.MaxPagesHit || ctx.Err() != nil {
		return crawl, reference
	}
	if ok, withheld := withheldBy(res.FailedSets); ok {
		before := openIn(prev, func(l events.Listing) bool { return !withheld(l) && (crawl.Fetched == nil || crawl.Fetched(l)) })
		if !Collapsed(st.MinCompleteRatio, before, len(res.Listings)) {
			crawl.Complete, crawl.Withheld = true, withheld // noteDiff logs it
		}
	}
	return crawl, reference
}

// covered reports the listings the page sets cover.
func covered(sets []PageSet) func(events.Listing) bool {
	return withhold(nil, sets)
}

// openIn counts the open listings of prev that in reports.
func openIn(prev Snapshot, in func(events.Listing) bool) int {
	n := 0
	for _, e := range prev.Listings {
		if e.Open() && in(e.Listing) {
			n++
		}
	}
	return n
}

// guardTargetsOf runs the per-target collapse guard on a crawl that counts as complete and not
// collapsed: the page sets of a collapsed target are withheld from crawl, and s becomes
// incomplete (IncompleteCollapsed). Otherwise the guard's counts carry over unchanged.
func (r *Runner) guardTargetsOf(ctx context.Context, st *site.Site, prev Snapshot, res Result, crawl *Crawl, s *SiteSummary, log *slog.Logger) targetGuard {
	if !crawl.Complete || crawl.Collapsed {
		return targetGuard{Next: prev.TargetCollapses}
	}
	guard := guardTargets(st, prev, res.Listings, *crawl, cmp.Or(max(r.Diff.CollapseCrawls, 0), DefaultCollapseCrawls), cmp.Or(r.Diff.Location, site.Seoul()))
	r.logTargetGuard(ctx, log, guard)
	if len(guard.Withheld) > 0 {
		crawl.Withheld = withhold(crawl.Withheld, guard.Withheld)
		s.FailedSets = append(s.FailedSets, guard.Withheld...)
		if s.Complete {
			s.Complete, s.Incomplete = false, IncompleteCollapsed
		}
	}
	return guard
}

// noteDiff records the diff in s (an unbelieved collapse makes it incomplete; the counts) and
// logs what a reader of the log must know: a believed collapse, an incomplete crawl, dropped
// listings.
func noteDiff(ctx context.Context, log *slog.Logger, s *SiteSummary, crawl Crawl, res Result, stats DiffStats, next Snapshot, reference int) {
	switch {
	case crawl.Collapsed && stats.Believed:
		log.WarnContext(ctx, "collapse believed: the listing count stayed low with the same listings; missing listings count as missed",
			"collapsed_crawls", stats.Collapses, "listings", len(res.Listings), "last_complete_listings", reference)
	case crawl.Collapsed:
		s.Complete, s.Incomplete = false, IncompleteCollapsed
	}
	s.Collapses, s.LastComplete, s.IncompleteRuns = stats.Collapses, next.LastCompleteAt, next.Incomplete
	if crawl.Fetched != nil && s.Complete && !crawl.Collapsed && crawl.Withheld == nil {
		s.LastComplete = crawl.At // complete for what it fetched: the site answers (/healthz)
	}
	if !s.Complete {
		msg := "crawl incomplete: no listing closes on its evidence"
		args := []any{"reason", s.Incomplete, "failed_pages", len(res.FailedPages), "listings", len(res.Listings),
			"last_complete_listings", reference, "collapsed_crawls", stats.Collapses, "incomplete_crawls_in_a_row", next.Incomplete}
		if crawl.Complete { // complete per page set (crawlOf, guardTargetsOf)
			msg = "crawl incomplete: closes withheld only for the failed page sets; the other listings close on its evidence"
			args = append(args, "failed_sets", pageSets(s.FailedSets))
		}
		log.WarnContext(ctx, msg, args...)
	}
	s.Opened, s.Changed, s.Closed = stats.Opened, stats.Changed, stats.Closed
	for _, inv := range stats.Invalid {
		log.WarnContext(ctx, "listing dropped: it would not make a valid event", "url", inv.Listing.URL,
			"listing_key", inv.Listing.Key(), "err", inv.Err)
	}
}

// emit hands one site crawl's events on, by the commit rule (an event is sendable iff the
// snapshot recording its transition was saved): the spool first (one synced batch), then the
// alerts' claims (the snapshot encoded beside them: claimEncoding), then the snapshot written,
// which names the batch, then the batch's commit, which makes
// it sendable and copies it to the events file. If the spool, the claims or the save fails, the
// batch is aborted, nothing is published and the old snapshot stays, so the next crawl derives
// the same transitions again, with the same ids (they do not depend on the crawl) but from the
// page as it is then: no file ever holds the failed crawl's content. A claim already made is not
// made again (its key is the watch, channel and event id). A failed save is judged by what is on
// disk: when the new snapshot is in place (its rename done, the directory sync failed), it names
// the batch and the next crawl diffs against it, so the batch is committed (savedAnyway). A crash
// between the save and the commit is resolved at the next start by the snapshot (spool.Open).
func (r *Runner) emit(ctx context.Context, log *slog.Logger, c AlertCrawl) error {
	site, out, next := c.Site, c.Events, c.Next
	b, err := r.Spool.PrepareOn(site, next.SpoolBatch, out) // the batch the snapshot it diffed against names
	if err != nil {
		return fmt.Errorf("%w (the snapshot is not saved; the next crawl derives the crawl's %d events again)", err, len(out))
	}
	if b.ID != 0 {
		next.SpoolBatch = b.ID
	}
	enc, err := r.claimEncoding(ctx, c, next)
	if err != nil {
		r.Spool.Abort(b)
		return fmt.Errorf("claim alerts: %w (the snapshot is not saved; the next crawl derives the crawl's %d events again)", err, len(out))
	}
	if err := enc.write(r.State); err != nil {
		if !r.savedAnyway(next, err) {
			r.Spool.Abort(b)
			return fmt.Errorf("%w (the crawl's %d events are not published; the next crawl derives them again)", err, len(out))
		}
		log.WarnContext(ctx, "snapshot saved, durability unknown: the new snapshot is in place, so the crawl's events are committed "+
			"(if a machine crash loses its rename, the next crawl derives them again under the same ids)", "err", err, "events", len(out))
	}
	if err := r.Spool.Commit(b); err != nil {
		return err
	}
	if b.Dropped > 0 && r.EventsOut != nil {
		// The spool was full: Kafka will not get them (counted there), the events file still
		// does, now that the snapshot recording them is saved.
		if err := r.EventsOut.Append(out); err != nil {
			return err
		}
		if err := r.EventsOut.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// claimEncoding claims the crawl's alerts (with r.Alerts) while the snapshot next is encoded beside
// it: the JSON is the CPU half of a save, and a claim spends its time in SQLite, so on two cores a
// crawl with alerts pays the longer of the two instead of both (BenchmarkCrawlAlerts, on_vs_off).
// Nothing reaches the disk here: the snapshot is written only after the claim is committed, the
// order emit promises. The claim only reads c.Next (AlertCrawl). An error is the claim's; an
// encoding error is left in the result, for the save to report.
func (r *Runner) claimEncoding(ctx context.Context, c AlertCrawl, next Snapshot) (savable, error) {
	if r.Alerts == nil {
		return r.State.savable(next), nil
	}
	done := make(chan savable, 1)
	go func() { done <- r.State.savable(next) }()
	err := r.Alerts.Claim(ctx, c)
	return <-done, err
}

// savable is a snapshot encoded for its save, or why it could not be.
type savable struct {
	snap EncodedSnapshot
	err  error
}

func (s StateDir) savable(snap Snapshot) savable {
	enc, err := s.Encode(snap)
	return savable{enc, err}
}

// write saves e in s (StateDir.Write), or returns its encoding's error.
func (e savable) write(s StateDir) error {
	if e.err != nil {
		return e.err
	}
	return s.Write(e.snap)
}

// savedAnyway reports whether a save that failed with err left next in place, judged by the
// snapshot on disk (it is next: the same crawl and batch), or by err (a failed directory sync
// comes after the rename) when the snapshot cannot be read back. The old snapshot in place means
// the save did not happen.
func (r *Runner) savedAnyway(next Snapshot, err error) bool {
	cur, lerr := r.State.Load(next.Source)
	if lerr != nil {
		return errors.Is(err, atomicfile.ErrDirNotSynced)
	}
	return cur.CrawlID == next.CrawlID && cur.SpoolBatch == next.SpoolBatch
}
