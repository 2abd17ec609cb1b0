//go:build chaos

package chaos_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestBrokerRestart runs the crawler on a 2 s schedule against the simulated site (on a clock
// 600× real time, so listings open, change and close between crawls) while consumer.Run consumes,
// and stops the private broker twice:
//
//  1. SIGTERM, down ~10 s plus its restart, with a 2-minute retry window: every event handed to
//     the publisher is acknowledged and stored; the runs go on while the broker is down.
//  2. SIGKILL, down ~15 s plus its restart, with a 3 s retry window: the events that outlive the
//     window are counted (failed/dropped) and each is logged with its event_id; every event the
//     publisher reports published is stored; the consumer resumes after the restart.
func TestBrokerRestart(t *testing.T) {
	st := stack(t)
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	db := storetest.NewDB(t)
	env := newPipeline(t, addr, topic, db)

	for _, phase := range []struct {
		name   string
		window time.Duration
		sig    syscall.Signal
		down   time.Duration
	}{
		{"WithinRetryWindow", 2 * time.Minute, syscall.SIGTERM, 10 * time.Second},
		{"BeyondRetryWindow", 3 * time.Second, syscall.SIGKILL, 15 * time.Second},
	} {
		t.Run(phase.name, func(t *testing.T) {
			logs := &testkit.SyncBuffer{}
			pub := kafkabus.NewPublisher(kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic,
				RetryWindow: phase.window, Logger: slog.New(slog.NewTextHandler(logs, nil))}).(*kafkabus.KafkaPublisher)
			rec := &recorder{pub: pub, ids: map[uuid.UUID]bool{}}
			sched := env.schedule(t, rec)

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
			sched.stop(t)
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			_ = pub.Close(ctx)
			cancel()

			ps := pub.Stats()
			handed := rec.count()
			t.Logf("runs %d (max duration %v), events handed %d: published %d, failed %d, dropped %d",
				sched.runs(), sched.maxDuration(), handed, ps.Published, ps.Failed, ps.Dropped)
			if ps.Published+ps.Failed+ps.Dropped != int64(handed) {
				t.Errorf("published+failed+dropped = %d, want every handed event accounted for (%d)", ps.Published+ps.Failed+ps.Dropped, handed)
			}
			lostLogged := len(logs.Lines("booking event lost")) + len(logs.Lines("booking event dropped"))
			if int64(lostLogged) != ps.Failed+ps.Dropped {
				t.Errorf("%d lost events logged, want %d (failed+dropped)", lostLogged, ps.Failed+ps.Dropped)
			}
			if phase.window > time.Minute && ps.Failed+ps.Dropped != 0 {
				t.Errorf("events lost within the retry window: failed %d, dropped %d", ps.Failed, ps.Dropped)
			}
			if phase.window < time.Minute && ps.Failed+ps.Dropped == 0 {
				t.Errorf("nothing was lost beyond a %v retry window with the broker down %v: the scenario did not bite", phase.window, phase.down)
			}
			// Every acknowledged event reaches the database: the consumer resumed.
			want := env.storedBefore + int(ps.Published)
			testkit.WaitFor(t, 2*time.Minute, "every published event stored", func() bool { return count(t, db, "booking_events") >= want })
			got := count(t, db, "booking_events")
			stored := rec.storedIDs(t, db)
			t.Logf("rows %d (want %d); %d of the %d handed events are stored", got, want, stored, handed)
			if got != want || stored != int(ps.Published) {
				t.Errorf("rows = %d, want %d; %d of this phase's events stored, want %d (published)", got, want, stored, ps.Published)
			}
			env.storedBefore = got
		})
	}
	env.stop(t)
}

// pipeline is the consumer side plus the simulated site shared by the phases.
type pipeline struct {
	site         *crawler.Site
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
func fastSim(t *testing.T, seed int64) (*sitesim.Site, *crawler.Site, func() time.Time) {
	clock := sitesim.SpeedClock(time.Now, time.Now(), time.Date(2026, 4, 1, 8, 58, 0, 0, sitesim.KST), 600)
	sim := sitesim.New(sitesim.Config{Seed: seed, Now: clock, DaysAhead: 3, TeeTimesPerDay: 8})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return sim, simSite(t, srv.URL, 3), clock
}

// simSite is compose/dev/sites.yaml's simulated site pointed at base, without politeness delays.
func simSite(t testing.TB, base string, days int) *crawler.Site {
	t.Helper()
	sites, err := crawler.LoadSites(filepath.Join(stack(t).root, "compose/dev/sites.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := sites[0].SiteSpec
	s.URLTemplate = strings.Replace(s.URLTemplate, "http://"+sitesim.DefaultAddr, base, 1)
	s.DaysAhead = days
	s.Politeness.NoDelay = true
	s.Politeness.Delay, s.Politeness.RandomDelay = 0, 0
	s.Politeness.BackoffBase, s.Politeness.BackoffCap = crawler.Duration(10*time.Millisecond), crawler.Duration(50*time.Millisecond)
	s.Politeness.RequestTimeout = crawler.Duration(5 * time.Second)
	site, err := s.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return site
}

// scheduled is a crawler.Schedule running the Runner every 2 s.
type scheduled struct {
	cancel context.CancelFunc
	done   chan error
	mu     sync.Mutex
	n      int
	maxDur time.Duration
}

func (p *pipeline) schedule(t *testing.T, pub crawler.EventPublisher) *scheduled {
	s := &scheduled{done: make(chan error, 1)}
	runner := &crawler.Runner{Sites: []*crawler.Site{p.site}, State: p.state, Logger: slog.New(slog.DiscardHandler),
		Publisher: pub, Now: p.clock}
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
	return s
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

func (s *scheduled) stop(t *testing.T) {
	s.cancel()
	testkit.NoErr(t, s.done, time.Minute, "schedule")
}

// recorder remembers the ids of the events handed to the publisher.
type recorder struct {
	pub *kafkabus.KafkaPublisher
	mu  sync.Mutex
	ids map[uuid.UUID]bool
}

func (r *recorder) Publish(e events.Event) {
	r.mu.Lock()
	r.ids[e.EventID] = true
	r.mu.Unlock()
	r.pub.Publish(e)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.ids)
}

// storedIDs returns how many of the recorded events are in booking_events.
func (r *recorder) storedIDs(t testing.TB, db *pgxpool.Pool) int {
	r.mu.Lock()
	ids := make([]uuid.UUID, 0, len(r.ids))
	for id := range r.ids {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	var n int
	if err := db.QueryRow(t.Context(), "select count(*) from booking_events where event_id = any($1)", ids).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
