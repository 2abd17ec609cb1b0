package consumerbench_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
)

// committed is the progress of group on topic's three partitions: the sum of its committed offsets
// (a partition without a commit counts 0).
func committed(addr, group, topic string) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		ps, err := kafkatest.CommittedOffsets(ctx, addr, group, topic, 3)
		if err != nil {
			return 0, err
		}
		sum := 0
		for _, p := range ps {
			sum += int(max(p.CommittedOffset, 0))
		}
		return sum, nil
	}
}

// timing is what the watcher saw of one contender's run.
type timing struct {
	start, first, done time.Time
	cpu                time.Duration // the contender's CPU time (user + system) until done
	pg, kafka          time.Duration // PostgreSQL's and the broker's CPU time from start to done
}

// running is a started contender: check fails the benchmark if it died, stop ends it, cpu is
// the CPU time it has used so far.
type running struct {
	check, stop func()
	cpu         func() time.Duration
}

func (t timing) cpuPerEvent(n int) float64 { return float64(t.cpu.Microseconds()) / float64(n) }

// pgPerEvent and kafkaPerEvent are the servers' CPU per event; totalPerEvent adds the contender's.
func (t timing) pgPerEvent(n int) float64    { return float64(t.pg.Microseconds()) / float64(n) }
func (t timing) kafkaPerEvent(n int) float64 { return float64(t.kafka.Microseconds()) / float64(n) }
func (t timing) totalPerEvent(n int) float64 {
	return float64((t.cpu + t.pg + t.kafka).Microseconds()) / float64(n)
}

// cpuLine is the CPU per event for a round's log line: the contender's, PostgreSQL's, the broker's, all.
func (t timing) cpuLine(n int) string {
	return fmt.Sprintf("%.1f + pg %.1f + kafka %.1f = %.1f µs/event", t.cpuPerEvent(n), t.pgPerEvent(n), t.kafkaPerEvent(n), t.totalPerEvent(n))
}

func (t timing) drain() time.Duration   { return t.done.Sub(t.first) }
func (t timing) process() time.Duration { return t.done.Sub(t.start) }
func (t timing) startup() time.Duration { return t.first.Sub(t.start) }
func (t timing) rate(n int) float64     { return float64(n) / t.drain().Seconds() }

// watch starts a contender (start) and times it by progress, read on a connection of its own
// (stored rows: storedRows; a replay of duplicates: the group's committed offsets): first progress,
// then progress = n. Until the progress says the end is under a second away it reads every
// 500 ms, then every 50 ms (every 10 ms before the first). The contender's processes must stay
// alive meanwhile; it is stopped once done. The stack's CPU is read at start and at done.
func watch(b *testing.B, name, dbURL string, n int, stack stackCPU, start func(string) running, progress func(*pgx.Conn) func(context.Context) (int, error)) timing {
	b.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), 30*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	read := progress(conn)
	stopPerf := startPerf(b, name)
	defer stopPerf()
	pg0, kafka0 := stack.pg(), stack.kafka()
	t := timing{start: time.Now()}
	r := start(dbURL)
	defer r.stop()
	alive := r.check
	for {
		c, err := read(ctx)
		if err != nil {
			b.Fatalf("watch: %v", err)
		}
		now := time.Now()
		if c > 0 && t.first.IsZero() {
			t.first = now
		}
		if c >= n {
			t.done, t.cpu = now, r.cpu()
			t.pg, t.kafka = stack.pg()-pg0, stack.kafka()-kafka0
			stopPerf()
			return t
		}
		alive()
		wait := 500 * time.Millisecond
		if el := now.Sub(t.first); c == 0 {
			wait = 10 * time.Millisecond
		} else if time.Duration(float64(el)*float64(n-c)/float64(c)) < time.Second {
			wait = 50 * time.Millisecond
		}
		time.Sleep(wait)
	}
}

// startPerf records, with BENCH_PROCESS_PERF=<dir> set, a system-wide `perf record -g` from a
// contender's start to its done into <dir>/<name>-<n>.data (perf report --comm postgres: where
// the backends' time goes); the returned stop ends it (safe to call twice). Without it, nothing.
func startPerf(b *testing.B, name string) (stop func()) {
	b.Helper()
	dir := os.Getenv("BENCH_PROCESS_PERF")
	if dir == "" {
		return func() {}
	}
	perfSeq++
	out := filepath.Join(dir, fmt.Sprintf("%s-%d.data", name, perfSeq))
	cmd := exec.Command("perf", "record", "-a", "-g", "-F", "499", "-o", out)
	if err := cmd.Start(); err != nil {
		b.Fatalf("perf record: %v", err)
	}
	stopped := false
	return func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		}
	}
}

var perfSeq int

// storedRows reads how many rows booking_events holds, cheaply: booking_events_hourly is kept
// by booking_events' statement triggers in the writing transaction (migrations 004 and 008), so
// its sum is the committed rows' count in a few pages, where count(*) reads the whole table
// (500,000 rows every 50 ms near the end: a core's worth of the watcher's CPU taken from the
// contenders). Once the sum reaches want it is checked against count(*), once.
func storedRows(want int) func(*pgx.Conn) func(context.Context) (int, error) {
	return func(conn *pgx.Conn) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			var c int
			if err := conn.QueryRow(ctx, "select coalesce(sum(events), 0) from booking_events_hourly").Scan(&c); err != nil {
				return 0, err
			}
			if c < want {
				return c, nil
			}
			var exact int
			if err := conn.QueryRow(ctx, "select count(*) from booking_events").Scan(&exact); err != nil {
				return 0, err
			}
			if exact != c {
				return 0, fmt.Errorf("booking_events_hourly sums to %d rows, booking_events holds %d", c, exact)
			}
			return exact, nil
		}
	}
}

// procCPU is pid's CPU time so far (user + system, /proc/pid/stat, in clock ticks of 10 ms).
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatalf("cpu of %d: %v", pid, err)
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:]) // the command name may hold spaces
	utime, err1 := strconv.Atoi(f[11])
	stime, err2 := strconv.Atoi(f[12])
	if err1 != nil || err2 != nil {
		b.Fatalf("cpu of %d: %q", pid, s)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// selfCPU is this process's CPU time so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
