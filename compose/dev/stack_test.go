// Tests of compose/dev/stack itself: a second, private stack (own directory, own ports) is brought up,
// checked, taken down, and fed the faults users meet: a port already taken, stale pid files, a
// half-formatted Kafka log dir, a PostgreSQL data dir from another version.
package dev_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

type stack struct {
	t   *testing.T
	dir string
	env []string
	pg  int
}

// freePort is the port of a loopback address no one listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	_, p, _ := net.SplitHostPort(testkit.FreeAddr(t))
	port, err := strconv.Atoi(p) // an address that does not split fails here
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func newStack(t *testing.T) *stack {
	dir, err := os.MkdirTemp("", "stacktest-")
	if err != nil {
		t.Fatal(err)
	}
	// PostgreSQL runs as the 'postgres' user when we are root: it must be able to reach the folder.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s := &stack{t: t, dir: dir, pg: freePort(t)}
	s.env = append(os.Environ(),
		"STACK_DIR="+dir,
		"PG_PORT="+strconv.Itoa(s.pg),
		"KAFKA_PORT="+strconv.Itoa(freePort(t)),
		"KAFKA_CONTROLLER_PORT="+strconv.Itoa(freePort(t)),
		"STACK_TIMEOUT=90",
		"KAFKA_HEAP_OPTS=-Xms256m -Xmx512m",
	)
	t.Cleanup(func() {
		out, err := s.run("down")
		if err != nil {
			t.Logf("cleanup down: %v\n%s", err, out)
		}
		_ = os.RemoveAll(dir)
	})
	return s
}

// run runs the stack script with a verb and returns its combined output. A hang is a failure.
func (s *stack) run(verb string) (string, error) {
	s.t.Helper()
	cmd := exec.Command("./stack", verb)
	cmd.Env = s.env
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
		return string(out), err
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		s.t.Fatalf("stack %s hung for 3 minutes", verb)
		return "", nil
	}
}

func (s *stack) mustRun(verb string) string {
	s.t.Helper()
	out, err := s.run(verb)
	if err != nil {
		s.t.Fatalf("stack %s: %v\n%s", verb, err, out)
	}
	return out
}

func (s *stack) mustFail(verb, want string) string {
	s.t.Helper()
	out, err := s.run(verb)
	if err == nil {
		s.t.Fatalf("stack %s succeeded, want a failure saying %q\n%s", verb, want, out)
	}
	if !strings.Contains(out, want) {
		s.t.Fatalf("stack %s failed without saying %q:\n%s", verb, want, out)
	}
	return out
}

func (s *stack) pids() []int {
	var pids []int
	for _, f := range []string{"postgres/data/postmaster.pid", "kafka/kafka.pid"} {
		b, err := os.ReadFile(filepath.Join(s.dir, f))
		if err != nil {
			continue
		}
		first := strings.SplitN(strings.TrimSpace(string(b)), "\n", 2)[0]
		if pid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestStackLifecycleAndFaults(t *testing.T) {
	s := newStack(t)

	s.mustRun("up")
	again := s.mustRun("up")
	if !strings.Contains(again, "already running") {
		t.Fatalf("second up did not say the stack was already running:\n%s", again)
	}
	if out := s.mustRun("status"); !strings.Contains(out, "postgres: up") || !strings.Contains(out, "kafka:    up") {
		t.Fatalf("status after up:\n%s", out)
	}
	env := s.mustRun("env")
	if !strings.Contains(env, fmt.Sprintf("127.0.0.1:%d/golf", s.pg)) || !strings.Contains(env, "KAFKA_BOOTSTRAP=") {
		t.Fatalf("env does not export the stack's addresses:\n%s", env)
	}
	pids := s.pids()
	if len(pids) != 2 {
		t.Fatalf("want 2 recorded pids, got %v", pids)
	}

	s.mustRun("down")
	for _, pid := range pids {
		if alive(pid) {
			t.Fatalf("pid %d still running after down", pid)
		}
	}
	if out, err := s.run("status"); err == nil {
		t.Fatalf("status succeeded with the stack down:\n%s", out)
	}

	// Stale pid files (a crash) and a port taken by somebody else: a clear message, no hang.
	if err := os.WriteFile(filepath.Join(s.dir, "postgres/data/postmaster.pid"), []byte("999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "kafka/kafka.pid"), []byte("999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", s.pg))
	if err != nil {
		t.Fatal(err)
	}
	out := s.mustFail("up", fmt.Sprintf("port %d is taken", s.pg))
	if !strings.Contains(out, "removing stale") {
		t.Fatalf("stale postmaster.pid not reported:\n%s", out)
	}
	_ = l.Close()

	// A half-formatted Kafka log dir: named, with the way out.
	if err := os.Remove(filepath.Join(s.dir, "kafka/data/meta.properties")); err != nil {
		t.Fatal(err)
	}
	s.mustFail("up", "half-formatted")
	s.mustRun("reset")
	if _, err := os.Stat(filepath.Join(s.dir, "kafka/data")); !os.IsNotExist(err) {
		t.Fatalf("reset left kafka/data behind (stat err %v)", err)
	}

	// A PostgreSQL data dir from another major version.
	data := filepath.Join(s.dir, "postgres/data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "PG_VERSION"), []byte("14\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.mustFail("up", "made by PostgreSQL 14")
	s.mustRun("reset")
	for _, pid := range s.pids() {
		if alive(pid) {
			t.Fatalf("pid %d still running after reset", pid)
		}
	}
}

// A cluster's nodes record the node count they were formatted for: 'up' with another count (or a
// single-broker data dir under a cluster's settings) is refused before anything starts, and the
// later verbs find the cluster without KAFKA_BROKERS. No JVM runs: the refusal comes first.
func TestStackRefusesAnotherNodeCount(t *testing.T) {
	s := newStack(t)
	node1 := filepath.Join(s.dir, "kafka-1")
	if err := os.MkdirAll(node1, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(node1, "nodes"), []byte("nodes=3\nport=41092\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := s.mustRun("env")
	if !strings.Contains(env, "KAFKA_BOOTSTRAP='127.0.0.1:41092,127.0.0.1:41094,127.0.0.1:41096'") {
		t.Fatalf("env of a recorded 3-node cluster does not list its three nodes:\n%s", env)
	}
	base := s.env
	for _, n := range []string{"2", "1"} {
		s.env = append(base, "KAFKA_BROKERS="+n)
		s.mustFail("up", "formatted for a 3-node cluster, not "+n)
	}
	if _, err := os.Stat(filepath.Join(s.dir, "postgres")); !os.IsNotExist(err) {
		t.Fatalf("a refused up started PostgreSQL first (stat err %v)", err)
	}

	// A single broker's formatted data dir under a cluster's settings.
	if err := os.RemoveAll(node1); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(s.dir, "kafka", "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "meta.properties"), []byte("node.id=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.env = append(base, "KAFKA_BROKERS=3")
	s.mustFail("up", "formatted for a single broker")
	s.env = base
}

// withoutPorts is env without the port variables: what a user's shell has after a restart.
func withoutPorts(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PG_PORT", "KAFKA_PORT", "KAFKA_CONTROLLER_PORT", "KAFKA_CLUSTER_PORT":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// A stack started on other ports than the defaults: 'status' and 'env' without the port variables
// name its own ports (read from its config files), never the defaults, which may be someone
// else's stack; a port variable that disagrees with the running stack is an error naming both.
func TestStackStatusAndEnvNameTheRunningStacksPorts(t *testing.T) {
	s := newStack(t)
	s.mustRun("up")
	kafka := ""
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "KAFKA_PORT="); ok {
			kafka = v
		}
	}
	started := s.env
	s.env = withoutPorts(started)
	env := s.mustRun("env")
	if !strings.Contains(env, fmt.Sprintf("127.0.0.1:%d/golf", s.pg)) || !strings.Contains(env, "KAFKA_BOOTSTRAP='127.0.0.1:"+kafka+"'") {
		t.Errorf("env without the port variables does not name the stack's ports (postgres %d, kafka %s):\n%s", s.pg, kafka, env)
	}
	status := s.mustRun("status")
	if !strings.Contains(status, fmt.Sprintf("127.0.0.1:%d db", s.pg)) || !strings.Contains(status, "127.0.0.1:"+kafka+" (") {
		t.Errorf("status without the port variables does not name the stack's ports (postgres %d, kafka %s):\n%s", s.pg, kafka, status)
	}
	other := freePort(t)
	for _, verb := range []string{"env", "status", "up"} {
		s.env = append(withoutPorts(started), "PG_PORT="+strconv.Itoa(other))
		out := s.mustFail(verb, fmt.Sprintf("PG_PORT=%d", other))
		if !strings.Contains(out, strconv.Itoa(s.pg)) {
			t.Errorf("%s with PG_PORT=%d beside the stack on %d does not name both:\n%s", verb, other, s.pg, out)
		}
		s.env = append(withoutPorts(started), "KAFKA_PORT="+strconv.Itoa(other))
		out = s.mustFail(verb, fmt.Sprintf("KAFKA_PORT=%d", other))
		if !strings.Contains(out, kafka) {
			t.Errorf("%s with KAFKA_PORT=%d beside the stack on %s does not name both:\n%s", verb, other, kafka, out)
		}
	}
	s.env = started
	if out := s.mustRun("status"); !strings.Contains(out, "postgres: up") {
		t.Errorf("status with the stack's own ports:\n%s", out)
	}
}
