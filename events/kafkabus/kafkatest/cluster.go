package kafkatest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// Cluster is the three-node stack of `KAFKA_BROKERS=3 compose/dev/stack up` for tests that kill,
// pause and restart its nodes (build tag cluster; never `make test`). Node n (1-based) listens on
// Brokers[n-1] and records its pid in StackDir/kafka-n/kafka.pid.
type Cluster struct {
	StackDir string
	Brokers  []string
	root     string // the repository, for compose/dev/stack
}

// NewCluster finds the cluster of CLUSTER_STACK_DIR (its addresses from `compose/dev/stack env`)
// and waits until every node answers. It fails the test with what to run when it cannot.
func NewCluster(t testing.TB) *Cluster {
	t.Helper()
	dir := os.Getenv("CLUSTER_STACK_DIR")
	if dir == "" {
		t.Fatal("CLUSTER_STACK_DIR is not set: run the cluster tests through compose/dev/chaos-cluster (make chaos-cluster)")
	}
	c := &Cluster{StackDir: dir, root: testkit.ModuleRoot(t)}
	out, err := c.stack("env")
	if err != nil {
		t.Fatalf("compose/dev/stack env: %v\n%s", err, out)
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "export KAFKA_BOOTSTRAP="); ok {
			c.Brokers = strings.Split(strings.Trim(v, "'"), ",")
		}
	}
	if len(c.Brokers) < 3 {
		t.Fatalf("the stack in %s is not a cluster (KAFKA_BOOTSTRAP %v): start it with KAFKA_BROKERS=3 compose/dev/stack up", dir, c.Brokers)
	}
	c.WaitAllUp(t)
	return c
}

func (c *Cluster) stack(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.root, "compose/dev/stack"), args...)
	cmd.Env = append(os.Environ(), "STACK_DIR="+c.StackDir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Up runs `compose/dev/stack up`, which starts every node that is not running, and waits for all.
func (c *Cluster) Up(t testing.TB) {
	t.Helper()
	if out, err := c.stack("up"); err != nil {
		t.Fatalf("compose/dev/stack up: %v\n%s", err, out)
	}
	c.WaitAllUp(t)
}

// StopNode runs `compose/dev/stack stop-node n`: SIGTERM, a controlled shutdown.
func (c *Cluster) StopNode(t testing.TB, n int) {
	t.Helper()
	if out, err := c.stack("stop-node", strconv.Itoa(n)); err != nil {
		t.Fatalf("compose/dev/stack stop-node %d: %v\n%s", n, err, out)
	}
}

// LeaderNotController is a partition of topic whose leader is not the active controller, and
// that leader's node id; -1, 0 when there is none.
func (c *Cluster) LeaderNotController(ctx context.Context, topic string) (partition, node int, err error) {
	ctl := c.Controller()
	ps, err := c.Partitions(ctx, topic)
	if err != nil {
		return -1, 0, err
	}
	for _, p := range ps {
		if n := p.Leader.ID; n != ctl && n > 0 {
			return p.ID, n, nil
		}
	}
	return -1, 0, nil
}

// LeaderOf is the node id leading partition of topic; 0 when none or unknown.
func LeaderOf(ps []kafka.Partition, partition int) int {
	for _, p := range ps {
		if p.ID == partition {
			return p.Leader.ID
		}
	}
	return 0
}

// WaitAllUp waits (up to 3 minutes) until every node answers ApiVersions.
func (c *Cluster) WaitAllUp(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, b := range c.Brokers {
		if err := WaitReady(ctx, b); err != nil {
			t.Fatalf("node %s: %v", b, err)
		}
	}
}

// Pid is node n's recorded process id; 0 when it is not running.
func (c *Cluster) Pid(n int) int {
	b, err := os.ReadFile(filepath.Join(c.StackDir, fmt.Sprintf("kafka-%d", n), "kafka.pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || syscall.Kill(pid, 0) != nil {
		return 0
	}
	return pid
}

// Signal sends sig to node n; SIGKILL also waits for the process to be gone.
func (c *Cluster) Signal(t testing.TB, n int, sig syscall.Signal) {
	t.Helper()
	pid := c.Pid(n)
	if pid == 0 {
		t.Fatalf("node %d is not running", n)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("signal %v to node %d (pid %d): %v", sig, n, pid, err)
	}
	if sig != syscall.SIGKILL {
		return
	}
	for deadline := time.Now().Add(30 * time.Second); syscall.Kill(pid, 0) == nil; {
		if time.Now().After(deadline) {
			t.Fatalf("node %d (pid %d) still alive 30 s after SIGKILL", n, pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Node is the node id of a broker address of c (1-based), 0 if none.
func (c *Cluster) Node(addr string) int {
	for i, b := range c.Brokers {
		if b == addr {
			return i + 1
		}
	}
	return 0
}

// Controller is the active KRaft controller's node id: the leader of the newest epoch in the
// running nodes' quorum-state files (the Metadata API names a random broker in KRaft); 0 if none.
func (c *Cluster) Controller() int {
	best, leader := -1, 0
	for n := range len(c.Brokers) {
		if c.Pid(n+1) == 0 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(c.StackDir, fmt.Sprintf("kafka-%d", n+1), "data", "__cluster_metadata-0", "quorum-state"))
		if err != nil {
			continue
		}
		var qs struct{ LeaderID, LeaderEpoch int }
		if json.Unmarshal(b, &qs) == nil && qs.LeaderID > 0 && qs.LeaderEpoch > best {
			best, leader = qs.LeaderEpoch, qs.LeaderID
		}
	}
	return leader
}

// Partitions is topic's metadata, asked of the nodes that are up.
func (c *Cluster) Partitions(ctx context.Context, topic string) ([]kafka.Partition, error) {
	tr := &kafka.Transport{DialTimeout: 2 * time.Second}
	defer tr.CloseIdleConnections()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var alive []string
	for i, b := range c.Brokers {
		if c.Pid(i+1) != 0 {
			alive = append(alive, b)
		}
	}
	resp, err := (&kafka.Client{Addr: kafka.TCP(alive...), Transport: tr}).Metadata(rctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil {
		return nil, err
	}
	for _, tp := range resp.Topics {
		if tp.Name == topic {
			if tp.Error != nil {
				return nil, tp.Error
			}
			return tp.Partitions, nil
		}
	}
	return nil, fmt.Errorf("topic %s not in the metadata", topic)
}

// WaitFor polls cond (every 250 ms, up to timeout) on topic's partitions and fails t with what
// when it never holds.
func (c *Cluster) WaitFor(t testing.TB, topic, what string, timeout time.Duration, cond func([]kafka.Partition) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	var last []kafka.Partition
	var err error
	for {
		last, err = c.Partitions(ctx, topic)
		if err == nil && cond(last) {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("topic %s: %s did not happen within %v (last metadata %v, err %v)", topic, what, timeout, last, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// FullISR reports whether every partition has all its replicas in sync.
func FullISR(ps []kafka.Partition) bool {
	for _, p := range ps {
		if len(p.Isr) < len(p.Replicas) || len(p.Replicas) == 0 {
			return false
		}
	}
	return len(ps) > 0
}
