package crawler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/robfig/cron/v3"
)

// DefaultSchedule is when `crawler run` crawls: every 10 minutes, on the minute, in Asia/Seoul.
// Listings on Korean booking sites move in minutes to hours; ten minutes keeps a booking's
// close within ~20 minutes (two misses) at one crawl per site per ten minutes.
const DefaultSchedule = "*/10 * * * *"

// DefaultShutdownTimeout is how long a crawl in progress may go on after SIGTERM before its
// context is cancelled: a crawl of the default sites takes seconds, and Docker's default stop
// grace period is 10 s, so compose files that use it raise stop_grace_period.
const DefaultShutdownTimeout = 30 * time.Second

// Schedule runs Job on a cron schedule until its Run's ctx ends.
type Schedule struct {
	// Spec is a standard 5-field cron spec ("*/10 * * * *") or a descriptor ("@hourly",
	// "@every 5s"; @every rounds to whole seconds, at least 1 s).
	Spec string
	// Location is the zone Spec is read in; nil means Asia/Seoul (Seoul()), never the machine's.
	Location *time.Location
	Logger   *slog.Logger
	// Job is one scheduled run. Its ctx is not the one Run got: it outlives it by
	// ShutdownTimeout so that a crawl in progress can finish, then it is cancelled.
	Job func(ctx context.Context)
	// ShutdownTimeout bounds how long Run waits for a running Job after ctx ends before cancelling
	// it; 0 means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// OnSkip is called when a run is skipped because the previous one is still going (optional).
	OnSkip func()
	// RunAtStart runs Job once as soon as Run starts, then on the schedule, so that a new user
	// does not wait up to a whole period to see anything happen. A scheduled time that comes while
	// this first run is still going is skipped like any other.
	RunAtStart bool
}

// Run starts the schedule and blocks until ctx ends; then it stops the schedule, waits up to
// ShutdownTimeout for a running Job, cancels the Job's ctx and waits for it to return (at most
// another ShutdownTimeout). A Job that panics is recovered and logged, and the schedule goes on;
// a Job still running when its next time comes is skipped, logged and reported to OnSkip. Run
// returns an error only for an invalid Spec, or when the Job ignored its cancelled ctx.
func (s Schedule) Run(ctx context.Context) error {
	if s.Logger == nil || s.Job == nil {
		return errors.New("schedule: Logger and Job are required")
	}
	loc := s.Location
	if loc == nil {
		loc = site.Seoul()
	}
	grace := s.ShutdownTimeout
	if grace <= 0 {
		grace = DefaultShutdownTimeout
	}
	cl := cronLogger{log: s.Logger, onSkip: s.OnSkip}
	// Recover is inside SkipIfStillRunning too: in cron v3.0.1 a panic through SkipIfStillRunning
	// never gives its token back, so after one panic every later run would be skipped forever
	// (TestScheduleRecoversPanic caught it). The outer Recover guards the wrappers themselves.
	// The chain wraps the job once, outside cron, so that the run at start and the scheduled runs
	// share one SkipIfStillRunning.
	chain := cron.NewChain(cron.Recover(cl), cron.SkipIfStillRunning(cl), cron.Recover(cl))
	c := cron.New(cron.WithLocation(loc))
	// The jobs' context survives ctx so that SIGTERM does not cut a crawl short at once.
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	job := chain.Then(cron.FuncJob(func() { s.Job(jobCtx) }))
	if _, err := c.AddJob(s.Spec, job); err != nil {
		return fmt.Errorf("parse schedule %q: %w", s.Spec, err)
	}
	c.Start()
	var first sync.WaitGroup
	if s.RunAtStart {
		first.Go(job.Run)
	}
	next := c.Entries()[0].Next
	s.Logger.InfoContext(ctx, "schedule started", "schedule", s.Spec, "location", loc.String(), "next_run", next,
		"run_at_start", s.RunAtStart)
	<-ctx.Done()

	cronDone := c.Stop().Done() // no new runs; done when the running one returns
	stopped := make(chan struct{})
	go func() {
		<-cronDone
		first.Wait()
		close(stopped)
	}()
	return awaitStop(ctx, s.Logger, stopped, cancelJobs, grace)
}

// awaitStop is a schedule's shutdown: it waits up to grace for stopped (the running jobs have
// returned), then cancels them and waits another grace.
func awaitStop(ctx context.Context, log *slog.Logger, stopped <-chan struct{}, cancelJobs context.CancelFunc, grace time.Duration) error {
	log.InfoContext(ctx, "schedule stopping", "shutdown_timeout", grace)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-stopped:
		return nil
	case <-t.C:
	}
	log.WarnContext(ctx, "crawl still running at the shutdown deadline; cancelling it", "shutdown_timeout", grace)
	cancelJobs()
	t.Reset(grace)
	select {
	case <-stopped:
		return nil
	case <-t.C:
		return fmt.Errorf("schedule: the running crawl ignored cancellation for %s", grace)
	}
}

// cronLogger adapts cron.Logger to slog: cron's chatter ("start", "wake", "run", "schedule") at
// Debug, a skipped run ("skip", from SkipIfStillRunning) at Warn and reported to onSkip, errors
// (a recovered panic with its stack) at Error.
type cronLogger struct {
	log    *slog.Logger
	onSkip func()
}

func (l cronLogger) Info(msg string, keysAndValues ...any) {
	if msg == "skip" {
		l.log.Warn("scheduled crawl skipped: the previous one is still running")
		if l.onSkip != nil {
			l.onSkip()
		}
		return
	}
	l.log.Debug("cron "+msg, keysAndValues...)
}

func (l cronLogger) Error(err error, msg string, keysAndValues ...any) {
	l.log.Error("cron "+msg, append([]any{"err", err}, keysAndValues...)...)
}
