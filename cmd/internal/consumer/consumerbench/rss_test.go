package consumerbench_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// BenchmarkBacklogRSS measures the booking-consumer binary (go build ./cmd/booking-consumer, run
// as a subprocess with its default batch size) draining a backlog of BENCH_BACKLOG (1,000,000)
// events into a fresh database, and a backlog a tenth that size, side by side. It reports each
// run's peak RSS (VmHWM from /proc/<pid>/status, read once every row is stored), the largest
// VmRSS sampled every 200 ms, and big/small: memory is bounded by the batch size, not the
// backlog, so the ratio should be about 1.
func BenchmarkBacklogRSS(b *testing.B) {
	big := testkit.EnvInt(b, "BENCH_BACKLOG", 1_000_000)
	small := max(big/10, 1)
	addr := kafkatest.Bootstrap(b)
	bin := buildConsumer(b)
	for b.Loop() {
		hwmSmall, rssSmall, dSmall := drainBacklog(b, bin, addr, small)
		hwmBig, rssBig, dBig := drainBacklog(b, bin, addr, big)
		b.Logf("backlog %d: VmHWM %.1f MB, max VmRSS %.1f MB, drained in %v", small, hwmSmall, rssSmall, dSmall)
		b.Logf("backlog %d: VmHWM %.1f MB, max VmRSS %.1f MB, drained in %v", big, hwmBig, rssBig, dBig)
		b.ReportMetric(float64(big), "big_backlog")
		b.ReportMetric(float64(small), "small_backlog")
		b.ReportMetric(hwmBig, "big_peak_MB")
		b.ReportMetric(hwmSmall, "small_peak_MB")
		b.ReportMetric(hwmBig/hwmSmall, "big/small_peak")
		b.ReportMetric(float64(big)/dBig.Seconds(), "big_events/s")
	}
}

// buildConsumer builds cmd/booking-consumer into a temporary directory.
func buildConsumer(b testing.TB) string {
	b.Helper()
	return goBuild(b, ".", "./cmd/booking-consumer", "booking-consumer")
}

// goBuild builds pkg of the module in dir (relative to the repo root) into a temporary directory
// as name, and returns the binary's path.
func goBuild(b testing.TB, dir, pkg, name string) string {
	b.Helper()
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		b.Fatalf("go env GOMOD: %v", err)
	}
	bin := filepath.Join(b.TempDir(), name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = filepath.Join(filepath.Dir(strings.TrimSpace(string(gomod))), dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build %s in %s: %v\n%s", pkg, dir, err, out)
	}
	return bin
}

// drainBacklog produces n events to a fresh topic, runs the consumer binary on it into a fresh
// database until all n rows are stored, and returns its VmHWM and largest sampled VmRSS in MB,
// and the time from start to the last row.
func drainBacklog(b testing.TB, bin, addr string, n int) (hwmMB, rssMB float64, took time.Duration) {
	b.Helper()
	topic := kafkatest.Topic(b, addr, 3)
	const chunk = 50_000
	for start := 0; start < n; start += chunk {
		evs := eventstest.CrawlEvents(start, min(start+chunk, n), fmt.Sprint("backlog", n))
		kafkatest.Produce(b, addr, topic, kafkatest.Encode(b, evs))
	}
	d := drain(b, bin, addr, topic, "booking_events", n, 5, 30*time.Minute) // a count a second
	return d.hwmMB, d.maxRSSMB, d.lastRow.Sub(d.start)
}

// procStatusKB reads a "Key:   123 kB" line of /proc/pid/status.
func procStatusKB(pid int, key string) (float64, bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != key {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			return 0, false
		}
		n, err := strconv.ParseFloat(fields[0], 64)
		return n, err == nil
	}
	return 0, false
}

// BenchmarkLargeMessageRSS measures the booking-consumer binary's peak RSS (VmHWM) draining
// BENCH_LARGE (1,000) junk messages of 900 KB each (all dead-lettered) vs draining as many normal
// events, side by side, with its default flags. Memory is bounded in bytes (internal/consumer's package
// doc gives the formula), so large/normal should stay at or below 2: before that bound the consumer
// was measured at 727 MB for 200 such messages.
func BenchmarkLargeMessageRSS(b *testing.B) {
	n := testkit.EnvInt(b, "BENCH_LARGE", 1000)
	addr := kafkatest.Bootstrap(b)
	bin := buildConsumer(b)
	for b.Loop() {
		normal := largeTopic(b, addr)
		kafkatest.Produce(b, addr, normal, kafkatest.Encode(b, eventstest.CrawlEvents(0, n, "rss-normal")))
		hwmNormal, dNormal := drainTopic(b, bin, addr, normal, "booking_events", n)

		large := largeTopic(b, addr)
		produceLarge(b, addr, large, n, 900<<10)
		hwmLarge, dLarge := drainTopic(b, bin, addr, large, "booking_events_dead", n)

		b.Logf("%d normal events: VmHWM %.1f MB, drained in %v", n, hwmNormal, dNormal)
		b.Logf("%d messages of 900 KB: VmHWM %.1f MB, drained in %v", n, hwmLarge, dLarge)
		b.ReportMetric(hwmNormal, "normal_peak_MB")
		b.ReportMetric(hwmLarge, "large_peak_MB")
		b.ReportMetric(hwmLarge/hwmNormal, "large/normal_peak")
	}
}

// largeTopic creates a 3-partition topic that accepts messages up to 1.1 MB (max.message.bytes),
// deleted when the benchmark ends.
func largeTopic(b testing.TB, addr string) string {
	b.Helper()
	topic := kafkatest.Name(b, "large")
	if err := kafkabus.CreateTopicOn(b.Context(), []string{addr}, topic, 3, map[string]string{"max.message.bytes": "1100000"}); err != nil {
		b.Fatalf("create topic %s: %v", topic, err)
	}
	b.Cleanup(func() { _ = kafkatest.DeleteTopic(context.Background(), addr, topic) })
	ctx, cancel := context.WithTimeout(b.Context(), 15*time.Second)
	defer cancel()
	if _, err := kafkabus.WaitForTopic(ctx, []string{addr}, topic, nil); err != nil {
		b.Fatal(err)
	}
	return topic
}

// produceLarge writes n distinct incompressible values of size bytes, one message per request.
func produceLarge(b testing.TB, addr, topic string, n, size int) {
	b.Helper()
	w := &kafka.Writer{Addr: kafka.TCP(addr), Topic: topic, Balancer: &kafka.RoundRobin{}, RequiredAcks: kafka.RequireAll,
		BatchTimeout: time.Millisecond, BatchSize: 1, BatchBytes: 1_100_000,
		Transport: &kafka.Transport{DialTimeout: 5 * time.Second}}
	defer w.Close()
	ctx, cancel := context.WithTimeout(b.Context(), 10*time.Minute)
	defer cancel()
	r := rand.New(rand.NewPCG(1, 2))
	value := make([]byte, size)
	for i := range value {
		value[i] = byte(r.UintN(256))
	}
	for i := range n {
		binary.BigEndian.PutUint64(value, uint64(i)) // distinct values
		if err := w.WriteMessages(ctx, kafka.Message{Key: []byte(fmt.Sprint("junk-", i)), Value: value}); err != nil {
			b.Fatalf("produce large message %d to %s: %.300v", i, topic, err)
		}
	}
}

// drainTopic runs the consumer binary (default flags) on topic into a fresh database until table
// holds want rows, and returns its VmHWM in MB and the time from the first stored row to the last
// (start-up and the group join left out).
func drainTopic(b testing.TB, bin, addr, topic, table string, want int, args ...string) (hwmMB float64, took time.Duration) {
	b.Helper()
	d := drain(b, bin, addr, topic, table, want, 1, 20*time.Minute, args...)
	return d.hwmMB, d.lastRow.Sub(d.firstRow)
}

// BenchmarkQueueCapacity drains BENCH_QUEUE_EVENTS (100,000) normal events with the binary at
// --queue-capacity 8 (the default) and 1000 (kafka-go's usual tuning), side by side: what the
// small, byte-safe queue costs in throughput.
func BenchmarkQueueCapacity(b *testing.B) {
	n := testkit.EnvInt(b, "BENCH_QUEUE_EVENTS", 100_000)
	addr := kafkatest.Bootstrap(b)
	bin := buildConsumer(b)
	topic := largeTopic(b, addr)
	kafkatest.Produce(b, addr, topic, kafkatest.Encode(b, eventstest.CrawlEvents(0, n, "queue")))
	for b.Loop() {
		rates := map[string]float64{}
		for _, q := range []string{"8", "1000", "8", "1000"} { // interleaved: load drifts
			_, d := drainTopic(b, bin, addr, topic, "booking_events", n, "--queue-capacity", q)
			rate := float64(n) / d.Seconds()
			b.Logf("--queue-capacity %s: %d events in %v (%.0f events/s)", q, n, d, rate)
			rates[q] = max(rates[q], rate)
		}
		b.ReportMetric(rates["8"], "q8_events/s")
		b.ReportMetric(rates["1000"], "q1000_events/s")
		b.ReportMetric(rates["8"]/rates["1000"], "q8/q1000")
	}
}

// startConsumerBin starts bin run on topic into the database at dbURL, in its own group, with
// LOG_LEVEL=warn, no metrics server, no migrations and the extra args; it is killed when the
// benchmark ends if it still runs.
func startConsumerBin(b testing.TB, bin, dbURL, addr, topic string, args ...string) *testkit.Proc {
	b.Helper()
	return testkit.Start(b, bin, []string{"LOG_LEVEL=warn"}, append([]string{"run", "--database-url", dbURL,
		"--kafka-bootstrap", addr, "--topic", topic, "--group", kafkatest.Name(b, "rss"), "--metrics-addr", "", "--no-migrate"},
		args...)...)
}

// drained is what drain saw of one run of the binary: when it started, when table first held a
// row and when it held them all, its VmHWM and the largest VmRSS sampled, in MB.
type drained struct {
	start, firstRow, lastRow time.Time
	hwmMB, maxRSSMB          float64
}

// drain runs bin on topic into a fresh database until table holds want rows, within timeout. Every
// 200 ms it samples the binary's VmRSS, and every countEvery-th time it counts the rows (a count
// of a large table is not free). Once all rows are in, it reads VmHWM and stops the binary, which
// must exit cleanly within 30 s of SIGTERM.
func drain(b testing.TB, bin, addr, topic, table string, want, countEvery int, timeout time.Duration, args ...string) drained {
	b.Helper()
	pool, dbURL := storetest.NewDBURL(b)
	deadline := time.Now().Add(timeout)
	d := drained{start: time.Now()}
	p := startConsumerBin(b, bin, dbURL, addr, topic, args...)
	pid := p.Cmd.Process.Pid
	for tick := 0; ; tick++ {
		if v, ok := procStatusKB(pid, "VmRSS"); ok {
			d.maxRSSMB = max(d.maxRSSMB, v/1024)
		}
		if tick%countEvery == 0 {
			c := count(b, pool, table)
			if c > 0 && d.firstRow.IsZero() {
				d.firstRow = time.Now()
			}
			if c >= want {
				d.lastRow = time.Now()
				break
			}
		}
		p.Alive(b, "before "+topic+" was drained")
		if time.Now().After(deadline) {
			b.Fatalf("topic %s not drained in time\n%s", topic, testkit.Tail(p.Logs.String(), 4000))
		}
		time.Sleep(200 * time.Millisecond)
	}
	hwm, ok := procStatusKB(pid, "VmHWM")
	if !ok {
		b.Fatalf("no VmHWM in /proc/%d/status", pid)
	}
	d.hwmMB = hwm / 1024
	p.Stop(b, 30*time.Second)
	return d
}
