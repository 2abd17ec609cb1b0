package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/spool"
)

// ErrCrawlFailed is the meaning of a Run error: at least one site's crawl errored or was
// incomplete. `crawler once` exits non-zero on it; the schedule logs it and carries on.
var ErrCrawlFailed = errors.New("crawl failed")

// Reasons a site's crawl is incomplete (SiteSummary.Incomplete, key reason in the log).
const (
	IncompleteFailedPages = "failed_pages" // a page failed after its retries, or was refused
	IncompleteMaxPages    = "max_pages"    // the max_pages guard stopped the crawl
	IncompleteCollapsed   = "collapsed"    // below half the last complete crawl's listings, of the site or of one target (guardTargets), not yet repeated DiffOptions.CollapseCrawls times
	IncompleteCancelled   = "cancelled"    // the run's context ended mid-crawl
	IncompleteDeadline    = "deadline"     // the site's deadline (Site.Deadline, else Runner.SiteDeadline) ended the crawl
	IncompleteTimeouts    = "timeouts"     // two requests in a row to one host timed out: the crawl stopped requesting that host (hostLimit)
)

// DefaultMaxSites is how many sites a Run crawls at the same time when Runner.MaxSites is 0.
const DefaultMaxSites = 4

// Alerts is the runner's hook for crawler-side alerts (implemented in cmd/crawler; package
// crawler imports no alert package). Claim is called once per site crawl, after the crawl's
// events are in the events file and before its snapshot is saved, with every event of the crawl
// (possibly none), the site's name, the crawl id and the snapshot to be saved (AlertCrawl). It must make the alerts of those events
// durable (one synced transaction) before it returns, and must not send: sending runs beside the
// crawl. An error keeps the old snapshot and publishes nothing, so the next crawl derives the
// same transitions with the same event ids and claims them again (a claim that exists is not
// made twice). Sites may be crawled concurrently: Claim is called from several goroutines.
type Alerts interface {
	Claim(ctx context.Context, c AlertCrawl) error
}

// AlertsAwaiting is an Alerts hook whose alerts may wait for a confirm crawl (confirm_after):
// after each crawl of a site the Runner asks it which listings of the site still wait
// (SiteSummary.Awaiting), and the schedule makes their page sets' confirm crawls due, watched or
// not.
type AlertsAwaiting interface {
	Awaiting(site string) []events.Listing
}

// AlertCrawl is one site crawl as the Alerts hook sees it.
type AlertCrawl struct {
	Site, CrawlID string
	Events        []events.Event // every event of the crawl (possibly none)
	// Next is the snapshot about to be saved: what is open now, for a watch that asks for the
	// first time (Snapshot.Openings). Claim only reads it: the Runner encodes it for the save
	// beside the claim (writing it only after the claim returns).
	Next Snapshot
	// First: the source had no snapshot before (a fresh state dir, a new site): its openings
	// were open before the crawler looked, not just opened.
	First bool

	// What confirming an alert needs (#51 item 3, confirm_after): At is when the crawl looked;
	// ConfirmAfter the site's confirm_after (SiteRun; 0: an alert goes out at its first sighting);
	// Covered reports whether the crawl counts as complete for a listing's page set (fetched,
	// answered, not withheld), so that its presence in Next, or its absence, is evidence. An
	// opening first seen at t waits for a crawl with Covered and At >= t + ConfirmAfter: it is
	// confirmed when Next still shows it, withheld when it closes. The schedule makes that crawl
	// due at t + ConfirmAfter for its page set (SiteSchedule, with AlertsAwaiting).
	At           time.Time
	ConfirmAfter time.Duration
	Covered      func(events.Listing) bool
}

// EventRefs are pointers to the crawl's Events, in order (what the alert service claims).
func (c AlertCrawl) EventRefs() []*events.Event { return eventRefs(c.Events) }

// Runner runs one crawl of every configured site: per site it loads the previous snapshot,
// collects the site, diffs, appends the events to the spool as a batch, saves the next snapshot
// naming it and commits it (crawlSite, emit): the one way out of a crawl, to Kafka (the spool's
// sender) and to EventsOut. Up to MaxSites sites are crawled at the same time, so one slow or dead site does
// not hold the others; their politeness is per host across sites (hostLimits: the sites on one
// host share the strictest of their limits), so parallel sites never add up their load on one
// server. Each site's crawl is bounded by its deadline. A site that errors does not stop the
// others. Fields other than Sites, State and Logger are optional. A Runner must not run twice at
// the same time (the schedule guarantees it); two Runners, in one process or two, never crawl
// one state dir at the same time: Run holds the dir's lock (see Lock).
type Runner struct {
	Sites  []*site.Site
	State  StateDir
	Logger *slog.Logger

	Alerts    Alerts    // nil: no crawler-side alerts
	EventsOut *EventLog // nil: no JSONL copy of the events (it is fed from Spool)
	// Spool is the state dir's outbox (OpenSpool): each site crawl's events are a batch in it,
	// sendable and copied to EventsOut only once the snapshot naming the batch is saved. nil: the
	// first Run opens one (without retention: no Kafka) and Unlock closes it.
	Spool     *spool.Spool
	Metrics   RunMetrics          // nil: not counted (cmd/crawler: Prometheus)
	Now       func() time.Time    // the crawl clock: crawl ids, occurred_at, play_date inference; nil: time.Now
	Transport http.RoundTripper   // nil: http.DefaultTransport
	Diff      DiffOptions         // MissesToClose (default 2), CollapseCrawls (default 3) and Location (default Asia/Seoul)
	Getenv    func(string) string // reads the sites' login credentials; nil: os.Getenv
	MaxSites  int                 // sites crawled at the same time; 0: DefaultMaxSites
	// SiteDeadline bounds one site's crawl when the site sets no deadline of its own; 0: none.
	SiteDeadline time.Duration
	// PerSite, by site name, is what `crawler run` sets per site from its SiteTimes.
	PerSite map[string]SiteRun

	initOnce sync.Once
	hosts    *hostLimits   // the per-host politeness, built from Sites by the first Run
	slots    chan struct{} // MaxSites, shared by concurrent RunSites

	lock     *StateLock // held by Lock, or by Run for its duration
	spoolMu  sync.Mutex // opening Spool in concurrent RunSites
	ownSpool bool       // Run opened Spool; Unlock closes it
}

// SiteRun is one site's own settings of a Runner (Runner.PerSite).
type SiteRun struct {
	// Deadline overrides SiteDeadline for a site without a deadline: key (0.8 × the site's own
	// interval, SiteTimes.Deadline); 0: SiteDeadline.
	Deadline time.Duration
	// MissesMinInterval is the site's DiffOptions.MissesMinInterval (SiteTimes.MissesMinInterval).
	MissesMinInterval time.Duration
	// ConfirmAfter is the site's confirm_after (SiteTimes.ConfirmAfter), for AlertCrawl.
	ConfirmAfter time.Duration
}

// Lock takes the state dir's lock (StateDir.Lock) and holds it until Unlock: a crawler process
// takes it once at start-up, so that a second crawler on the same dir refuses to start. An error
// wraps ErrStateLocked when another crawler holds it. Run takes the lock itself, for its
// duration, when Lock was not called.
func (r *Runner) Lock() error {
	if r.lock != nil {
		return nil
	}
	l, err := r.State.Lock()
	if err != nil {
		return err
	}
	r.lock = l
	return nil
}

// OpenSpool opens the spool in State.Dir/spool (under the lock, which must be held, and before
// the first Run) with opts, resolving a batch an interrupted crawl left by its site's saved
// snapshot and copying to EventsOut what it lacks; it sets Spool. The caller closes it after
// Unlock.
func (r *Runner) OpenSpool(opts spool.Options) (*spool.Spool, error) {
	if r.lock == nil {
		return nil, errors.New("crawler runner: OpenSpool without the state dir's lock")
	}
	opts.Resolve = func(site string) (uint64, error) {
		snap, err := r.State.Load(site)
		return snap.SpoolBatch, err
	}
	if opts.Out == nil && r.EventsOut != nil {
		opts.Out = r.EventsOut
	}
	if opts.Logger == nil {
		opts.Logger = r.Logger
	}
	sp, err := spool.Open(filepath.Join(r.State.Dir, "spool"), opts)
	if err != nil {
		return nil, err
	}
	r.Spool = sp
	return sp, nil
}

// ownSpoolLocked opens Spool without options (no Kafka: a batch is done once in EventsOut) when
// none was opened, for Unlock to close.
func (r *Runner) ownSpoolLocked() error {
	r.spoolMu.Lock()
	defer r.spoolMu.Unlock()
	if r.Spool != nil {
		return nil
	}
	if _, err := r.OpenSpool(spool.Options{}); err != nil {
		return err
	}
	r.ownSpool = true
	return nil
}

// Unlock releases the lock taken by Lock (closing the spool Run opened).
func (r *Runner) Unlock() {
	if r.ownSpool && r.Spool != nil {
		if err := r.Spool.Close(); err != nil && r.Logger != nil {
			r.Logger.Warn("close spool", "err", err)
		}
		r.Spool, r.ownSpool = nil, false
	}
	r.lock.Unlock()
	r.lock = nil
}

// RunSummary is what one Run did.
type RunSummary struct {
	Start    time.Time
	Duration time.Duration
	Sites    []SiteSummary
}

// Failed reports whether any site's crawl errored or was incomplete.
func (s RunSummary) Failed() bool {
	for _, site := range s.Sites {
		if site.Err != nil || !site.Complete {
			return true
		}
	}
	return false
}

// Events returns the number of events of every site.
func (s RunSummary) Events() int {
	n := 0
	for _, site := range s.Sites {
		n += site.Opened + site.Changed + site.Closed
	}
	return n
}

// SiteSummary is one site's crawl in a run. Complete is false when the crawl was incomplete
// (Incomplete says why) or errored (Err); an incomplete crawl still emitted opened and changed
// events and saved its snapshot, but closed nothing.
type SiteSummary struct {
	Source      string
	CrawlID     string
	At          time.Time
	Pages       int
	Rows        int
	Rejected    int
	Listings    int
	FailedPages []string
	FailedSets  []PageSet // the page sets of the failed pages (Result.FailedSets)
	Opened      int
	Changed     int
	Closed      int
	Complete    bool
	Incomplete  string
	Duration    time.Duration
	Err         error

	Collapses      int       // collapsed crawls in a row with the same listings, this one included (0: not collapsed)
	LastComplete   time.Time // the site's last complete crawl (this one when Complete, partial or not); zero: none yet
	IncompleteRuns int       // crawls since the last complete one (0 when Complete); set when Err is nil

	// Sets are the page sets a partial crawl fetched (Job.Sets); nil: the whole site.
	Sets []PageSet
	// Entered are the listings the crawl opened or changed: the schedule makes their page sets
	// due for a confirm crawl (confirm_after) when they are watched.
	Entered []events.Listing
	// Awaiting are the listings whose alerts wait for their confirmation after the crawl
	// (AlertsAwaiting): the schedule makes their page sets due for a confirm crawl, watched or not.
	Awaiting []events.Listing
}

// CrawlID is the crawl_id of source's crawl started at start: "<source>@<start as
// events.FormatTime spells it>" (RFC 3339 at +09:00 with microseconds), e.g.
// "sim-golf@2025-12-28T10:00:00.000000+09:00". It is informational in the events, and the epoch of
// a new snapshot (see Snapshot; a snapshot keeps the epoch it has, so the event ids of a state
// written before this spelling stay what they were), so two crawls of one source must not start
// within the same microsecond.
func CrawlID(source string, start time.Time) string {
	return source + "@" + events.FormatTime(start)
}

// Run crawls every site once. It returns the summary and, when any site errored or was incomplete,
// an error wrapping ErrCrawlFailed (and the sites' errors). Each site's events reach EventsOut,
// synced, once its snapshot is saved (through Spool).
func (r *Runner) Run(ctx context.Context) (RunSummary, error) {
	return r.RunSites(ctx, r.Sites)
}

// RunSites is Run for some of the Sites only. Unlike Run, RunSites may run concurrently with
// itself on disjoint sites once Lock is held: the calls share the runner's MaxSites slots and its
// per-host politeness.
func (r *Runner) RunSites(ctx context.Context, sites []*site.Site) (RunSummary, error) {
	return r.RunJobs(ctx, Jobs(sites), nil)
}

// Job is one site crawl a schedule asks the runner for.
type Job struct {
	Site *site.Site
	// Sets, when not nil, are the only page sets to fetch: a crawl partial by design (#51; the
	// watched page sets due, a confirm crawl). Its other page sets close nothing (Crawl.Fetched),
	// and it is neither the collapse guard's reference nor one of its collapse crawls. nil: the
	// whole site.
	Sets []PageSet
}

// Jobs are the jobs of a whole crawl of each site.
func Jobs(sites []*site.Site) []Job {
	jobs := make([]Job, len(sites))
	for i, s := range sites {
		jobs[i] = Job{Site: s}
	}
	return jobs
}

// RunJobs is RunSites for the jobs of one moment (SiteSchedule), with done, when not nil, called
// with each job's index and summary as soon as that site's crawl has ended (its events handed
// on), while the other jobs of the call may still run: a schedule knows per site when it may
// start that site's next crawl (review 4, F9).
func (r *Runner) RunJobs(ctx context.Context, jobs []Job, done func(i int, s SiteSummary)) (RunSummary, error) {
	if r.Logger == nil {
		return RunSummary{}, errors.New("crawler runner: Logger is required")
	}
	now := r.Now
	if now == nil {
		now = time.Now
	}
	if r.lock == nil {
		if err := r.Lock(); err != nil {
			r.Logger.ErrorContext(ctx, "crawl refused", "state_dir", r.State.Dir, "err", err)
			return RunSummary{}, fmt.Errorf("%w: %w", ErrCrawlFailed, err)
		}
		defer r.Unlock()
	}
	if err := r.ownSpoolLocked(); err != nil {
		r.Logger.ErrorContext(ctx, "crawl refused", "state_dir", r.State.Dir, "err", err)
		return RunSummary{}, fmt.Errorf("%w: %w", ErrCrawlFailed, err)
	}
	sum := RunSummary{Start: now()}
	var errs []error
	sum.Sites = r.crawlSites(ctx, jobs, now, done)
	for _, s := range sum.Sites {
		if s.Err != nil {
			errs = append(errs, fmt.Errorf("site %s: %w", s.Source, s.Err))
		}
	}
	end := now()
	sum.Duration = end.Sub(sum.Start)
	outcome := OutcomeOK
	if sum.Failed() || len(errs) > 0 {
		outcome = OutcomeFailed
	}
	if r.Metrics != nil {
		r.Metrics.RunFinished(outcome, end, sum.Duration)
	}
	r.Logger.InfoContext(ctx, "run finished", "outcome", outcome, "sites", len(sum.Sites),
		"events", sum.Events(), "duration", sum.Duration)
	if outcome == OutcomeFailed {
		incomplete := 0
		for _, s := range sum.Sites {
			if s.Err == nil && !s.Complete {
				incomplete++
			}
		}
		err := fmt.Errorf("%w: %d of %d sites incomplete, %d errored", ErrCrawlFailed, incomplete, len(sum.Sites), len(errs))
		return sum, errors.Join(append([]error{err}, errs...)...)
	}
	return sum, nil
}
