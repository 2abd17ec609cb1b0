package consumerbench_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
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
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		b.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	bin := filepath.Join(b.TempDir(), "booking-consumer")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/booking-consumer")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("go build ./cmd/booking-consumer: %v\n%s", err, out)
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
		evs := testkit.CrawlEvents(start, min(start+chunk, n), fmt.Sprint("backlog", n))
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
