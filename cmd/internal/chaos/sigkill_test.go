//go:build chaos

package chaos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
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
	jitter := testkit.EnvDuration(t, "CHAOS_KILL_JITTER", 300*time.Millisecond)
	d := newDrain(t, "sigkill")
	db := d.db

	// n valid events, every 50th repeated later, every 100th message poison.
	evs := eventstest.CrawlEvents(0, n, "sigkill")
	enc := kafkatest.Encode(t, evs)
	var msgs []kafka.Message
	poisonCount, valid := 0, map[uuid.UUID]bool{}
	for i, e := range evs {
		msgs = append(msgs, enc[i])
		valid[e.EventID] = true
		if i%50 == 49 {
			msgs = append(msgs, enc[i/2])
		}
		if i%100 == 99 {
			msgs = append(msgs, poison(i))
			poisonCount++
		}
	}
	d.produce(t, msgs)
	t.Logf("%d messages: %d distinct valid events, %d repeats, %d poison", len(msgs), len(valid), len(msgs)-len(valid)-poisonCount, poisonCount)

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
		p := d.start(t)
		testkit.WaitForf(t, 2*time.Minute, func() string {
			return fmt.Sprintf("progress before kill %d\n%s", k, testkit.Tail(p.Logs.String(), 3000))
		}, func() bool {
			p.Alive(t, fmt.Sprintf("on its own before kill %d", k))
			return stored() > before
		})
		time.Sleep(rand.N(jitter))
		if err := p.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_ = p.Wait(t, time.Minute) // killed: its exit error is expected
		committed := d.committed(t)
		checked := checkCommittedStored(t, db, d.topic, d.layout, committed)
		t.Logf("kill %d: %d of %d stored, committed %v, %d committed messages checked against the database",
			k, stored(), want, committed, checked)
	}

	p := d.start(t)
	started := time.Now()
	testkit.WaitFor(t, 10*time.Minute, "every message stored", func() bool { return stored() >= want })
	// Let the last commit land, then stop cleanly.
	testkit.WaitFor(t, time.Minute, "offsets committed to the end", func() bool { return d.atEnd(t) })
	// SIGTERM during start-up (migrations, topic check) exits 1 with "operation was canceled":
	// give the last consumer time to be up, so the clean stop is what is tested.
	time.Sleep(time.Until(started.Add(5 * time.Second)))
	p.Stop(t, 30*time.Second)

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
	d.checkCommitted(t)
}
