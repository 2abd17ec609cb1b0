//go:build chaos

package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/spool"
	"github.com/golfcrawler/golf-crawler/internal/atomicfile"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// A re-executed test binary is a crawler with faults set through its fields (syncFailChild),
// instead of running tests.
const (
	childEnv     = "CHAOS_CRAWLER_CHILD"      // the sites file, the state dir and the events file, separated by \x1f
	childSeedEnv = "CHAOS_CRAWLER_CHILD_SEED" // seeds which directory syncs fail
	childKillEnv = "CHAOS_CRAWLER_CHILD_KILL" // "1": SIGKILL itself when a crawl whose directory sync failed reaches its commit
)

func TestMain(m *testing.M) {
	if args := os.Getenv(childEnv); args != "" {
		os.Exit(syncFailChild(strings.Split(args, "\x1f")))
	}
	os.Exit(m.Run())
}

// syncFailChild is `crawler run --schedule @every 1s` with Kafka and an events file, wired as the
// binary wires them (the state dir's lock, its spool kept until Kafka acknowledges, the spool
// publisher), whose state dir's directory sync fails one time in three (StateDir.SyncDir, after
// the snapshot's rename, as EIO on a real disk does). With childKillEnv it SIGKILLs itself when
// a crawl whose directory sync failed reaches its commit (spool.Options.OnStep). It runs until
// SIGTERM.
func syncFailChild(args []string) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	fail := func(err error) int { logger.Error("chaos child", "err", err); return 1 }
	if len(args) != 3 {
		return fail(fmt.Errorf("want sites, state dir and events file, got %q", args))
	}
	seed, _ := strconv.ParseUint(os.Getenv(childSeedEnv), 10, 64)
	rng := rand.New(rand.NewPCG(seed, uint64(os.Getpid())))
	sites, err := site.LoadSites(args[0])
	if err != nil {
		return fail(err)
	}
	out, err := crawler.OpenEventLog(args[2])
	if err != nil {
		return fail(err)
	}
	failed := false // the last directory sync failed
	syncDir := func(dir string) error {
		if failed = rng.IntN(3) == 0; failed {
			logger.Info("chaos child: directory sync fails", "dir", dir)
			return errors.New("sync: input/output error")
		}
		return atomicfile.SyncDir(dir)
	}
	r := &crawler.Runner{Sites: sites, State: crawler.StateDir{Dir: args[1], SyncDir: syncDir}, Logger: logger, EventsOut: out}
	if err := r.Lock(); err != nil {
		return fail(err)
	}
	opts := spool.Options{Retain: true, Logger: logger}
	if os.Getenv(childKillEnv) == "1" {
		opts.OnStep = func(step string) {
			if step == spool.StepSaved && failed {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the signal is on its way
			}
		}
	}
	sp, err := r.OpenSpool(opts)
	if err != nil {
		return fail(err)
	}
	pub := kafkabus.NewSpoolPublisher(kafkabus.PublisherConfig{Brokers: kafkabus.ParseBrokers(os.Getenv("KAFKA_BOOTSTRAP")),
		Topic: os.Getenv("KAFKA_TOPIC"), Logger: logger}, sp)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	for tick := time.NewTicker(time.Second); ctx.Err() == nil; {
		if _, err := r.Run(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("chaos child: run", "err", err)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = errors.Join(pub.Close(cctx), sp.Close())
	r.Unlock()
	if err = errors.Join(err, out.Close()); err != nil {
		return fail(err)
	}
	return 0
}

// TestDirSyncFailsDuringOutage (review 4, F1): a crawler (the test binary re-executed as one,
// syncFailChild: Kafka, an events file, 1 s schedule) whose state dir's directory sync fails one
// time in three, after the snapshot's rename, crawls the changing page through a
// CHAOS_SYNCFAIL_OUTAGE (40 s) broker outage and is killed CHAOS_SYNCFAIL_KILLS (6) times, half
// during it, half after: every other start kills itself when a crawl whose sync failed reaches
// its commit (the snapshot in place, no commit record yet), the others are SIGKILLed at seeded
// random moments. Then the page stops changing and the spool drains. A crawl whose sync failed is committed (the snapshot in place names its
// batch): the events file holds each listing's unbroken chain of price changes ending at the
// page's price, no id with two contents, and PostgreSQL holds exactly the file.
func TestDirSyncFailsDuringOutage(t *testing.T) {
	r := newOutageRig(t, "syncfail", "CHAOS_SYNCFAIL_OUTAGE", "CHAOS_SYNCFAIL_KILLS", 40*time.Second, 6)
	s, db, page, dir := r.s, r.db, r.page, r.dir
	out := filepath.Join(dir, "events.jsonl")
	starts := 0
	k := &crawlerKills{rng: r.rng, selfKills: true, start: func() *testkit.Proc {
		starts++
		return testkit.Start(t, os.Args[0], append([]string{childEnv + "=" + strings.Join([]string{r.sites, filepath.Join(dir, "state"), out}, "\x1f"),
			fmt.Sprintf("%s=%d", childSeedEnv, r.seed+uint64(starts)), fmt.Sprintf("%s=%d", childKillEnv, starts%2)}, r.kafkaEnv...))
	}}
	// kill ends the running crawler: one that kills itself is given 30 s to (a third of its
	// crawls fail their sync; one that never reaches its commit then is SIGKILLed, and the checks
	// below say so); another is SIGKILLed at once.
	kill := func(p *testkit.Proc) *testkit.Proc {
		for end := time.Now().Add(30 * time.Second); starts%2 == 1 && time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if exited(p) {
				return k.restart(p)
			}
		}
		return k.kill(t, p, nil)
	}
	p := k.start()
	testkit.WaitFor(t, time.Minute, "events stored before the outage", func() bool { p = k.restart(p); return count(t, db, "booking_events") > 0 })
	s.stopKafka(t, syscall.SIGKILL)
	down := time.Now()
	for range r.kills / 2 {
		p = kill(p)
	}
	for time.Now().Before(down.Add(r.outage)) {
		p = k.restart(p)
		time.Sleep(200 * time.Millisecond)
	}
	s.up(t)
	for range r.kills - r.kills/2 {
		p = kill(p)
	}
	page.frozen.Store(true)
	testkit.WaitForf(t, 3*time.Minute, func() string { return "the page's last prices in the events file and stored" }, func() bool {
		p = k.restart(p)
		file := fileEvents(t, out)
		var evs []events.Event
		for _, e := range file {
			evs = append(evs, e)
		}
		return atLastPrice(evs, page.frozenPrice) && count(t, db, "booking_events") >= len(file)
	})
	logs := k.stop(t, p)
	r.cons.stop(t)
	want := fileEvents(t, out)
	var evs []events.Event
	for _, e := range want {
		evs = append(evs, e)
	}
	for _, bad := range chainProblems(evs, page.frozenPrice) {
		t.Error("events file: " + bad)
	}
	checkStoredAsFile(t, db, want)
	failed, unknown := strings.Count(logs, "directory sync fails"), strings.Count(logs, "snapshot saved, durability unknown")
	t.Logf("%d starts, %d requests, %d events in the file; %d directory syncs failed, %d crawls committed with durability unknown, %d interrupted batches resolved at start-up (%d kept)",
		starts, page.requests.Load(), len(want), failed, unknown, strings.Count(logs, "batch of an interrupted crawl"),
		strings.Count(logs, "kept: its snapshot was saved"))
	if failed == 0 || !strings.Contains(logs, "kept: its snapshot was saved") {
		t.Error("no directory sync failed, or no crawler was killed after one: the scenario tested less than it says")
	}
}
