package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer/consumertest"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/events/spool"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// crashChildEnv makes this test binary a `crawler once` that SIGKILLs itself the first time it
// reaches the step of a site crawl's commit named by crashAtEnv (spool.Steps, through the
// spool's OnStep option: faults.onStep), instead of running tests.
const (
	crashChildEnv = "GOLF_TEST_CRASH_CHILD" // the once arguments, separated by \x1f
	crashAtEnv    = "GOLF_TEST_CRASH_AT"    // a step of spool.Steps; empty: no crash
)

func TestMain(m *testing.M) {
	if args := os.Getenv(crashChildEnv); args != "" {
		os.Exit(crashChild(strings.Split(args, "\x1f")))
	}
	if os.Getenv(fillChildEnv) != "" {
		os.Exit(fillChild())
	}
	os.Exit(m.Run())
}

// crashChild runs `crawler once args` in this process, killed at the crash point if one is set.
func crashChild(args []string) int {
	var f faults
	if at := os.Getenv(crashAtEnv); at != "" {
		f.onStep = func(step string) {
			if step == at {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // the signal is on its way
			}
		}
	}
	if err := runWith(context.Background(), append([]string{"once"}, args...), os.Getenv, os.Stdout, os.Stderr, f); err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		return 1
	}
	return 0
}

// TestReplayEqualsLiveAfterCrashes: a crawler (`crawler once`, a process of its own, publishing
// to Kafka through its spool, with --events-out) is SIGKILLed at every step of a site crawl
// (spool append and fsync, snapshot save, commit record, events-file append, events-file sync),
// each in a crawl of its own, the page changing between the crash and the next start (so a crawl
// killed before its save is re-derived under the same ids with other content). The live database
// (the consumer of the crawler's topic) and a database rebuilt with `crawler replay` from the
// events file (another topic, another consumer) must then be equal: the same booking_events rows
// and the same booking_lifetimes. The events file holds no id with two contents.
func TestReplayEqualsLiveAfterCrashes(t *testing.T) {
	t.Parallel()
	addr := kafkatest.Bootstrap(t)
	liveTopic, replayTopic := kafkatest.Topic(t, addr, 3), kafkatest.Topic(t, addr, 3)
	liveDB, replayDB := storetest.NewDB(t), storetest.NewDB(t)
	consumertest.Start(t, t.Context(), consumertest.NewReader(t, addr, liveTopic, kafkatest.Name(t, "live")), store.New(liveDB), consumer.Config{})
	consumertest.Start(t, t.Context(), consumertest.NewReader(t, addr, replayTopic, kafkatest.Name(t, "replay")), store.New(replayDB), consumer.Config{})

	day := time.Now().In(time.FixedZone("KST", 9*3600)).AddDate(0, 0, 5).Format("01/02")
	var mu sync.Mutex
	rows := []teeRow{{day, "07:00", 150000}, {day, "07:10", 150000}, {day, "07:20", 150000}}
	page := func(edit func([]teeRow) []teeRow) {
		mu.Lock()
		defer mu.Unlock()
		rows = edit(rows)
	}
	srv := teePage(t, func() []teeRow { mu.Lock(); defer mu.Unlock(); return append([]teeRow(nil), rows...) })
	dir := t.TempDir()
	file := filepath.Join(dir, "events.jsonl")
	args := []string{"--sites", teeSitesFile(t, srv.URL), "--state-dir", filepath.Join(dir, "state"),
		"--events-out", file, "--misses-to-close", "1"}
	childEnv := []string{crashChildEnv + "=" + strings.Join(args, "\x1f"), "KAFKA_BOOTSTRAP=" + addr,
		"KAFKA_TOPIC=" + liveTopic, "LOG_LEVEL=warn"}

	// What each step's crawl sees: every one has events (an open, a change, a close, a reopen).
	edits := []func([]teeRow) []teeRow{
		func(r []teeRow) []teeRow { return r },                                                            // 3 opens
		func(r []teeRow) []teeRow { r[0].Price = 140000; return r },                                       // a change
		func(r []teeRow) []teeRow { return append(r[:1:1], r[2:]...) },                                    // 07:10 closes
		func(r []teeRow) []teeRow { r[0].Price = 130000; return append(r, teeRow{day, "07:30", 160000}) }, // a change, an open
		func(r []teeRow) []teeRow { return append(r[1:], teeRow{day, "07:10", 155000}) },                  // 07:00 closes, 07:10 reopens
	}
	for i, step := range spool.Steps() {
		page(edits[i])
		p := testkit.Start(t, os.Args[0], append(childEnv, crashAtEnv+"="+step))
		err := testkit.Recv(t, p.Exited, 2*time.Minute, "the crawler killed at "+step)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ProcessState.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("crawl %d: the crawler was not killed at %s: %v\n%s", i+1, step, err, p.Logs.String())
		}
		// The next start finds what the kill left, and the page has moved on: 07:20's price.
		page(func(r []teeRow) []teeRow {
			for j := range r {
				if r[j].Time == "07:20" {
					r[j].Price += 1000
				}
			}
			return r
		})
		p = testkit.Start(t, os.Args[0], childEnv)
		if err := testkit.Recv(t, p.Exited, 2*time.Minute, "the crawler after the kill at "+step); err != nil {
			t.Fatalf("crawl %d after the kill at %s: %v\n%s", i+1, step, err, p.Logs.String())
		}
		if out := p.Logs.String(); strings.Contains(out, "spooled for the next run") {
			t.Fatalf("crawl %d after the kill at %s left events unsent:\n%s", i+1, step, out)
		}
	}

	lines := eventstest.ReadEvents(t, file)
	content := map[string]string{}
	for _, e := range lines {
		b, _ := json.Marshal(e)
		id := e.EventID.String()
		if c, ok := content[id]; ok && c != string(b) {
			t.Errorf("the events file holds two contents for %s:\n%s\n%s", id, c, b)
		}
		content[id] = string(b)
	}
	testkit.WaitFor(t, time.Minute, fmt.Sprintf("the live database holds the file's %d events", len(content)),
		func() bool { return storetest.CountEvents(t, liveDB) >= int64(len(content)) })

	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"replay", file}, env(map[string]string{"KAFKA_BOOTSTRAP": addr, "KAFKA_TOPIC": replayTopic}), &out, &errOut); err != nil {
		t.Fatalf("crawler replay: %v\n%s", err, errOut.String())
	}
	testkit.WaitFor(t, time.Minute, fmt.Sprintf("the rebuilt database holds the file's %d events", len(content)),
		func() bool { return storetest.CountEvents(t, replayDB) >= int64(len(content)) })

	t.Logf("%d crawls killed, one at each step; %d lines, %d ids in the events file", len(spool.Steps()), len(lines), len(content))
	asOf := time.Now().Add(time.Hour).Format(time.RFC3339Nano) // one clock for both views (open lifetimes)
	for _, q := range []string{
		// booking_events without what Kafka and the insert add (topic, partition, offset, time).
		`select (to_jsonb(e) - 'kafka_topic' - 'kafka_partition' - 'kafka_offset' - 'ingested_at')::text from booking_events e order by event_id`,
		`select to_jsonb(l)::text j from booking_lifetimes l order by j`,
	} {
		live, rebuilt := jsonRows(t, liveDB, asOf, q), jsonRows(t, replayDB, asOf, q)
		if strings.Join(live, "\n") != strings.Join(rebuilt, "\n") {
			t.Errorf("%s\nlive (%d rows):\n%s\nrebuilt (%d rows):\n%s", q, len(live), strings.Join(live, "\n"), len(rebuilt), strings.Join(rebuilt, "\n"))
		}
		if len(live) == 0 {
			t.Errorf("%s: no rows", q)
		}
	}
	if n := storetest.CountEvents(t, liveDB); n != int64(len(content)) {
		t.Errorf("the live database holds %d events, the events file %d", n, len(content))
	}
}

// jsonRows runs q (one text column) with booking_lifetimes' clock at asOf (golf.now).
func jsonRows(t *testing.T, db *pgxpool.Pool, asOf, q string) []string {
	tx, err := db.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(t.Context())) }()
	if _, err := tx.Exec(t.Context(), "select set_config('golf.now', $1, true)", asOf); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
