package crawler

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// runSchedule runs s in the background; the returned func cancels it and returns Run's error.
func runSchedule(t *testing.T, s Schedule) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- s.Run(ctx) }()
	return func() error {
		cancel()
		return testkit.Recv(t, errc, 15*time.Second, "Schedule.Run after its context was cancelled")
	}
}

// TestScheduleSkipsOverlappingRun: a job slower than the interval makes the next run skip, which
// is counted and logged, and runs never overlap.
func TestScheduleSkipsOverlappingRun(t *testing.T) {
	t.Parallel()
	var (
		running, overlaps, runs atomic.Int32
		skips                   atomic.Int32
	)
	logs := &testkit.SyncBuffer{}
	m := newTestMetrics(nil)
	stop := runSchedule(t, Schedule{
		Spec:   "@every 1s",
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Job: func(ctx context.Context) {
			if running.Add(1) > 1 {
				overlaps.Add(1)
			}
			defer running.Add(-1)
			runs.Add(1)
			select {
			case <-time.After(2500 * time.Millisecond):
			case <-ctx.Done():
			}
		},
		OnSkip: func() { skips.Add(1); m.SkippedRun() },
	})
	testkit.WaitFor(t, 10*time.Second, "a skipped run", func() bool { return skips.Load() > 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if overlaps.Load() != 0 || runs.Load() == 0 {
		t.Errorf("runs %d, overlapping runs %d; want some runs and no overlap", runs.Load(), overlaps.Load())
	}
	if got := metricSum(t, m, "crawler_skipped_runs_total", nil); got != float64(skips.Load()) {
		t.Errorf("crawler_skipped_runs_total = %v, OnSkip called %d times", got, skips.Load())
	}
	if !strings.Contains(logs.String(), "scheduled crawl skipped") {
		t.Errorf("no skip in the log:\n%s", logs)
	}
}

// TestScheduleRecoversPanic: a panicking run is logged with its stack and the schedule goes on
// (with cron v3.0.1's SkipIfStillRunning alone, every run after a panic was skipped).
func TestScheduleRecoversPanic(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	logs := &testkit.SyncBuffer{}
	stop := runSchedule(t, Schedule{
		Spec:   "@every 1s",
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Job: func(context.Context) {
			if runs.Add(1) == 1 {
				panic("boom in a crawl")
			}
		},
	})
	testkit.WaitFor(t, 10*time.Second, "a run after the panic", func() bool { return runs.Load() >= 2 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if l := logs.String(); !strings.Contains(l, "boom in a crawl") || !strings.Contains(l, "level=ERROR") {
		t.Errorf("the panic was not logged as an error:\n%s", l)
	}
}

// TestScheduleShutdown: after ctx ends, a running job gets ShutdownTimeout to finish, then its
// ctx is cancelled and Run returns.
func TestScheduleShutdown(t *testing.T) {
	t.Parallel()
	started := make(chan struct{}, 1)
	var cancelled atomic.Bool
	stop := runSchedule(t, Schedule{
		Spec:            "@every 1s",
		Logger:          runLogger(t),
		ShutdownTimeout: 200 * time.Millisecond,
		Job: func(ctx context.Context) {
			select {
			case started <- struct{}{}:
			default:
			}
			<-ctx.Done() // a crawl that would never end by itself
			cancelled.Store(true)
		},
	})
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the job never started")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if !cancelled.Load() {
		t.Error("Run returned before the running job's ctx was cancelled")
	}
}

// TestScheduleBadSpec is an error before anything runs; the location is Seoul by default.
func TestScheduleBadSpec(t *testing.T) {
	t.Parallel()
	err := Schedule{Spec: "every ten minutes", Logger: runLogger(t), Job: func(context.Context) {}}.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "every ten minutes") {
		t.Fatalf("err %v, want a parse error naming the spec", err)
	}
}

// RunAtStart runs the job at once (the spec's first time is an hour away), and a shutdown waits for
// that first run like for a scheduled one; without it nothing runs before the first time.
func TestScheduleRunAtStart(t *testing.T) {
	t.Parallel()
	for _, atStart := range []bool{true, false} {
		var runs atomic.Int32
		started, release := make(chan struct{}), make(chan struct{})
		var once sync.Once
		stop := runSchedule(t, Schedule{Spec: "@every 1h", Logger: slog.New(slog.DiscardHandler), RunAtStart: atStart,
			Job: func(context.Context) {
				runs.Add(1)
				once.Do(func() { close(started) })
				<-release
			}})
		if atStart {
			<-started // blocks until the first run: no timing assumption
			close(release)
		} else {
			close(release)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int32{true: 1, false: 0}[atStart]; runs.Load() != want {
			t.Errorf("RunAtStart %v: %d runs, want %d", atStart, runs.Load(), want)
		}
	}
}

func TestScheduleInterval(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 7, 23, 55, 30, 0, site.Seoul())
	for _, tc := range []struct {
		spec     string
		interval time.Duration
		deadline time.Duration
	}{
		{DefaultSchedule, 10 * time.Minute, 8 * time.Minute},
		{"@every 5s", 5 * time.Second, 4 * time.Second},
		{"@hourly", time.Hour, 48 * time.Minute},
		{"0,5 9 * * *", 5 * time.Minute, 4 * time.Minute}, // the shortest gap, not the day's
		{"0 9 * * 1", 7 * 24 * time.Hour, 134*time.Hour + 24*time.Minute},
	} {
		iv, err := site.ScheduleInterval(tc.spec, nil, now)
		d, derr := site.DefaultSiteDeadline(tc.spec, nil, now)
		if err != nil || derr != nil || iv != tc.interval || d != tc.deadline {
			t.Errorf("%q: interval %v (%v), deadline %v (%v); want %v and %v", tc.spec, iv, err, d, derr, tc.interval, tc.deadline)
		}
	}
	if _, err := site.ScheduleInterval("every ten minutes", nil, now); err == nil {
		t.Error("an invalid spec gave no error")
	}
}
