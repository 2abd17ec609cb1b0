//go:build cluster

package chaoscluster_test

import (
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// The faults of TestClusterChaos, one function per scenario; sample checks the committed offsets.

// waitLeader waits until partition of the topic is led by a node other than old, and returns
// how long that took since from.
func (e *env) waitLeader(t *testing.T, partition, old int, from time.Time) time.Duration {
	e.c.WaitFor(t, e.topic, "a new leader", 2*time.Minute, func(ps []kafka.Partition) bool {
		n := kafkatest.LeaderOf(ps, partition)
		return n > 0 && n != old
	})
	return time.Since(from)
}

func leaderKill(t *testing.T, e *env, sample func()) {
	part, node, err := e.c.LeaderNotController(t.Context(), e.topic)
	if err != nil || node == 0 {
		t.Fatalf("no partition led by a node other than the controller %d: %v", e.c.Controller(), err)
	}
	ctl := e.c.Controller()
	killed := time.Now()
	e.c.Signal(t, node, syscall.SIGKILL)
	sample()
	d := e.waitLeader(t, part, node, killed)
	t.Logf("SIGKILL node %d (leader of partition %d; controller %d): new leader after %v", node, part, ctl, d.Round(100*time.Millisecond))
	sample()
}

func controllerKill(t *testing.T, e *env, sample func()) {
	ctl := e.c.Controller()
	if ctl == 0 {
		t.Fatal("no active controller found")
	}
	killed := time.Now()
	e.c.Signal(t, ctl, syscall.SIGKILL)
	testkit.WaitFor(t, 2*time.Minute, "a new active controller", func() bool {
		n := e.c.Controller()
		return n != 0 && n != ctl
	})
	t.Logf("SIGKILL active controller %d: node %d active after %v", ctl, e.c.Controller(), time.Since(killed).Round(100*time.Millisecond))
	sample()
}

// rollingRestart stops and restarts each node in turn. A restart is no outage for the consumers:
// whatever fetches fail meanwhile, none marks a consumer stuck (that takes --alarm-after failures
// in a row and --fetch-stuck-after, a minute, of them), so /healthz stays 200.
func rollingRestart(t *testing.T, e *env, sample func()) {
	const failed = "fetch failed; retrying"
	seen := map[*testkit.Proc]int{}
	for _, p := range e.cs.procs {
		seen[p] = len(p.Logs.Lines(failed))
	}
	defer func() {
		failures, stuck := 0, 0
		for _, p := range e.cs.procs {
			lines := p.Logs.Lines(failed)
			lines = lines[min(seen[p], len(lines)):]
			failures += len(lines)
			for _, l := range lines {
				if strings.Contains(l, `"stuck":true`) {
					stuck++
					t.Errorf("a rolling restart marked a consumer stuck: %s", l)
				}
			}
		}
		t.Logf("rolling restart: %d failed fetches in the consumers' logs, %d of them marking a consumer stuck", failures, stuck)
	}()
	for n := 1; n <= len(e.c.Brokers); n++ {
		began := time.Now()
		e.c.StopNode(t, n)
		sample()
		e.c.Up(t)
		e.c.WaitFor(t, e.topic, "node back in sync", 3*time.Minute, kafkatest.FullISR)
		t.Logf("node %d stopped (SIGTERM), started and back in sync in %v", n, time.Since(began).Round(100*time.Millisecond))
		sample()
	}
}

func pausedNode(t *testing.T, e *env, sample func()) {
	part, node, err := e.c.LeaderNotController(t.Context(), e.topic)
	if err != nil || node == 0 {
		t.Fatalf("no partition led by a node other than the controller: %v", err)
	}
	paused := time.Now()
	e.c.Signal(t, node, syscall.SIGSTOP)
	t.Cleanup(func() { _ = syscall.Kill(e.c.Pid(node), syscall.SIGCONT) })
	// Past the broker session timeout: the controller fences the node and moves its leadership.
	d := e.waitLeader(t, part, node, paused)
	sample()
	e.c.Signal(t, node, syscall.SIGCONT)
	t.Logf("SIGSTOP node %d (leader of partition %d): fenced, new leader after %v; SIGCONT after %v", node, part,
		d.Round(100*time.Millisecond), time.Since(paused).Round(100*time.Millisecond))
}

func consumerKills(t *testing.T, e *env, sample func()) {
	kills := testkit.EnvInt(t, "CLUSTER_CONSUMER_KILLS", 9)
	every := testkit.EnvDuration(t, "CLUSTER_CONSUMER_KILL_EVERY", 20*time.Second)
	for k := 1; k <= kills; k++ {
		next := time.Now().Add(every)
		for time.Now().Before(next) { // the kill schedule, sampling the offsets meanwhile
			sample()
			time.Sleep(time.Until(next) / 2)
		}
		i := rand.N(len(e.cs.procs))
		p := e.cs.procs[i]
		_ = p.Cmd.Process.Signal(syscall.SIGKILL)
		_ = p.Wait(t, time.Minute)
		e.cs.procs = append(e.cs.procs[:i:i], e.cs.procs[i+1:]...)
		e.cs.start()
		sample()
	}
	t.Logf("%d consumer processes SIGKILLed, one every %v, each replaced at once", kills, every)
}
