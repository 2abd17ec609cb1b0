//go:build chaos

package chaos_test

import (
	"context"
	"log/slog"
	"maps"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestBrokerRestart runs the crawler on a 2 s schedule against the simulated site (on a clock
// 600× real time, so listings open, change and close between crawls), publishing as the product
// does (each site crawl a batch in the state dir's spool, sent by the SpoolPublisher), while
// consumer.Run consumes, and stops the private broker twice, SIGTERM (down ~10 s plus its
// restart) and SIGKILL (down ~15 s plus its restart): the runs go on while the broker is down,
// nothing is given up (the old publisher lost what outlived its retry window), and once it is
// back every event the crawls derived is acknowledged and stored, once.
func TestBrokerRestart(t *testing.T) {
	st := stack(t)
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	db := storetest.NewDB(t)
	env := newPipeline(t, addr, topic, db)

	for _, phase := range []struct {
		sig  syscall.Signal
		down time.Duration
	}{
		{syscall.SIGTERM, 10 * time.Second},
		{syscall.SIGKILL, 15 * time.Second},
	} {
		t.Run(phase.sig.String(), func(t *testing.T) {
			logs := &testkit.SyncBuffer{}
			sched, rec := env.schedule(t, addr, topic, slog.New(slog.NewTextHandler(logs, nil)))

			time.Sleep(6 * time.Second)
			before := sched.runs()
			st.stopKafka(t, phase.sig)
			downAt := time.Now()
			time.Sleep(phase.down)
			duringOutage := sched.runs() - before
			st.up(t)
			t.Logf("broker down %v (%v); %d scheduled runs started while it was down", time.Since(downAt).Round(time.Second), phase.sig, duringOutage)
			if duringOutage < 2 {
				t.Errorf("only %d crawls ran while the broker was down: the schedule stalled", duringOutage)
			}
			time.Sleep(6 * time.Second)
			ps := sched.stop(t, 2*time.Minute)

			handed := rec.count(t)
			t.Logf("runs %d (max duration %v), events committed %d: published %d, failed %d, unsent %d",
				sched.runs(), sched.maxDuration(), handed, ps.Published, ps.Failed, ps.Queued)
			if ps.Published != int64(handed) || ps.Failed != 0 || ps.Queued != 0 {
				t.Errorf("published %d, failed %d, unsent %d; want every one of the %d committed events published", ps.Published, ps.Failed, ps.Queued, handed)
			}
			if lost := logs.Lines("booking event lost"); len(lost) != 0 {
				t.Errorf("%d events logged as lost: %s", len(lost), lost[0])
			}
			// Every committed event reaches the database, once: the consumer resumed.
			want := env.storedBefore + handed
			testkit.WaitFor(t, 2*time.Minute, "every committed event stored", func() bool { return count(t, db, "booking_events") >= want })
			got := count(t, db, "booking_events")
			stored := rec.storedIDs(t, db)
			t.Logf("rows %d (want %d); %d of the %d committed events are stored", got, want, stored, handed)
			if got != want || stored != handed {
				t.Errorf("rows = %d, want %d; %d of this phase's events stored, want %d", got, want, stored, handed)
			}
			env.storedBefore = got
		})
	}
	env.stop(t)
}

// pipeline is the consumer side plus the simulated site shared by the phases.
type pipeline struct {
	site         *site.Site
	clock        func() time.Time
	state        crawler.StateDir
	storedBefore int
	consumer     *runningConsumer
}

func newPipeline(t *testing.T, addr, topic string, db *pgxpool.Pool) *pipeline {
	_, site, clock := fastSim(t, 7)
	p := &pipeline{site: site, clock: clock, state: crawler.StateDir{Dir: t.TempDir()}}
	p.consumer = startConsumer(t, addr, topic, kafkatest.Name(t, "broker"), db, slog.New(slog.DiscardHandler))
	return p
}

func (p *pipeline) stop(t *testing.T) { p.consumer.stop(t) }

// fastSim serves the simulated site (seed; 3 days ahead, 8 tee times a day) on a clock 600× real
// time from 2026-04-01 08:58 KST: the site, simSite pointed at it, and the clock.
func fastSim(t *testing.T, seed int64) (*sitesim.Site, *site.Site, func() time.Time) {
	clock := sitesim.SpeedClock(time.Now, time.Now(), time.Date(2026, 4, 1, 8, 58, 0, 0, sitesim.KST), 600)
	sim := sitesim.New(sitesim.Config{Seed: seed, Now: clock, DaysAhead: 3, TeeTimesPerDay: 8})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return sim, simSite(t, srv.URL, 3), clock
}

// simSite is compose/dev/sites.yaml's simulated site pointed at base, without politeness delays.
func simSite(t testing.TB, base string, days int) *site.Site {
	t.Helper()
	sites, err := site.LoadSites(filepath.Join(stack(t).root, "compose/dev/sites.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := sites[0].SiteSpec
	s.URLTemplate = strings.Replace(s.URLTemplate, "http://"+sitesim.DefaultAddr, base, 1)
	s.DaysAhead = days
	s.Politeness.NoDelay = true
	s.Politeness.Delay, s.Politeness.RandomDelay = 0, 0
	s.Politeness.BackoffBase, s.Politeness.BackoffCap = site.Duration(10*time.Millisecond), site.Duration(50*time.Millisecond)
	s.Politeness.RequestTimeout = site.Duration(5 * time.Second)
	st, err := s.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// scheduled is a crawler.Schedule running the Runner every 2 s, its events spooled and sent by pub.
type scheduled struct {
	cancel context.CancelFunc
	done   chan error
	pub    *kafkatest.Spooled
	mu     sync.Mutex
	n      int
	maxDur time.Duration
}

func (p *pipeline) schedule(t *testing.T, addr, topic string, logger *slog.Logger) (*scheduled, *recorder) {
	s := &scheduled{done: make(chan error, 1)}
	runner := &crawler.Runner{Sites: []*site.Site{p.site}, State: p.state, Logger: slog.New(slog.DiscardHandler), Now: p.clock}
	rec := newRecorder(t, runner)
	s.pub = kafkatest.SpoolRunner(t, runner, kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic, Logger: logger})
	ctx, cancel := context.WithCancel(t.Context())
	s.cancel = cancel
	sched := crawler.Schedule{Spec: "@every 2s", Logger: slog.New(slog.DiscardHandler), ShutdownTimeout: 30 * time.Second,
		Job: func(ctx context.Context) {
			start := time.Now()
			_, _ = runner.Run(ctx)
			s.mu.Lock()
			s.n++
			s.maxDur = max(s.maxDur, time.Since(start))
			s.mu.Unlock()
		}}
	go func() { s.done <- sched.Run(ctx) }()
	return s, rec
}

func (s *scheduled) runs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *scheduled) maxDuration() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxDur
}

// stop ends the schedule, then the publisher (sending what is unsent for up to flush) and the
// runner's spool, and returns the publisher's counters.
func (s *scheduled) stop(t *testing.T, flush time.Duration) kafkabus.PublisherStats {
	s.cancel()
	testkit.NoErr(t, s.done, time.Minute, "schedule")
	return s.pub.CloseWithin(flush)
}

// recorder is a Runner's events file (in a temporary dir of its own): the ids of the events its
// crawls committed, read back.
type recorder struct{ path string }

// newRecorder gives r an events file (before its spool is opened, which copies to it).
func newRecorder(t testing.TB, r *crawler.Runner) *recorder {
	t.Helper()
	rec := &recorder{path: filepath.Join(t.TempDir(), "events.jsonl")}
	out, err := crawler.OpenEventLog(rec.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
	r.EventsOut = out
	return rec
}

func (r *recorder) ids(t testing.TB) map[uuid.UUID]bool {
	ids := map[uuid.UUID]bool{}
	for _, e := range eventstest.ReadEvents(t, r.path) {
		ids[e.EventID] = true
	}
	return ids
}

func (r *recorder) count(t testing.TB) int { return len(r.ids(t)) }

// storedIDs returns how many of the recorded events are in booking_events.
func (r *recorder) storedIDs(t testing.TB, db *pgxpool.Pool) int {
	ids := slices.Collect(maps.Keys(r.ids(t)))
	var n int
	if err := db.QueryRow(t.Context(), "select count(*) from booking_events where event_id = any($1)", ids).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
