package consumerbench_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/eventstest"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// BenchmarkProcessDrain is the process-level comparison: every contender drains the same
// 3-partition topic of BENCH_PROCESS_EVENTS (500,000) fresh events into a fresh database made by
// `booking-consumer migrate` (so each pays the same projection triggers), in BENCH_PROCESS_ROUNDS
// (5) interleaved rounds (the order rotates each round, so drift in the machine's load spreads
// over all of them). The contenders:
//
//	project  the booking-consumer binary, `run` with its defaults
//	expert   compose/dev/peers/expert: franz-go group consumer, autocommit off, PollRecords(5000),
//	         one transaction per poll (CopyFrom into a temp table ON COMMIT DELETE ROWS, INSERT ...
//	         SELECT ... ON CONFLICT (event_id) DO NOTHING), then CommitRecords
//	copy     the ceiling: pgx CopyFrom of the same rows, decoded before the clock starts, straight
//	         into booking_events in chunks of 5,000 rows (one transaction each), no Kafka
//	old      only with BENCH_OLD_CONSUMER set (a booking-consumer binary built from another commit),
//	         into a database made by today's migrate, or by its own with BENCH_OLD_SCHEMA=own: the
//	         bisect
//	variant  only with BENCH_VARIANT_ARGS or BENCH_VARIANT_ENV set: today's binary with those extra
//	         run flags (say, "--batch-size 5000") or environment variables (say, "GOGC=400"), to
//	         see what a setting buys beside the defaults
//	dup      in every round, right after project: the booking-consumer binary again, with a new
//	         group, into project's database: a replay of pure duplicates (no row changes, so it is
//	         timed by the group's committed offsets instead of rows); dup/fresh is its rate over
//	         project's in the same round
//
// Then BENCH_PROCESS_HOG_ROUNDS (as many as BENCH_PROCESS_ROUNDS) hog rounds: every contender but
// copy again, each with one core kept busy by a CPU hog the benchmark starts for the round (a
// shell's busy loop, in a process of its own) and stops after it: the lead must hold when the
// cores are not the consumer's alone. Every log line gives the machine's load average.
//
// Each is timed the same way, by a watcher on its own connection outside the contender: start
// (the process is started, or the first CopyFrom is called), first commit (the first row is
// visible) and done (N rows stored: booking_events_hourly's sum, which the triggers keep in the
// writing transaction, then count(*) = N once; read every 50 ms once the rate says the end is
// near), and the contender's CPU time until done (/proc/pid/stat; for copy, the benchmark
// process's own), and PostgreSQL's and the broker's over the same span when they run on this
// machine (stackCPU: with a core taken, what a drain costs everyone per event bounds its rate).
// drain is first commit → done; process is start → done; start-up is start → first commit. Every
// round's ratios are logged; the metrics are medians over the rounds.
//
// The topic is filled once and read by every run. Each run's database is a copy of a template
// made once per binary by its `migrate` (CREATE DATABASE ... TEMPLATE), dropped as soon as the
// run is timed and before the next run's CHECKPOINT (so no checkpoint writes a finished run's
// pages). BENCH_PROCESS_ROUNDS=0 runs only the hog rounds; BENCH_PROCESS_PERF=<dir> records each
// run with perf (startPerf).
//
// Targets (on a quiet machine, what the binary COPY must buy over the expert's insert): project/expert drain ≥ 1.3, project/copy drain ≥ 0.8;
// with the hog, project/expert drain ≥ 1.1; dup/fresh process ≥ 1.5.
func BenchmarkProcessDrain(b *testing.B) {
	n := testkit.EnvInt(b, "BENCH_PROCESS_EVENTS", 500_000)
	rounds := envCount(b, "BENCH_PROCESS_ROUNDS", 5)
	addr := kafkatest.Bootstrap(b)
	bin := buildConsumer(b)
	peer := buildPeer(b)
	old := os.Getenv("BENCH_OLD_CONSUMER")

	filling := time.Now()
	topic := kafkatest.Topic(b, addr, 3)
	const chunk = 50_000
	var rows [][]any // the COPY ceiling's rows, decoded once (their positions do not matter to it)
	for start := 0; start < n; start += chunk {
		msgs := kafkatest.Encode(b, eventstest.CrawlEvents(start, min(start+chunk, n), "process"))
		kafkatest.Produce(b, addr, topic, msgs)
		for i, m := range msgs {
			e, err := events.Decode(m.Value)
			if err != nil {
				b.Fatal(err)
			}
			rows = append(rows, storetest.Row(e, topic, (start+i)%3, int64(start+i), m.Value))
		}
	}
	b.Logf("topic %s filled with %d events (and the COPY's rows decoded) in %v", topic, n, time.Since(filling).Round(time.Millisecond))

	processEnv := func(env []string, bin string, args ...string) func(string) running {
		return func(dbURL string) running {
			// The broker comes from $KAFKA_BOOTSTRAP: the flag's name changed since the bisect's old commit.
			env := append([]string{"LOG_LEVEL=warn", "KAFKA_BOOTSTRAP=" + addr}, env...)
			p := testkit.Start(b, bin, env, append(args, "--database-url", dbURL)...)
			return running{
				check: func() { p.Alive(b, "before the topic was drained") },
				stop:  func() { p.Stop(b, 30*time.Second) },
				cpu:   func() time.Duration { return procCPU(b, p.Cmd.Process.Pid) },
			}
		}
	}
	process := func(bin string, args ...string) func(string) running { return processEnv(nil, bin, args...) }
	consumerArgs := func(group string) []string {
		return []string{"run", "--topic", topic, "--group", group, "--metrics-addr", "", "--no-migrate"}
	}
	contenders := []contender{
		{name: "project", bin: bin, start: func(u string) running { return process(bin, consumerArgs(kafkatest.Name(b, "project"))...)(u) }},
		{name: "expert", bin: bin, start: func(u string) running {
			return process(peer, "-topic", topic, "-group", kafkatest.Name(b, "expert"), "-poll", "5000")(u)
		}},
		{name: "copy", bin: bin, start: func(u string) running {
			errc := make(chan error, 1)
			cpu0 := selfCPU()
			go func() { errc <- copyChunks(b.Context(), u, rows, 5000) }()
			check := func() {
				select {
				case err := <-errc:
					if err != nil {
						b.Fatalf("copy: %v", err)
					}
					errc <- nil
				default:
				}
			}
			// the benchmark's own CPU: the copy, and the watcher's few queries
			return running{check: check, stop: func() {}, cpu: func() time.Duration { return selfCPU() - cpu0 }}
		}},
	}
	if v, env := strings.Fields(os.Getenv("BENCH_VARIANT_ARGS")), strings.Fields(os.Getenv("BENCH_VARIANT_ENV")); len(v)+len(env) > 0 {
		contenders = append(contenders, contender{name: "variant", bin: bin, start: func(u string) running {
			return processEnv(env, bin, append(consumerArgs(kafkatest.Name(b, "variant")), v...)...)(u)
		}})
	}
	if old != "" {
		// By default the old binary drains into today's schema (today's migrate: the same triggers
		// as everyone); BENCH_OLD_SCHEMA=own gives it a database made by its own migrate.
		schema := bin
		if os.Getenv("BENCH_OLD_SCHEMA") == "own" {
			schema = old
		}
		contenders = append(contenders, contender{name: "old", bin: schema, start: func(u string) running {
			return process(old, consumerArgs(kafkatest.Name(b, "old"))...)(u)
		}})
	}
	// The hog rounds: the process contenders again, with a busy loop in a process of its own
	// (`sh -c 'while :; do :; done'`) taking one core for the whole round.
	var hogged []contender
	for _, c := range contenders {
		if c.name != "copy" {
			hogged = append(hogged, c)
		}
	}
	hogRounds := envCount(b, "BENCH_PROCESS_HOG_ROUNDS", rounds)
	if rounds+hogRounds == 0 {
		b.Fatal("BENCH_PROCESS_ROUNDS and BENCH_PROCESS_HOG_ROUNDS are both 0: nothing to measure")
	}
	dbs := newDatabases(b)
	stack := findStack(b, storetest.URL(b), addr)
	// runRound runs each contender of order once, each into a fresh database, and returns their
	// timings. After project's, dup (when asked) replays the topic with a new group into project's
	// database: all duplicates, timed by the group's committed offsets (rows do not change).
	runRound := func(order []contender, dup bool) map[string]timing {
		got := map[string]timing{}
		for _, c := range order {
			checkpoint(b)
			dbURL, drop := dbs.fresh(c.bin)
			got[c.name] = watch(b, c.name, dbURL, n, stack, c.start, storedRows(n))
			if c.name == "project" && dup {
				group := kafkatest.Name(b, "dup")
				got["dup"] = watch(b, "dup", dbURL, n, stack, process(bin, consumerArgs(group)...), func(*pgx.Conn) func(context.Context) (int, error) {
					return committed(addr, group, topic)
				})
			}
			drop()
		}
		return got
	}
	rotate := func(cs []contender, round int) []contender {
		order := slices.Clone(cs)
		for range round % len(order) { // rotate: each contender runs first in some round
			order = append(order[1:], order[0])
		}
		return order
	}
	ratio := func(a, b time.Duration) float64 { return a.Seconds() / b.Seconds() }
	for b.Loop() {
		res, hog := map[string][]timing{}, map[string][]timing{}
		for round := range rounds {
			began := time.Now()
			got := runRound(rotate(contenders, round), true)
			for name, t := range got {
				res[name] = append(res[name], t)
			}
			line := fmt.Sprintf("round %d of %d events (load %s):", round+1, n, loadAverage())
			for _, name := range append(names(contenders), "dup") {
				t := got[name]
				line += fmt.Sprintf(" %s drain %v (%.0f/s) start-up %v cpu %s;", name, t.drain().Round(time.Millisecond),
					t.rate(n), t.startup().Round(time.Millisecond), t.cpuLine(n))
			}
			p, e, c, d := got["project"], got["expert"], got["copy"], got["dup"]
			line += fmt.Sprintf(" project/expert drain %.2f process %.2f; project/copy drain %.2f process %.2f; dup/fresh drain %.2f process %.2f",
				ratio(e.drain(), p.drain()), ratio(e.process(), p.process()),
				ratio(c.drain(), p.drain()), ratio(c.process(), p.process()),
				ratio(p.drain(), d.drain()), ratio(p.process(), d.process()))
			if v, ok := got["variant"]; ok {
				line += fmt.Sprintf("; variant/expert drain %.2f; variant/project drain %.2f",
					ratio(e.drain(), v.drain()), ratio(p.drain(), v.drain()))
			}
			if o, ok := got["old"]; ok {
				line += fmt.Sprintf("; old/expert drain %.2f; project/old drain %.2f",
					ratio(e.drain(), o.drain()), ratio(o.drain(), p.drain()))
			}
			b.Logf("%s (the round took %v)", line, time.Since(began).Round(time.Second))
		}
		for round := range hogRounds {
			began := time.Now()
			stopHog := startHog(b)
			got := runRound(rotate(hogged, round), false)
			stopHog()
			for name, t := range got {
				hog[name] = append(hog[name], t)
			}
			line := fmt.Sprintf("hog round %d of %d events, one core busy (load %s):", round+1, n, loadAverage())
			for _, name := range names(hogged) {
				t := got[name]
				line += fmt.Sprintf(" %s drain %v (%.0f/s) cpu %s;", name, t.drain().Round(time.Millisecond), t.rate(n), t.cpuLine(n))
			}
			p, e := got["project"], got["expert"]
			line += fmt.Sprintf(" project/expert drain %.2f process %.2f", ratio(e.drain(), p.drain()), ratio(e.process(), p.process()))
			if o, ok := got["old"]; ok {
				line += fmt.Sprintf("; old/expert drain %.2f; project/old drain %.2f", ratio(e.drain(), o.drain()), ratio(o.drain(), p.drain()))
			}
			if v, ok := got["variant"]; ok {
				line += fmt.Sprintf("; variant/expert drain %.2f", ratio(e.drain(), v.drain()))
			}
			b.Logf("%s (the round took %v)", line, time.Since(began).Round(time.Second))
		}
		med := func(res map[string][]timing, name string, f func(timing) float64) float64 {
			var xs []float64
			for _, t := range res[name] {
				xs = append(xs, f(t))
			}
			return median(xs)
		}
		drainRate := func(t timing) float64 { return t.rate(n) }
		procRate := func(t timing) float64 { return float64(n) / t.process().Seconds() }
		startup := func(t timing) float64 { return t.startup().Seconds() * 1000 }
		perEvent := func(f func(timing, int) float64) func(timing) float64 {
			return func(t timing) float64 { return f(t, n) }
		}
		for _, name := range append(names(contenders), "dup") {
			if rounds == 0 {
				break
			}
			b.ReportMetric(med(res, name, perEvent(timing.pgPerEvent)), name+"_pg_cpu_us/event")
			b.ReportMetric(med(res, name, perEvent(timing.totalPerEvent)), name+"_total_cpu_us/event")
			b.ReportMetric(med(res, name, drainRate), name+"_drain_events/s")
			b.ReportMetric(med(res, name, procRate), name+"_process_events/s")
			b.ReportMetric(med(res, name, startup), name+"_startup_ms")
			b.ReportMetric(med(res, name, func(t timing) float64 { return t.cpuPerEvent(n) }), name+"_cpu_us/event")
		}
		if rounds > 0 {
			pd, ed, cd := med(res, "project", drainRate), med(res, "expert", drainRate), med(res, "copy", drainRate)
			pp, ep, cp := med(res, "project", procRate), med(res, "expert", procRate), med(res, "copy", procRate)
			b.ReportMetric(pd/ed, "project/expert_drain")
			b.ReportMetric(pp/ep, "project/expert_process")
			b.ReportMetric(pd/cd, "project/copy_drain")
			b.ReportMetric(pp/cp, "project/copy_process")
			b.ReportMetric(med(res, "dup", drainRate)/pd, "dup/fresh_drain")
			b.ReportMetric(med(res, "dup", procRate)/pp, "dup/fresh_process")
			if _, ok := res["variant"]; ok {
				vd := med(res, "variant", drainRate)
				b.ReportMetric(vd/ed, "variant/expert_drain")
				b.ReportMetric(vd/pd, "variant/project_drain")
			}
			if old != "" {
				od := med(res, "old", drainRate)
				b.ReportMetric(od/ed, "old/expert_drain")
				b.ReportMetric(pd/od, "project/old_drain")
			}
		}
		if hogRounds > 0 {
			hp, he := med(hog, "project", drainRate), med(hog, "expert", drainRate)
			b.ReportMetric(hp/he, "hog_project/expert_drain")
			b.ReportMetric(med(hog, "project", procRate)/med(hog, "expert", procRate), "hog_project/expert_process")
			b.ReportMetric(med(hog, "project", func(t timing) float64 { return t.cpuPerEvent(n) }), "hog_project_cpu_us/event")
			b.ReportMetric(med(hog, "expert", func(t timing) float64 { return t.cpuPerEvent(n) }), "hog_expert_cpu_us/event")
			for _, name := range []string{"project", "expert"} {
				b.ReportMetric(med(hog, name, perEvent(timing.pgPerEvent)), "hog_"+name+"_pg_cpu_us/event")
				b.ReportMetric(med(hog, name, perEvent(timing.totalPerEvent)), "hog_"+name+"_total_cpu_us/event")
			}
			if _, ok := hog["variant"]; ok {
				b.ReportMetric(med(hog, "variant", drainRate)/he, "hog_variant/expert_drain")
				b.ReportMetric(med(hog, "variant", drainRate)/hp, "hog_variant/project_drain")
				b.ReportMetric(med(hog, "variant", perEvent(timing.totalPerEvent)), "hog_variant_total_cpu_us/event")
			}
			if old != "" {
				b.ReportMetric(hp/med(hog, "old", drainRate), "hog_project/old_drain")
			}
		}
		b.ReportMetric(float64(n), "events")
		b.ReportMetric(float64(rounds), "rounds")
		b.ReportMetric(float64(hogRounds), "hog_rounds")
	}
}

// envCount is the non-negative integer in environment variable key, or def when it is unset (0
// rounds of one kind: measure only the other, say the hog rounds while looking into them).
func envCount(b *testing.B, key string, def int) int {
	b.Helper()
	s := os.Getenv(key)
	if s == "" {
		return def
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		b.Fatalf("%s=%q: want a non-negative integer", key, s)
	}
	return v
}

// contender is one consumer BenchmarkProcessDrain times.
type contender struct {
	name string
	bin  string // whose migrate makes its database
	// start starts it on the database at dbURL; the watcher times it.
	start func(dbURL string) running
}

// names are the contenders' names, in their order.
func names(cs []contender) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.name
	}
	return out
}

// startHog keeps one core busy (a shell's busy loop, a process of its own, so that no contender's
// CPU time includes it) until the returned stop is called.
func startHog(b *testing.B) (stop func()) {
	b.Helper()
	cmd := exec.Command("sh", "-c", "while :; do :; done")
	if err := cmd.Start(); err != nil {
		b.Fatalf("cpu hog: %v", err)
	}
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}
	b.Cleanup(stop)
	return stop
}

// loadAverage is the machine's 1, 5 and 15 minute load averages (/proc/loadavg), for the log.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// copyChunks is the COPY ceiling: CopyFrom of rows into booking_events, size rows per call, each
// its own transaction, one after the other on one connection.
func copyChunks(ctx context.Context, dbURL string, rows [][]any, size int) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	for i := 0; i < len(rows); i += size {
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"booking_events"}, storetest.Columns,
			pgx.CopyFromRows(rows[i:min(i+size, len(rows))])); err != nil {
			return err
		}
	}
	return nil
}

// buildPeer builds the expert-shaped peer (compose/dev/peers, its own module) into a temporary
// directory.
func buildPeer(b testing.TB) string {
	b.Helper()
	return goBuild(b, "compose/dev/peers", "./expert", "expert")
}
