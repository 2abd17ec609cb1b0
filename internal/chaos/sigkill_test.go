//go:build chaos

package chaos_test

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestSIGKILLConsumer kills the booking-consumer binary with SIGKILL at CHAOS_KILLS random moments
// while it drains CHAOS_EVENTS events with 1% poison and 2% repeats mixed in. Each kill lands
// 0-CHAOS_KILL_JITTER (300 ms) after the consumer was seen making progress, so every kill cuts into
// real work. The binary's session timeout is 10 s and not configurable, so each restart waits for
// the killed member's session to expire: budget ~12 s per kill.
func TestSIGKILLConsumer(t *testing.T) {
	stack(t) // refuses to run against the shared stack
	n := testkit.EnvInt(t, "CHAOS_EVENTS", 100_000)
	kills := testkit.EnvInt(t, "CHAOS_KILLS", 20)
	jitter := envDuration(t, "CHAOS_KILL_JITTER", 300*time.Millisecond)
	addr := kafkatest.Bootstrap(t)
	const partitions = 3
	topic := kafkatest.Topic(t, addr, partitions)
	group := kafkatest.Name(t, "sigkill")
	db, dbURL := storetest.NewDBURL(t)
	bin := consumerBinary(t)

	// n valid events, every 50th repeated later, every 100th message poison.
	evs := chaosEvents(0, n, "sigkill")
	var msgs []kafka.Message
	poisonCount, valid := 0, map[uuid.UUID]bool{}
	for i, e := range evs {
		msgs = append(msgs, encode(t, e))
		valid[e.EventID] = true
		if i%50 == 49 {
			msgs = append(msgs, encode(t, evs[i/2]))
		}
		if i%100 == 99 {
			msgs = append(msgs, poison(i))
			poisonCount++
		}
	}
	kafkatest.Produce(t, addr, topic, msgs)
	layout := readTopic(t, addr, topic, partitions)
	t.Logf("%d messages: %d distinct valid events, %d repeats, %d poison", len(msgs), len(valid), len(msgs)-len(valid)-poisonCount, poisonCount)

	start := func() (*exec.Cmd, chan error, *testkit.SyncBuffer) {
		logs := &testkit.SyncBuffer{}
		cmd := exec.Command(bin, "run", "--database-url", dbURL, "--kafka-bootstrap", addr, "--topic", topic,
			"--group", group, "--metrics-addr", "", "--no-migrate")
		cmd.Env = append(os.Environ(), "LOG_LEVEL=warn")
		cmd.Stderr = logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		return cmd, exited, logs
	}
	stored := func() int { return count(t, db, "booking_events") + count(t, db, "booking_events_dead") }
	want := len(valid) + poisonCount

	killed := 0
	for k := 1; k <= kills; k++ {
		before := stored()
		if before >= want {
			t.Logf("everything stored after %d kills; stopping the kills early", k-1)
			break
		}
		killed = k
		cmd, exited, logs := start()
		progressed := false
		deadline := time.Now().Add(2 * time.Minute)
		for !progressed && time.Now().Before(deadline) {
			select {
			case err := <-exited:
				t.Fatalf("consumer exited on its own before kill %d: %v\n%s", k, err, testkit.Tail(logs.String(), 3000))
			case <-time.After(100 * time.Millisecond):
			}
			progressed = stored() > before
		}
		if !progressed {
			_ = cmd.Process.Kill()
			t.Fatalf("kill %d: no progress within 2 minutes\n%s", k, testkit.Tail(logs.String(), 3000))
		}
		time.Sleep(rand.N(jitter))
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-exited //nolint:errcheck // killed: its exit error is expected
		committed := committedOffsets(t, addr, group, topic, partitions)
		checked := checkCommittedStored(t, db, topic, layout, committed)
		t.Logf("kill %d: %d of %d stored, committed %v, %d committed messages checked against the database",
			k, stored(), want, committed, checked)
	}

	cmd, exited, logs := start()
	started := time.Now()
	testkit.WaitFor(t, 10*time.Minute, "every message stored", func() bool { return stored() >= want })
	// Let the last commit land, then stop cleanly.
	testkit.WaitFor(t, time.Minute, "offsets committed to the end", func() bool {
		c := committedOffsets(t, addr, group, topic, partitions)
		for p, ps := range layout {
			if len(ps) > 0 && c[p] != ps[len(ps)-1].offset+1 {
				return false
			}
		}
		return true
	})
	// SIGTERM during start-up (migrations, topic check) exits 1 with "operation was canceled":
	// give the last consumer time to be up, so the clean stop is what is tested.
	time.Sleep(time.Until(started.Add(5 * time.Second)))
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("consumer after SIGTERM: %v\n%s", err, testkit.Tail(logs.String(), 3000))
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Error("consumer did not exit within 30 s of SIGTERM")
	}

	rows, dead := count(t, db, "booking_events"), count(t, db, "booking_events_dead")
	var distinct int
	if err := db.QueryRow(context.WithoutCancel(t.Context()), "select count(distinct event_id) from booking_events").Scan(&distinct); err != nil {
		t.Fatal(err)
	}
	t.Logf("after %d kills: %d rows (%d distinct ids), %d dead letters; want %d and %d", killed, rows, distinct, dead, len(valid), poisonCount)
	if rows != len(valid) || distinct != len(valid) {
		t.Errorf("rows = %d (distinct %d), want %d distinct valid event ids", rows, distinct, len(valid))
	}
	if dead != poisonCount {
		t.Errorf("dead letters = %d, want %d poison messages", dead, poisonCount)
	}
	checkCommittedStored(t, db, topic, layout, committedOffsets(t, addr, group, topic, partitions))
}
