//go:build chaos

package chaos_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// TestReadOnlyStateDir: the state dir turns read-only (a bind remount) for three crawls, while a
// price changes and a listing disappears, then writable again. The crawls that cannot save their
// snapshot publish nothing; the good ones derive each transition once, under one id: PostgreSQL
// holds exactly the real transitions (3 opens, 1 change, 1 close), no extra event ids. Once
// each failed save re-sent the change under a new id (4 ids for 1 change were counted).
func TestReadOnlyStateDir(t *testing.T) {
	stack(t)
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	db := storetest.NewDB(t)
	cons := startConsumer(t, addr, topic, kafkatest.Name(t, "rostate"), db, slog.New(slog.DiscardHandler))

	tees := &roStatePage{}
	tees.price.Store(150000)
	tees.rows.Store(3)
	st := tees.site(t)
	dir := t.TempDir()
	mount := &roMount{dir: dir}
	t.Cleanup(func() { mount.unmount(t) }) // before TempDir's removal (cleanups run last in, first out)

	logs := &testkit.SyncBuffer{}
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, site.Seoul())
	runner := &crawler.Runner{Sites: []*site.Site{st}, State: crawler.StateDir{Dir: dir},
		Logger: slog.New(slog.NewTextHandler(logs, nil)), Now: func() time.Time { return now }}
	rec := newRecorder(t, runner) // outside the state dir, which turns read-only
	pub := kafkatest.SpoolRunner(t, runner, kafkabus.PublisherConfig{Brokers: []string{addr}, Topic: topic, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	crawl := func(wantErr bool) {
		t.Helper()
		sum, _ := runner.Run(t.Context())
		if s := sum.Sites[0]; (s.Err != nil) != wantErr {
			t.Fatalf("crawl at %s: err %v, want an error: %v", now.Format("15:04"), s.Err, wantErr)
		}
		now = now.Add(10 * time.Minute)
	}

	crawl(false) // 3 opens
	mount.readOnly(t)
	tees.price.Store(130000) // a change
	tees.rows.Store(2)       // and the third row is gone
	for range 3 {
		crawl(true)
	}
	mount.unmount(t)
	crawl(false) // the change, and the first miss
	crawl(false) // the second miss: the close
	crawl(false) // nothing new

	if st := pub.CloseWithin(30 * time.Second); st.Queued != 0 || st.Failed != 0 {
		t.Fatalf("publisher close: %+v, want everything sent", st)
	}
	testkit.WaitFor(t, time.Minute, "5 events stored", func() bool { return count(t, db, "booking_events") >= 5 })
	time.Sleep(2 * time.Second) // anything extra would arrive with them
	cons.stop(t)
	checkROStateStored(t, db, rec, logs)
}

// roStatePage is the read-only scenario's tee list: rows tee times at 150,000, the first at price.
type roStatePage struct{ price, rows atomic.Int64 }

// site serves the page and returns its validated site.
func (p *roStatePage) site(t *testing.T) *site.Site {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		var b strings.Builder
		b.WriteString(`<html><body><table class="tee-list">`)
		for i := range int(p.rows.Load()) {
			price := int64(150000)
			if i == 0 {
				price = p.price.Load()
			}
			fmt.Fprintf(&b, `<tr class="tee-row"><td class="course">레이크 CC</td><td class="part">OUT</td><td class="date">12/05</td><td class="time">07:%02d</td><td class="price">%d</td><td class="players">4</td></tr>`, i*10, price)
		}
		b.WriteString(`</table></body></html>`)
		_, _ = io.WriteString(w, b.String())
	}))
	t.Cleanup(srv.Close)
	st, err := site.SiteSpec{Name: "rostate", StartURLs: []string{srv.URL + "/tee"}, Row: "table.tee-list tr.tee-row",
		Fields: site.Fields{"course": {Selector: "td.course"}, "course_part": {Selector: "td.part"},
			"round_date": {Selector: "td.date"}, "tee_time": {Selector: "td.time"},
			"price": {Selector: "td.price"}, "players": {Selector: "td.players"}},
		Politeness: site.Politeness{NoDelay: true, IgnoreRobotsTxt: true, NoRetry: true}}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// roMount turns dir read-only with a bind remount (root only) and back.
type roMount struct {
	dir     string
	mounted bool
}

func (m *roMount) readOnly(t *testing.T) {
	t.Helper()
	for _, args := range [][]string{{"--bind", m.dir, m.dir}, {"-o", "remount,ro,bind", m.dir}} {
		if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
			t.Fatalf("mount %v: %v\n%s (the scenario needs root for a bind remount)", args, err, out)
		}
		m.mounted = true
	}
	if err := os.WriteFile(filepath.Join(m.dir, "probe"), nil, 0o644); err == nil {
		t.Fatal("the state dir is still writable after the read-only remount")
	}
}

func (m *roMount) unmount(t *testing.T) {
	t.Helper()
	if m.mounted {
		if out, err := exec.Command("umount", m.dir).CombinedOutput(); err != nil {
			t.Fatalf("umount %s: %v\n%s", m.dir, err, out)
		}
		m.mounted = false
	}
}

// checkROStateStored: exactly the real transitions (3 opened, 1 changed, 1 closed) were published
// and stored, and the three crawls with a read-only state dir were logged as failed.
func checkROStateStored(t *testing.T, db *pgxpool.Pool, rec *recorder, logs *testkit.SyncBuffer) {
	t.Helper()
	byType := map[string]int{}
	var typ string
	var n int
	dbRows, _ := db.Query(t.Context(), "select event_type, count(*) from booking_events group by event_type") // an error is in dbRows
	if _, err := pgx.ForEachRow(dbRows, []any{&typ, &n}, func() error { byType[typ] = n; return nil }); err != nil {
		t.Fatal(err)
	}
	failedSaves := len(logs.Lines("site crawl failed"))
	t.Logf("3 crawls with a read-only state dir (%d failed saves logged), then 3 good ones: %d event ids handed to Kafka, stored by type %v",
		failedSaves, rec.count(t), byType)
	if rec.count(t) != 5 || byType["listing_opened"] != 3 || byType["listing_changed"] != 1 || byType["listing_closed"] != 1 {
		t.Errorf("want exactly the real transitions (3 opened, 1 changed, 1 closed): %d ids published, stored %v", rec.count(t), byType)
	}
	if failedSaves != 3 {
		t.Errorf("%d failed crawls logged, want 3", failedSaves)
	}
}

// TestTwoCrawlersOneStateDir: the real crawler binary runs on a 1 s schedule; a second one
// (`crawler once`, then `crawler run`) pointed at the same state dir exits at once with a clear
// message naming the dir and the first one's pid, without crawling; after the first one stops, a
// third crawls normally. PostgreSQL holds no duplicate transition: per listing, opens and closes
// alternate.
func TestTwoCrawlersOneStateDir(t *testing.T) {
	st := stack(t)
	bin := builtBinary(t, "crawler")
	addr := kafkatest.Bootstrap(t)
	topic := kafkatest.Topic(t, addr, 3)
	db := storetest.NewDB(t)
	cons := startConsumer(t, addr, topic, kafkatest.Name(t, "twocrawlers"), db, slog.New(slog.DiscardHandler))

	sim := sitesim.New(sitesim.Config{Seed: 11, TeeTimesPerDay: 6, DaysAhead: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	sites := twoCrawlersSitesFile(t, st.root, srv.URL)
	stateDir := t.TempDir()
	env := []string{"CRAWLER_SITES=" + sites, "CRAWLER_STATE_DIR=" + stateDir, "KAFKA_BOOTSTRAP=" + addr,
		"KAFKA_TOPIC=" + topic, "METRICS_ADDR=off", "LOG_FORMAT=text"}

	first := testkit.Start(t, bin, env, "run", "--schedule", "@every 1s")
	firstLog := first.Logs
	stopped := false
	stopFirst := func() {
		if !stopped {
			stopped = true
			first.Stop(t, time.Minute)
		}
	}
	t.Cleanup(stopFirst)
	testkit.WaitFor(t, time.Minute, "the first crawler's first crawls", func() bool { return len(firstLog.Lines("site crawled")) >= 2 })

	for _, args := range [][]string{{"once"}, {"run", "--schedule", "@every 1s"}} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		second := exec.CommandContext(ctx, bin, args...)
		second.Env = append(os.Environ(), env...)
		out, err := second.CombinedOutput()
		cancel()
		want := fmt.Sprintf("%s is in use by another crawler (pid %d)", stateDir, first.Cmd.Process.Pid)
		t.Logf("second crawler `%s`: %v; %s", strings.Join(args, " "), err, lastLine(out))
		if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() == 0 || !bytes.Contains(out, []byte(want)) {
			t.Errorf("second crawler `%s`: %v, want a non-zero exit saying %q:\n%s", strings.Join(args, " "), err, want, testkit.Tail(string(out), 2000))
		}
		if bytes.Contains(out, []byte("site crawled")) {
			t.Errorf("second crawler `%s` crawled", strings.Join(args, " "))
		}
	}
	runs := len(firstLog.Lines("site crawled"))
	stopFirst()

	third := exec.Command(bin, "once")
	third.Env = append(os.Environ(), env...)
	if out, err := third.CombinedOutput(); err != nil {
		t.Errorf("crawler once after the first one stopped: %v\n%s", err, testkit.Tail(string(out), 2000))
	}

	var handed int
	for _, l := range firstLog.Lines("kafka publisher closed") {
		var p, f, d int
		if _, err := fmt.Sscanf(l[strings.Index(l, "published="):], "published=%d failed=%d dropped=%d", &p, &f, &d); err == nil {
			handed += p
		}
	}
	testkit.WaitFor(t, time.Minute, "the first crawler's events stored", func() bool { return count(t, db, "booking_events") >= handed })
	time.Sleep(2 * time.Second)
	cons.stop(t)
	dups := duplicateTransitions(t, db)
	t.Logf("first crawler: %d crawls, %d events published; stored %d rows; duplicate transitions: %d",
		runs, handed, count(t, db, "booking_events"), len(dups))
	for _, d := range dups {
		t.Errorf("duplicate transition: %s", d)
	}
}

// duplicateTransitions replays each listing's stored events by occurred_at: an open while open or
// a close while closed is a duplicate transition.
func duplicateTransitions(t *testing.T, db *pgxpool.Pool) []string {
	rows, err := db.Query(t.Context(), "select listing_key, event_type from booking_events order by listing_key, occurred_at, event_type")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	open := map[string]bool{}
	var dups []string
	for rows.Next() {
		var key, typ string
		if err := rows.Scan(&key, &typ); err != nil {
			t.Fatal(err)
		}
		switch typ {
		case "listing_opened":
			if open[key] {
				dups = append(dups, "opened twice: "+key)
			}
			open[key] = true
		case "listing_closed":
			if !open[key] {
				dups = append(dups, "closed while closed: "+key)
			}
			open[key] = false
		}
	}
	return dups
}

// twoCrawlersSitesFile is the HTML site of compose/dev/sites.yaml pointed at base, one day ahead, without delays.
func twoCrawlersSitesFile(t *testing.T, root, base string) string {
	b, err := os.ReadFile(filepath.Join(root, "compose", "dev", "sites.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	s, _, _ := strings.Cut(string(b), "\n\n  - name: sim-api-get") // the HTML site only: the test serves /tee
	s = strings.Replace(s, "http://"+sitesim.DefaultAddr, base, 1)
	s = strings.Replace(s, "days_ahead: 14", "days_ahead: 1", 1)
	s = strings.Replace(s, `allowed_domains: ["127.0.0.1"]`, "", 1)
	s = strings.Replace(s, "      delay: 100ms\n      random_delay: 50ms\n", "      no_delay: true\n", 1)
	if !strings.Contains(s, base) {
		t.Fatalf("compose/dev/sites.yaml changed shape:\n%s", s)
	}
	path := filepath.Join(t.TempDir(), "sites.yaml")
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}
