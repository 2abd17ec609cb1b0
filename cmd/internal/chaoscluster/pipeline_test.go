//go:build cluster

package chaoscluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
)

// crawl is the crawler side: the simulated site crawled every second, its events spooled in the
// state dir and sent by the SpoolPublisher (as `crawler run` does), and copied to an events file
// of the crawl's own once committed (the ids it remembers).
type crawl struct {
	pub    *kafkatest.Spooled
	logs   *testkit.SyncBuffer
	cancel context.CancelFunc
	done   chan struct{}
	events string // the events file
	mu     sync.Mutex
	runs   int
}

// startCrawl starts crawling with a new publisher; state (and its spool) persists across crawls.
func startCrawl(t testing.TB, brokers []string, topic string, st *site.Site, clock func() time.Time, state crawler.StateDir) *crawl {
	logs := &testkit.SyncBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	c := &crawl{logs: logs, cancel: cancel, done: make(chan struct{}), events: filepath.Join(t.TempDir(), "events.jsonl")}
	out, err := crawler.OpenEventLog(c.events)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = out.Close() })
	runner := &crawler.Runner{Sites: []*site.Site{st}, State: state, Logger: slog.New(slog.DiscardHandler), EventsOut: out, Now: clock}
	c.pub = kafkatest.SpoolRunner(t, runner, kafkabus.PublisherConfig{Brokers: brokers, Topic: topic,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	go func() {
		defer close(c.done)
		for ctx.Err() == nil {
			_, _ = runner.Run(ctx)
			c.mu.Lock()
			c.runs++
			c.mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	return c
}

// stop ends the crawls and closes the publisher (up to 6 minutes to send what is unsent),
// returning its stats.
func (c *crawl) stop(t *testing.T) kafkabus.PublisherStats {
	t.Helper()
	c.cancel()
	testkit.Recv(t, c.done, time.Minute, "the crawl loop")
	st := c.pub.CloseWithin(6 * time.Minute)
	if st.Queued != 0 {
		t.Errorf("publisher Close: %d events left unsent", st.Queued)
	}
	return st
}

// lossesLogged counts the publisher's log records that name a lost event (event_id and reason).
func (c *crawl) lossesLogged(t *testing.T) int {
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(c.logs.String()), "\n") {
		var r map[string]any
		if json.Unmarshal([]byte(line), &r) == nil && r["event_id"] != nil && r["reason"] != nil {
			n++
		}
	}
	return n
}

// idList is the ids of the events the crawls committed (the events file's, once each).
func (c *crawl) idList(t testing.TB) []uuid.UUID {
	ids := map[uuid.UUID]bool{}
	for _, e := range eventstest.ReadEvents(t, c.events) {
		ids[e.EventID] = true
	}
	return slices.Collect(maps.Keys(ids))
}

// fastSim serves the simulated site on a clock 600× real time; simSite is compose/dev/sites.yaml's
// simulated site pointed at it, without politeness delays.
func fastSim(t testing.TB, root string) (*site.Site, func() time.Time) {
	clock := sitesim.SpeedClock(time.Now, time.Now(), time.Date(2026, 4, 1, 8, 58, 0, 0, sitesim.KST), 600)
	srv := httptest.NewServer(sitesim.New(sitesim.Config{Seed: 24, Now: clock, Epoch: clock(), DaysAhead: 7, TeeTimesPerDay: 24,
		BookingSpeed: 20}))
	t.Cleanup(srv.Close)
	sites, err := site.LoadSites(filepath.Join(root, "compose/dev/sites.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s := sites[0].SiteSpec
	s.URLTemplate = strings.Replace(s.URLTemplate, "http://"+sitesim.DefaultAddr, srv.URL, 1)
	s.DaysAhead = 7
	s.Politeness.NoDelay = true
	s.Politeness.Delay, s.Politeness.RandomDelay = 0, 0
	s.Politeness.BackoffBase, s.Politeness.BackoffCap = site.Duration(10*time.Millisecond), site.Duration(50*time.Millisecond)
	s.Politeness.RequestTimeout = site.Duration(5 * time.Second)
	st, err := s.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return st, clock
}

// consumers are the booking-consumer run processes of one group, started with the top test's t
// (a process started by a scenario outlives it).
type consumers struct {
	t                        testing.TB
	bin, dbURL, topic, group string
	brokers                  []string
	procs                    []*testkit.Proc
	exits                    int // processes that ended on their own (restarted, as compose would)
}

func (cs *consumers) start() *testkit.Proc {
	p := testkit.Start(cs.t, cs.bin, []string{"LOG_LEVEL=info"}, "run", "--database-url", cs.dbURL,
		"--kafka-bootstrap", strings.Join(cs.brokers, ","), "--topic", cs.topic, "--group", cs.group,
		"--metrics-addr=", "--no-migrate")
	cs.procs = append(cs.procs, p)
	return p
}

// keepAlive restarts any process that exited on its own (compose: restart: unless-stopped).
func (cs *consumers) keepAlive(t testing.TB) {
	t.Helper()
	for i, p := range cs.procs {
		select {
		case err := <-p.Exited:
			p.Exited <- err
			cs.exits++
			t.Logf("consumer %d exited on its own (%v); restarting it. Last logs:\n%s", i, err, testkit.Tail(p.Logs.String(), 1500))
			cs.procs = append(cs.procs[:i:i], cs.procs[i+1:]...)
			cs.start()
			return
		default:
		}
	}
}

func (cs *consumers) stopAll(t testing.TB) {
	for _, p := range cs.procs {
		p.Stop(t, time.Minute)
	}
	cs.procs = nil
}

func buildConsumer(t testing.TB, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "booking-consumer")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/booking-consumer")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func countQuery(t testing.TB, db *pgxpool.Pool, q string, args ...any) int {
	t.Helper()
	var n int
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), time.Minute)
	defer cancel()
	if err := db.QueryRow(ctx, q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func summary(st kafkabus.PublisherStats) string {
	return fmt.Sprintf("published %d, failed %d, unsent %d", st.Published, st.Failed, st.Queued)
}
