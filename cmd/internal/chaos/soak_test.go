//go:build chaos

package chaos_test

import (
	"context"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TestSoak runs the whole pipeline for CHAOS_SOAK (5m): the crawler every 2 s (crawler.Schedule)
// against the simulated site on a clock 600× real time with 5% of page requests failing and 2%
// slow, the private broker stopped for 5 s every CHAOS_FLAP (45s), and consumer.Run consuming.
// It samples goroutines and heap every 5 s and asserts, at the end:
//
//   - goroutines and heap flat: the last third's peak within +25 goroutines and 2× + 16 MB of
//     the first third's;
//   - nothing lost: every event the crawls committed to the state dir's spool is sent by the
//     SpoolPublisher across the flaps and stored, once;
//   - zero false closes: every listing_closed event is for a listing the simulator's ground truth
//     had closed at or before the event's occurred_at;
//   - booking_lifetimes agrees with the ground truth: no listing still open in the view that the
//     truth closed before the last two complete crawls started, and every listing the truth shows
//     from the second-to-last complete crawl to past the end is open in the view.
func TestSoak(t *testing.T) {
	st := stack(t)
	soak := testkit.EnvDuration(t, "CHAOS_SOAK", 5*time.Minute)
	flap := testkit.EnvDuration(t, "CHAOS_FLAP", 45*time.Second)
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	db := storetest.NewDB(t)

	sim, golfSite, clock := fastSim(t, 11)
	sim.InjectFaults(sitesim.Faults{ErrorRate: 0.05, SlowRate: 0.02, SlowDelay: 500 * time.Millisecond}) // before the first crawl
	simStart := clock()

	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cons := startConsumer(t, addr, topic, kafkatest.Name(t, "soak"), db, logger)

	runner := &crawler.Runner{Sites: []*site.Site{golfSite}, State: crawler.StateDir{Dir: t.TempDir()}, Logger: logger, Now: clock}
	rec := newRecorder(t, runner)
	pub := kafkatest.SpoolRunner(t, runner, kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic, Logger: logger})
	sched := startSoakSchedule(t, runner, clock, logger)
	samples, flaps := soakFlapping(t, st, soak, flap)
	runs := sched.stop(t)
	ps := pub.CloseWithin(time.Minute)
	testkit.WaitFor(t, 3*time.Minute, "every published event stored", func() bool { return count(t, db, "booking_events") >= int(ps.Published) })
	cons.stop(t)

	complete := 0
	for _, r := range runs {
		if r.complete {
			complete++
		}
	}
	stored := count(t, db, "booking_events")
	t.Logf("soak %v: %d crawls (%d complete), %d broker flaps, committed %d, published %d, failed %d, unsent %d, stored %d",
		soak, len(runs), complete, flaps, rec.count(t), ps.Published, ps.Failed, ps.Queued, stored)
	if ps.Failed+ps.Queued != 0 || ps.Published != int64(rec.count(t)) || stored != rec.count(t) || rec.storedIDs(t, db) != stored {
		t.Errorf("lost events: failed %d, unsent %d; published %d and stored %d of %d committed", ps.Failed, ps.Queued, ps.Published, stored, rec.count(t))
	}

	checkSoakFlat(t, samples)

	// Ground truth.
	truth := map[string]sitesim.Truth{}
	for _, tr := range sim.GroundTruth(simStart.Add(-24*time.Hour), clock()) {
		truth[events.ListingKey(golfSite.Name, tr.Course, tr.Part, tr.PlayDate, tr.TeeTime)] = tr
	}
	closes, falseCloses := checkSoakCloses(t, db, truth, runs)
	viewed, missedClose, missedOpen := checkSoakView(t, db, truth, runs)
	t.Logf("%d closes checked against the truth: %d false; %d listings in the view, %d truth listings: %d missed closes, %d missed opens",
		closes, falseCloses, viewed, len(truth), missedClose, missedOpen)
}

// soakRun is one site crawl of the soak.
type soakRun struct {
	at, end  time.Time // the crawl's start (its events' occurred_at) and end, on the simulated clock
	complete bool
	events   int
}

// soakSchedule is the soak's crawler.Schedule running in the background, recording every crawl.
type soakSchedule struct {
	cancel context.CancelFunc
	done   chan error
	mu     sync.Mutex
	runs   []soakRun
}

// startSoakSchedule runs runner every 2 s (crawler.Schedule) until stop.
func startSoakSchedule(t *testing.T, runner *crawler.Runner, clock func() time.Time, logger *slog.Logger) *soakSchedule {
	sctx, scancel := context.WithCancel(t.Context())
	s := &soakSchedule{cancel: scancel, done: make(chan error, 1)}
	go func() {
		s.done <- crawler.Schedule{Spec: "@every 2s", Logger: logger, ShutdownTimeout: 30 * time.Second,
			Job: func(ctx context.Context) {
				sum, _ := runner.Run(ctx)
				end := clock()
				s.mu.Lock()
				defer s.mu.Unlock()
				for _, r := range sum.Sites {
					s.runs = append(s.runs, soakRun{at: r.At, end: end, complete: r.Complete && r.Err == nil, events: r.Opened + r.Changed + r.Closed})
				}
			}}.Run(sctx)
	}()
	return s
}

// stop ends the schedule and returns its crawls.
func (s *soakSchedule) stop(t *testing.T) []soakRun {
	t.Helper()
	s.cancel()
	testkit.NoErr(t, s.done, time.Minute, "schedule")
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.runs)
}

// soakSample is one sample of the test process's goroutines and heap.
type soakSample struct{ goroutines, heapMB float64 }

// soakFlapping runs for soak, stopping the private broker for 5 s every flap (the first after
// min(flap, soak/3)) and sampling goroutines and heap every 5 s; it returns the samples and the
// number of flaps.
func soakFlapping(t *testing.T, st privateStack, soak, flap time.Duration) ([]soakSample, int) {
	var samples []soakSample
	flaps := 0
	end := time.Now().Add(soak)
	nextFlap := time.Now().Add(min(flap, soak/3))
	for time.Now().Before(end) {
		if time.Now().After(nextFlap) {
			st.stopKafka(t, syscall.SIGTERM)
			time.Sleep(5 * time.Second)
			st.up(t)
			flaps++
			nextFlap = time.Now().Add(flap)
		}
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		samples = append(samples, soakSample{float64(runtime.NumGoroutine()), float64(ms.HeapAlloc) / (1 << 20)})
		time.Sleep(5 * time.Second)
	}
	return samples, flaps
}

// checkSoakFlat: the last third's peak goroutines and heap are within +25 goroutines and
// 2× + 16 MB of the first third's.
func checkSoakFlat(t *testing.T, samples []soakSample) {
	t.Helper()
	third := len(samples) / 3
	if third < 1 {
		return
	}
	peak := func(ss []soakSample) soakSample {
		var p soakSample
		for _, s := range ss {
			p.goroutines, p.heapMB = max(p.goroutines, s.goroutines), max(p.heapMB, s.heapMB)
		}
		return p
	}
	first, last := peak(samples[:third]), peak(samples[len(samples)-third:])
	t.Logf("first third: %.0f goroutines, %.1f MB heap; last third: %.0f goroutines, %.1f MB heap (%d samples)",
		first.goroutines, first.heapMB, last.goroutines, last.heapMB, len(samples))
	if last.goroutines > first.goroutines+25 || last.heapMB > 2*first.heapMB+16 {
		t.Errorf("not flat: goroutines %.0f -> %.0f, heap %.1f -> %.1f MB", first.goroutines, last.goroutines, first.heapMB, last.heapMB)
	}
}

// checkSoakCloses checks every stored listing_closed against the ground truth: a close of a
// listing still on the site when the crawl that stamped it ended is false. It returns the closes
// checked and the false ones.
func checkSoakCloses(t *testing.T, db *pgxpool.Pool, truth map[string]sitesim.Truth, runs []soakRun) (closes, falseCloses int) {
	t.Helper()
	rows, err := db.Query(t.Context(), `select listing_key, occurred_at, coalesce(close_reason, '') from booking_events
		where event_type = 'listing_closed'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var key, reason string
		var at time.Time
		if err := rows.Scan(&key, &at, &reason); err != nil {
			t.Fatal(err)
		}
		closes++
		// A close is stamped at the start of the crawl that first missed the listing; on this
		// clock (600x) a crawl lasts simulated seconds, and a tee time booked while it ran, before
		// its page was fetched, is rightly missed by it. False is a close of a listing still on
		// the site when that crawl ended.
		observedBy := at
		for _, r := range runs {
			if d := r.at.Sub(at); d > -time.Millisecond && d < time.Millisecond {
				observedBy = r.end
			}
		}
		tr, ok := truth[key]
		if !ok || tr.ClosedAt().After(observedBy) {
			falseCloses++
			if falseCloses <= 10 {
				t.Errorf("false close: %s closed (%s) at %s, truth closes at %v (known: %v)", key, reason, at, tr.ClosedAt(), ok)
			}
		}
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	return closes, falseCloses
}

// checkSoakView compares booking_lifetimes with the ground truth: no listing still open in the
// view that the truth closed before the last two complete crawls started, and every listing the
// truth shows from the second-to-last complete crawl to past the end open in the view. It returns
// the listings in the view and the missed closes and opens.
func checkSoakView(t *testing.T, db *pgxpool.Pool, truth map[string]sitesim.Truth, runs []soakRun) (viewed, missedClose, missedOpen int) {
	t.Helper()
	var completes []time.Time
	for _, r := range runs {
		if r.complete {
			completes = append(completes, r.at)
		}
	}
	slices.SortFunc(completes, func(a, b time.Time) int { return a.Compare(b) })
	if len(completes) < 3 {
		t.Fatalf("only %d complete crawls: cannot compare the view with the truth", len(completes))
	}
	secondLast, last := completes[len(completes)-2], completes[len(completes)-1]
	lastAt := runs[len(runs)-1].at
	status := map[string]string{}
	// The simulated clock runs in April 2026, before the real now() that booking_lifetimes expires
	// unclosed listings against (at their tee time): compare the status the events themselves say.
	vrows, err := db.Query(t.Context(), `select listing_key,
		case when last_event_type = 'listing_closed' then status else 'open' end from booking_lifetimes`)
	if err != nil {
		t.Fatal(err)
	}
	for vrows.Next() {
		var k, s string
		if err := vrows.Scan(&k, &s); err != nil {
			t.Fatal(err)
		}
		status[k] = s
	}
	for key, tr := range truth {
		s, inView := status[key]
		switch {
		case s == "open" && tr.ClosedAt().Before(secondLast):
			missedClose++
			if missedClose <= 10 {
				t.Errorf("%s open in booking_lifetimes, but closed at %v, before the last two complete crawls (%v, %v)", key, tr.ClosedAt(), secondLast, last)
			}
		case !tr.Malformed && tr.VisibleAt(secondLast) && tr.ClosedAt().After(lastAt.Add(time.Hour)) && s != "open":
			missedOpen++
			if missedOpen <= 10 {
				t.Errorf("%s visible since %v and still open, but booking_lifetimes says %q (in view: %v)", key, tr.OpenedAt, s, inView)
			}
		}
	}
	return len(status), missedClose, missedOpen
}
