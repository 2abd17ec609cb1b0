package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// onceRun is `crawler once --watches` on one state dir against a teePage.
type onceRun struct {
	sites, watches, state string
	env                   map[string]string
}

func newOnceRun(t *testing.T, site, hook string, watches string) *onceRun {
	return &onceRun{sites: teeSitesFile(t, site), state: filepath.Join(t.TempDir(), "state"),
		watches: watchesFile(t, map[string]string{"hook": hook}, watches),
		env:     map[string]string{"KAFKA_BOOTSTRAP": "", "LOG_FORMAT": "text"}}
}

// once runs `crawler once` with extra args; it returns its stdout and stderr, and its error.
func (o *onceRun) once(t *testing.T, extra ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	args := append([]string{"once", "--sites", o.sites, "--watches", o.watches, "--state-dir", o.state}, extra...)
	err := run(t.Context(), args, env(o.env), &out, &errOut)
	return out.String() + errOut.String(), err
}

// cmd runs another subcommand on the state dir and returns its output.
func (o *onceRun) cmd(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run(t.Context(), append(args, "--state-dir", o.state), env(o.env), &out, &errOut); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, errOut.String())
	}
	return out.String() + errOut.String()
}

const cheapAndAll = "  - name: cheap\n    max_price_krw: 150000\n    channels: [hook]\n  - name: all\n    channels: [hook]\n"

// TestPriceDropIntoWatchFiresOnce: a tee time opens at 160,000원 (the "all" watch fires, "cheap"
// not), drops to 140,000원 (into "cheap": it fires once, as listing_changed), then to 130,000원
// (still inside: nothing), then nothing changes: "cheap" got one alert, "all" one.
func TestPriceDropIntoWatchFiresOnce(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	price := int64(160000)
	site := teePage(t, func() []teeRow { mu.Lock(); defer mu.Unlock(); return []teeRow{{"12/20", "07:00", price}} })
	rc := newReceiver(t, nil)
	o := newOnceRun(t, site.URL, rc.srv.URL, cheapAndAll)
	for _, p := range []int64{160000, 140000, 130000, 130000} {
		mu.Lock()
		price = p
		mu.Unlock()
		if out, err := o.once(t); err != nil {
			t.Fatalf("once at %d: %v\n%s", p, err, out)
		}
	}
	perWatch := map[string]int{}
	for m, n := range rc.delivered() {
		w, _, _ := strings.Cut(m, " ")
		perWatch[w] += n
	}
	if perWatch["cheap"] != 1 || perWatch["all"] != 1 || len(perWatch) != 2 {
		t.Errorf("alerts per watch %v, want cheap 1 (the drop) and all 1 (the opening)", perWatch)
	}
	list := o.cmd(t, "notifications", "--watch", "cheap")
	if !strings.Contains(list, "listing_changed") || strings.Count(list, "sent") != 1 || !strings.Contains(list, "OUT") ||
		!strings.Contains(list, "140,000") || !strings.Contains(list, "160,000") { // part, price, old price
		t.Errorf("crawler notifications --watch cheap:\n%s", list)
	}
}

// TestOnceAlertsWhateverKafka: `crawler once --watches` with KAFKA_BOOTSTRAP unset, refused and
// black-holed sends the same alerts, exits 0 each time and leaves nothing claimed.
func TestOnceAlertsWhateverKafka(t *testing.T) {
	t.Parallel()
	site := teePage(t, func() []teeRow {
		return []teeRow{{"12/20", "07:00", 120000}, {"12/20", "07:10", 200000}, {"12/21", "06:30", 140000}}
	})
	got := map[string][]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, broker := range map[string]string{"unset": "", "refused": "127.0.0.1:1", "blackholed": testkit.BlackHole(t)} {
		wg.Go(func() {
			rc := newReceiver(t, nil)
			o := newOnceRun(t, site.URL, rc.srv.URL, cheapAndAll)
			o.env["KAFKA_BOOTSTRAP"] = broker
			if out, err := o.once(t); err != nil {
				t.Errorf("%s: once: %v\n%s", name, err, tail(out))
			} else if strings.Contains(out, "left claimed") {
				t.Errorf("%s: alerts left claimed:\n%s", name, tail(out))
			}
			mu.Lock()
			got[name] = slices.Sorted(maps.Keys(matchesOf(rc)))
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(got["unset"]) != 5 || !slices.Equal(got["unset"], got["refused"]) || !slices.Equal(got["unset"], got["blackholed"]) {
		t.Errorf("alerts differ (want 5: 3 openings for all, 2 for cheap):\nunset %v\nrefused %v\nblackholed %v",
			got["unset"], got["refused"], got["blackholed"])
	}
}

// matchesOf is what rc accepted, as "watch course date time price" (event ids differ between
// state dirs: each has its own epoch).
func matchesOf(rc *receiver) map[string]bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]bool{}
	for _, b := range rc.all {
		var body struct {
			Watch   string `json:"watch"`
			Matches []struct {
				PlayDate, TeeTime string
				PriceKRW          int64 `json:"price_krw"`
			} `json:"matches"`
		}
		if json.Unmarshal([]byte(b), &body) == nil {
			for _, m := range body.Matches {
				out[fmt.Sprintf("%s %s %s %d", body.Watch, m.PlayDate, m.TeeTime, m.PriceKRW)] = true
			}
		}
	}
	return out
}

// TestOnceLeavesUnsentForTheNextRun: the receiver takes the first `crawler once`'s request and
// never answers; once waits --alert-wait, says how many alerts it leaves claimed, and still exits
// 0 (the crawl was complete). The second run (nothing new on the site) sends them at start-up,
// the one that was in flight under the same Idempotency-Key.
func TestOnceLeavesUnsentForTheNextRun(t *testing.T) {
	t.Parallel()
	site := teePage(t, func() []teeRow { return []teeRow{{"12/20", "07:00", 120000}, {"12/20", "07:10", 130000}} })
	var mu sync.Mutex
	down := true
	hung := map[string]bool{}
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		d := down
		if d {
			hung[r.Header.Get("Idempotency-Key")] = true
		}
		mu.Unlock()
		if d {
			<-r.Context().Done() // the crawler gives up on it when once exits
		}
		return d
	})
	o := newOnceRun(t, site.URL, rc.srv.URL, cheapAndAll)
	out, err := o.once(t, "--alert-wait", "300ms")
	if err != nil {
		t.Fatalf("first once: %v (the exit status must reflect only the crawl)\n%s", err, tail(out))
	}
	// 2 openings, both under the cap: 4 claims (cheap and all) in 2 messages.
	if !strings.Contains(out, `msg="alerts left claimed for the next run" unsent=4`) {
		t.Errorf("first once does not say it left 4 alerts claimed:\n%s", tail(out))
	}
	if list := o.cmd(t, "notifications", "--status", "sending"); strings.Count(list, "sending") != 4 {
		t.Errorf("after the first once, want 4 claims sending:\n%s", list)
	}
	mu.Lock()
	down = false
	inFlight := maps.Clone(hung)
	mu.Unlock()
	if out, err := o.once(t); err != nil || strings.Contains(out, "left claimed") {
		t.Fatalf("second once: %v\n%s", err, tail(out))
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.keys) != 2 || len(inFlight) != 1 {
		t.Fatalf("keys accepted %v, in flight at the first exit %v: want the 2 messages (cheap, all), 1 in flight", rc.keys, inFlight)
	}
	for k := range inFlight {
		if rc.keys[k] != 1 {
			t.Errorf("the message in flight at the first exit (key %s) was not sent again under its key: %v", k, rc.keys)
		}
	}
}

// TestAlertTokenNeverInOutput: a Telegram channel's token and a Slack channel's URL (both from
// the environment) never appear in what `crawler once --watches`, `crawler notifications` (table
// and JSON) or `crawler check --watches` print, with debug logs, while the receivers fail with
// answers that echo the request's URL.
func TestAlertTokenNeverInOutput(t *testing.T) {
	t.Parallel()
	const token = "123456:sEcReTtOkEn"
	echo := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) bool {
		status := http.StatusBadRequest
		if n%2 == 0 {
			status = http.StatusInternalServerError
		}
		http.Error(w, "bad request to "+r.URL.String(), status)
		return true
	})
	site := teePage(t, func() []teeRow { return []teeRow{{"12/20", "07:00", 120000}} })
	watches := testkit.WriteTemp(t, "watches.yaml", "channels:\n"+
		"  tg: {type: telegram, token_env: TG_TOKEN, chat_id: \"42\", base_url: \""+echo.srv.URL+"\", min_interval: 1ms}\n"+
		"  team: {type: slack, url_env: SLACK_URL, base_url: \""+echo.srv.URL+"\"}\n"+
		"watches:\n  - name: all\n    channels: [tg, team]\n")
	o := &onceRun{sites: teeSitesFile(t, site.URL), watches: watches, state: filepath.Join(t.TempDir(), "state"),
		env: map[string]string{"KAFKA_BOOTSTRAP": "", "LOG_LEVEL": "debug", "TG_TOKEN": token,
			"SLACK_URL": "https://hooks.slack.com/services/T0/B0/sEcReTsLaCk"}}
	out, err := o.once(t, "--alert-wait", "2s", "--alert-retry-backoff", "1ms", "--alert-max-attempts", "2")
	if err != nil {
		t.Fatalf("once: %v\n%s", err, tail(out))
	}
	all := out + o.cmd(t, "notifications") + o.cmd(t, "notifications", "--json")
	var b bytes.Buffer
	_ = run(t.Context(), []string{"check", "--watches", watches}, env(o.env), &b, &b)
	all += b.String()
	if requests, _ := echo.count(); requests < 2 {
		t.Fatalf("the channels were not tried (%d requests):\n%s", requests, tail(all))
	}
	if strings.Contains(all, "sEcReT") {
		t.Errorf("a secret in the output:\n%s", all)
	}
	if !strings.Contains(all, "failed") {
		t.Errorf("no failed alert listed:\n%s", tail(all))
	}
}

// TestCorruptAlertsDatabaseFailsStartUp: an alerts.db that is not a database (truncated, a bad
// header) stops `crawler once --watches` before it crawls, with a message naming the file; the
// file is left as it was (no fresh start that would alert everything again).
func TestCorruptAlertsDatabaseFailsStartUp(t *testing.T) {
	t.Parallel()
	site := teePage(t, func() []teeRow { return []teeRow{{"12/20", "07:00", 120000}} })
	rc := newReceiver(t, nil)
	o := newOnceRun(t, site.URL, rc.srv.URL, cheapAndAll)
	if out, err := o.once(t); err != nil {
		t.Fatalf("first once: %v\n%s", err, tail(out))
	}
	db := filepath.Join(o.state, alertsFile)
	garbage := []byte("SQLite format 3\x00 but then nothing a database holds")
	if err := os.WriteFile(db, garbage, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := o.once(t)
	if err == nil || !strings.Contains(err.Error(), db) {
		t.Fatalf("once on a corrupt %s: %v, want an error naming the file\n%s", db, err, tail(out))
	}
	if strings.Contains(out, `msg="site crawled"`) {
		t.Errorf("crawled despite the corrupt alerts database:\n%s", tail(out))
	}
	if b, _ := os.ReadFile(db); !bytes.Equal(b, garbage) {
		t.Errorf("the corrupt file was replaced")
	}
	if _, requests := rc.count(); requests != 2 {
		t.Errorf("%d messages accepted, want the first run's 2", requests)
	}
}
