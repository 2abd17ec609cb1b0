package consumerbench_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// stackCPU reads the CPU time the local stack's servers have used: with one core taken by the
// hog, a contender's drain rate is bounded by the CPU it costs everyone per event (its own, its
// PostgreSQL backends', the broker's), not by its own alone. Zero pids (a server on another
// machine, or one this process cannot see) read as zero.
type stackCPU struct {
	postmaster int // PostgreSQL: the postmaster, its live children and the ones it reaped
	broker     int // the Kafka broker serving the benchmark's bootstrap address
}

// findStack finds the servers behind dbURL and addr on this machine.
func findStack(b testing.TB, dbURL, addr string) stackCPU {
	b.Helper()
	var s stackCPU
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, dbURL); err == nil {
		var backend int
		if conn.QueryRow(ctx, "select pg_backend_pid()").Scan(&backend) == nil {
			if f, ok := statFields(backend); ok {
				s.postmaster, _ = strconv.Atoi(f[1])
			}
		}
		conn.Close(context.Background())
	}
	if _, port, err := net.SplitHostPort(addr); err == nil {
		s.broker = kafkaPid(port)
	}
	if s.postmaster == 0 || s.broker == 0 {
		b.Logf("stack CPU: postmaster pid %d, broker pid %d (0: not found here; that part reads 0)", s.postmaster, s.broker)
	}
	return s
}

// pg is PostgreSQL's CPU time so far: the postmaster's own and its reaped children's (backends
// that exited), plus every live child's (backends, autovacuum, checkpointer, WAL writer).
func (s stackCPU) pg() time.Duration {
	if s.postmaster == 0 {
		return 0
	}
	f, ok := statFields(s.postmaster)
	if !ok {
		return 0
	}
	total := ticks(f, 11, 12, 13, 14) // utime, stime, cutime, cstime
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	want := strconv.Itoa(s.postmaster)
	for _, d := range dirs {
		pid, _ := strconv.Atoi(filepath.Base(d))
		if c, ok := statFields(pid); ok && c[1] == want {
			total += ticks(c, 11, 12)
		}
	}
	return total
}

// kafka is the broker's CPU time so far (every thread of its JVM).
func (s stackCPU) kafka() time.Duration {
	if s.broker == 0 {
		return 0
	}
	f, ok := statFields(s.broker)
	if !ok {
		return 0
	}
	return ticks(f, 11, 12)
}

// statFields are /proc/pid/stat's fields after the command name (state is [0], ppid [1], utime
// [11], stime [12], cutime [13], cstime [14]).
func statFields(pid int) ([]string, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, false
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // the command name may hold spaces
	return f, len(f) > 14
}

// ticks sums the fields at idx, in clock ticks of 10 ms.
func ticks(f []string, idx ...int) time.Duration {
	var n int
	for _, i := range idx {
		v, _ := strconv.Atoi(f[i])
		n += v
	}
	return time.Duration(n) * 10 * time.Millisecond
}

// kafkaPid is the pid of the Kafka broker (a JVM running kafka.Kafka) whose properties file
// listens on port, or 0. Several stacks may run on one machine, so the port decides.
func kafkaPid(port string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		raw, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !strings.Contains(string(raw), "kafka.Kafka") {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		props, err := os.ReadFile(args[len(args)-1])
		if err != nil {
			continue
		}
		for line := range strings.SplitSeq(string(props), "\n") {
			if strings.HasPrefix(line, "listeners=") && strings.Contains(line, ":"+port) {
				pid, _ := strconv.Atoi(filepath.Base(d))
				return pid
			}
		}
	}
	return 0
}
