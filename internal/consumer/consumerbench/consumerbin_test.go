package consumerbench_test

import (
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

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
