//go:build chaos

package chaos_test

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// stopRounds is how many times TestSIGTERMDuringAlertSend stops the crawler mid-send.
const stopRounds = 5

// TestSIGTERMDuringAlertSend: `crawler run --watches` (no Kafka) is stopped with SIGTERM while
// its messages (a webhook's and a Slack channel's) are at the receiver, which answers 200 only
// once the crawler logs that it is stopping, in each of stopRounds rounds (one new tee time opens
// per round, and the next round starts a new crawler). Every stop exits 0, no request is
// abandoned, every match arrives once on each channel, no Idempotency-Key twice, and no claim is
// left sending.
func TestSIGTERMDuringAlertSend(t *testing.T) {
	bin := builtBinary(t, "crawler")
	var phase atomic.Int64
	site := teeTimesSite(t, func() []teeTimeRow {
		var rows []teeTimeRow
		for i := range int(phase.Load()) {
			rows = append(rows, teeTimeRow{course: "스톱 CC", tee: fmt.Sprintf("06:%02d", i), price: 120000})
		}
		return rows
	})
	rc := newHoldingReceiver(t)
	dir := t.TempDir()
	sites, watches := filepath.Join(dir, "sites.yaml"), filepath.Join(dir, "watches.yaml")
	writeChaosFile(t, sites, "sites:\n"+sitesim.TeeListSite("stopclub", site.URL+"/tee"))
	writeChaosFile(t, watches, fmt.Sprintf(`channels:
  hook: {type: webhook, url: "%[1]s/alerts", timeout: 30s}
  team: {type: slack, url_env: SLACK_URL, base_url: "%[1]s", timeout: 30s}
watches:
  - name: all
    channels: [hook, team]
`, rc.srv.URL))
	state := filepath.Join(dir, "state")
	env := []string{"KAFKA_BOOTSTRAP=", "LOG_FORMAT=text", "LOG_LEVEL=info", "METRICS_ADDR=off",
		"SLACK_URL=https://hooks.slack.com/services/T0/B0/chaos"}
	for k := 1; k <= stopRounds; k++ {
		phase.Store(int64(k))
		release := rc.hold()
		abandoned := rc.abandoned.Load()
		p := testkit.Start(t, bin, env, "run", "--sites", sites, "--watches", watches, "--state-dir", state,
			"--schedule", "@every 1s", "--shutdown-timeout", "30s")
		testkit.Recv(t, rc.arrivals, time.Minute, fmt.Sprintf("round %d: a message at the receiver", k))
		if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		testkit.WaitFor(t, time.Minute, fmt.Sprintf("round %d: the crawler stopping, or a request abandoned", k), func() bool {
			return strings.Contains(p.Logs.String(), `msg="alerts: stopping`) || rc.abandoned.Load() > abandoned
		})
		close(release)
		if err := p.Wait(t, time.Minute); err != nil {
			t.Errorf("round %d: exit after SIGTERM: %v\n%s", k, err, testkit.Tail(p.Logs.String(), 3000))
		}
	}
	// A last run sends whatever a stop left claimed (a message not yet sent when it came).
	release := rc.hold()
	close(release)
	p := testkit.Start(t, bin, env, "run", "--sites", sites, "--watches", watches, "--state-dir", state, "--schedule", "@every 1s")
	testkit.WaitForf(t, time.Minute, func() string {
		return fmt.Sprintf("every match on both channels; got %v\n%s", rc.snapshot(), testkit.Tail(p.Logs.String(), 3000))
	}, func() bool {
		// The deliveries may all have arrived during the stop rounds: wait for this crawler's own
		// first crawl too, so the SIGTERM below reaches a process that has installed its handler
		// (one signalled before that dies of the signal, which is not what this test is about).
		return len(rc.snapshot()) == 2*stopRounds && strings.Contains(p.Logs.String(), `msg="crawl finished"`)
	})
	testkit.WaitFor(t, time.Minute, "no claim left sending", noClaimSending(bin, state))
	p.Stop(t, time.Minute)
	if n := rc.abandoned.Load(); n > 0 {
		t.Errorf("%d requests abandoned by a stopping crawler", n)
	}
	got := rc.snapshot()
	for m, n := range got {
		if n != 1 {
			t.Errorf("%s delivered %d times, want once", m, n)
		}
	}
	for k, n := range rc.keyCounts() {
		if n != 1 {
			t.Errorf("Idempotency-Key %s accepted %d times", k, n)
		}
	}
	t.Logf("%d stops during a send: %d matches x 2 channels = %d distinct deliveries; %d requests abandoned", stopRounds, stopRounds, len(got),
		rc.abandoned.Load())
}

// TestFullStateDirDuringClaim: the crawler's state dir is on a small tmpfs the test mounts (root).
// `crawler run --watches` (cmd/crawler's test binary run as the crawler, with a fault seam:
// cmd/crawler/fillchild_test.go) crawls two sites; one grows from 50 to 400 tee times with long
// names, and the crawler fills the disk itself right after that crawl's batch is in the spool (the
// commit rule's first step), so the claim of the 350 new ones, the next step, fails as "disk full"
// naming alerts.db (never "corrupt"), whatever the sizes of the batch and the claim. The site's
// next crawl meets the full disk at the spool's append (naming the spool; the next crawl derives
// the 350 events again); the crawler stays up and goes on crawling the other site. After a stop
// and freeing the space, a new crawler (the binary) starts on the same alerts.db (SQLite judges
// it, with its WAL), claims the 350 again (the failed crawl saved no snapshot) and delivers every
// match once.
func TestFullStateDirDuringClaim(t *testing.T) {
	bin, child := builtBinary(t, "crawler"), builtBinary(t, "crawler.test")
	var big atomic.Int64
	big.Store(50)
	const longName = "[스카이72_골프앤리조트] 하늘코스_오션코스 *주중특가* (그린피_할인_이벤트_진행중) 회원_비회원_모두_예약가능 [선착순]"
	bigSite := teeTimesSite(t, func() []teeTimeRow {
		var rows []teeTimeRow
		for i := range int(big.Load()) {
			rows = append(rows, teeTimeRow{course: longName, tee: fmt.Sprintf("%02d:%02d", 5+i/60, i%60), price: 130000})
		}
		return rows
	})
	smallSite := teeTimesSite(t, func() []teeTimeRow {
		return []teeTimeRow{{"작은 CC", "07:00", 90000}, {"작은 CC", "07:10", 90000}, {"작은 CC", "07:20", 90000}}
	})
	rc := newHoldingReceiver(t)
	close(rc.hold())
	dir := t.TempDir()
	disk := filepath.Join(dir, "disk")
	if err := os.Mkdir(disk, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", disk).CombinedOutput(); err != nil {
		t.Fatalf("mount a tmpfs: %v\n%s (the scenario needs root)", err, out)
	}
	t.Cleanup(func() {
		// Lazy: a crawler the test's end killed may not have let go of its files yet.
		if out, err := exec.Command("umount", "-l", disk).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", disk, err, out)
		}
	})
	sites, watches := filepath.Join(dir, "sites.yaml"), filepath.Join(dir, "watches.yaml")
	writeChaosFile(t, sites, "sites:\n"+sitesim.TeeListSite("bigclub", bigSite.URL+"/tee")+sitesim.TeeListSite("smallclub", smallSite.URL+"/tee"))
	writeChaosFile(t, watches, fmt.Sprintf("channels:\n  hook: {type: webhook, url: \"%s/alerts\"}\nwatches:\n  - name: all\n    channels: [hook]\n", rc.srv.URL))
	state := filepath.Join(disk, "state")
	env := []string{"KAFKA_BOOTSTRAP=", "LOG_FORMAT=text", "LOG_LEVEL=info", "METRICS_ADDR=off"}
	args := []string{"run", "--sites", sites, "--watches", watches, "--state-dir", state, "--schedule", "@every 1s"}
	// The child fills the disk with filler at the first spool append once arm exists (the names
	// of cmd/crawler/fillchild_test.go's fillChildEnv and fillArmEnv).
	filler, arm := filepath.Join(disk, "filler"), filepath.Join(dir, "fill.arm")
	p := testkit.Start(t, child, append([]string{"GOLF_TEST_FILL_CHILD=" + filler, "GOLF_TEST_FILL_ARM=" + arm}, env...), args...)
	testkit.WaitFor(t, time.Minute, "the first 53 matches delivered", func() bool { return len(rc.snapshot()) == 53 })

	// The claim that follows the fill appends to alerts.db's WAL: the first 53 claims and their
	// sends leave it at about 130 pages (a crawl without events writes none), far below SQLite's
	// checkpoint at 1000, so the WAL has not restarted and has no room of its own to reuse.
	writeChaosFile(t, arm, "")
	big.Store(400)
	// bigclub's failures on the full disk, in order: the claim, then the next crawls' appends.
	bigFull := func() []string {
		var lines []string
		for _, l := range strings.Split(p.Logs.String(), "\n") {
			if strings.Contains(l, "disk full") && strings.Contains(l, "site=bigclub") {
				lines = append(lines, l)
			}
		}
		return lines
	}
	testkit.WaitForf(t, time.Minute, func() string {
		return "bigclub failing on the full disk at its claim, then at its next append\n" + testkit.Tail(p.Logs.String(), 3000)
	}, func() bool {
		p.Alive(t, "on the full disk")
		return len(bigFull()) >= 2
	})
	logs, lines := p.Logs.String(), bigFull()
	claimLine, appendLine := lines[0], lines[1]
	if fill := strings.Index(logs, "fill child: disk full after a spool append"); fill < 0 || fill > strings.Index(logs, claimLine) {
		t.Errorf("the crawler did not fill the disk at the spool append before bigclub's first disk-full line (the scenario tested less than it says)")
	}
	if !strings.Contains(claimLine, "claim alerts: ") || !strings.Contains(claimLine, filepath.Join(state, "alerts.db")) {
		t.Errorf("the disk-full line of the claim does not name the claim and alerts.db: %s", claimLine)
	}
	if !strings.Contains(appendLine, "disk full: spool append in "+filepath.Join(state, "spool")) ||
		!strings.Contains(appendLine, "the next crawl derives the crawl's 350 events again") {
		t.Errorf("the disk-full line of the next crawl does not name the spool and say the 350 events are derived again: %s", appendLine)
	}
	smallCrawls := strings.Count(logs, `msg="crawl finished" site=smallclub`)
	testkit.WaitFor(t, time.Minute, "smallclub crawled again after the full disk", func() bool {
		p.Alive(t, "on the full disk")
		return strings.Count(p.Logs.String(), `msg="crawl finished" site=smallclub`) > smallCrawls
	})
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	_ = p.Wait(t, time.Minute) // closing on a full disk may fail: the exit status is not the point
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}

	p2 := testkit.Start(t, bin, env, args...)
	testkit.WaitForf(t, 2*time.Minute, func() string {
		return fmt.Sprintf("%d of 403 matches delivered after the space came back\n%s", len(rc.snapshot()), testkit.Tail(p2.Logs.String(), 3000))
	}, func() bool {
		p2.Alive(t, "after the space came back")
		return len(rc.snapshot()) == 403
	})
	testkit.WaitFor(t, time.Minute, "no claim left sending", noClaimSending(bin, state))
	p2.Stop(t, time.Minute)
	all := p.Logs.String() + p2.Logs.String()
	for _, bad := range []string{"corrupt", "not a usable alerts database"} {
		if strings.Contains(all, bad) {
			t.Errorf("the logs call alerts.db %q", bad)
		}
	}
	for m, n := range rc.snapshot() {
		if n != 1 {
			t.Errorf("%s delivered %d times, want once", m, n)
		}
	}
	errOf := func(line string) string {
		if i := strings.Index(line, "err="); i >= 0 {
			return strings.TrimSpace(line[i:])
		}
		return line
	}
	t.Logf("full state dir after the spool append: the claim failed with %s; the next crawl's append with %s; "+
		"after freeing the space 403 of 403 matches (350 of them re-derived) delivered once", errOf(claimLine), errOf(appendLine))
}

// noClaimSending is a condition: `crawler notifications` of state lists no claim sending.
func noClaimSending(bin, state string) func() bool {
	return noClaimWith(bin, state, "sending")
}

// claimsWith is how many claims of status `crawler notifications` of state lists.
func claimsWith(t *testing.T, bin, state, status string) int {
	t.Helper()
	out, err := exec.Command(bin, "notifications", "--state-dir", state, "--status", status, "--json").Output()
	if err != nil {
		t.Fatalf("crawler notifications --status %s: %v", status, err)
	}
	return strings.Count(string(out), "\n")
}

// noClaimWith is a condition: `crawler notifications` of state lists no claim of status.
func noClaimWith(bin, state, status string) func() bool {
	return func() bool {
		out, err := exec.Command(bin, "notifications", "--state-dir", state, "--status", status, "--json").Output()
		return err == nil && len(out) == 0
	}
}

// teeTimeRow is one row of teeTimesSite.
type teeTimeRow struct {
	course, tee string
	price       int64
}

// teeTimesSite serves rows() on 12/20 as the tee-list shape of sitesim.TeeListSite.
func teeTimesSite(t *testing.T, rows func() []teeTimeRow) *httptest.Server {
	return teeTimesSiteFor(t, func(*http.Request) []teeTimeRow { return rows() })
}

// teeTimesSiteFor is teeTimesSite with the rows of each request.
func teeTimesSiteFor(t *testing.T, rows func(*http.Request) []teeTimeRow) *httptest.Server {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var b strings.Builder
		b.WriteString(`<html><body><table class="tee-list">`)
		for _, r := range rows(req) {
			fmt.Fprintf(&b, `<tr class="tee-row"><td class="course">%s</td><td class="part">OUT</td><td class="date">12/20</td>`+
				`<td class="time">%s</td><td class="price">%d</td><td class="players">4</td></tr>`, r.course, r.tee, r.price)
		}
		b.WriteString(`</table></body></html>`)
		_, _ = io.WriteString(w, b.String())
	}))
	t.Cleanup(site.Close)
	return site
}

// holdingReceiver is a webhook and Slack receiver that holds each request until the current
// hold is released, then answers 200 and counts the delivery per channel and match (a Slack
// message by its tee times) and per Idempotency-Key. A request whose client went away first is
// counted abandoned, and delivered too: a chat channel posts what it received, whether or not
// its answer reaches the sender.
type holdingReceiver struct {
	srv       *httptest.Server
	arrivals  chan struct{} // buffer of one, never blocks
	abandoned atomic.Int64
	mu        sync.Mutex
	release   chan struct{}
	matches   map[string]int
	keys      map[string]int
}

func newHoldingReceiver(t *testing.T) *holdingReceiver {
	rc := &holdingReceiver{arrivals: make(chan struct{}, 1), matches: map[string]int{}, keys: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		release := rc.release
		rc.mu.Unlock()
		select {
		case rc.arrivals <- struct{}{}:
		default:
		}
		answer := true
		select {
		case <-release:
		case <-r.Context().Done():
			rc.abandoned.Add(1)
			answer = false
		}
		var body struct {
			Text    string `json:"text"`
			Matches []struct {
				CourseName string `json:"course_name"`
				TeeTime    string `json:"tee_time"`
			} `json:"matches"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("receiver: %v", err)
		}
		rc.mu.Lock()
		rc.keys[r.URL.Path+" "+r.Header.Get("Idempotency-Key")]++
		if r.URL.Path == "/alerts" {
			for _, m := range body.Matches {
				rc.matches["hook "+m.CourseName+" "+m.TeeTime]++
			}
		} else {
			for _, line := range strings.Split(body.Text, "\n")[1:] {
				course, _, _ := strings.Cut(strings.TrimPrefix(line, "• "), " (OUT)")
				for _, f := range strings.Fields(line) {
					if len(f) == 5 && f[2] == ':' {
						rc.matches["team "+course+" "+f]++
					}
				}
			}
		}
		rc.mu.Unlock()
		if answer {
			w.WriteHeader(http.StatusOK)
		}
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// hold makes the requests from now on wait until the returned channel is closed.
func (rc *holdingReceiver) hold() chan struct{} {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.release = make(chan struct{})
	select {
	case <-rc.arrivals: // an arrival of the round before
	default:
	}
	return rc.release
}

func (rc *holdingReceiver) snapshot() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return maps.Clone(rc.matches)
}

func (rc *holdingReceiver) keyCounts() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return maps.Clone(rc.keys)
}
