package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// receiver is a local webhook that answers each request with respond (nil: 200) and records
// what it accepted: per Idempotency-Key and per watch and event id, the 2xx answers only.
type receiver struct {
	srv     *httptest.Server
	respond func(n int, w http.ResponseWriter, r *http.Request) bool // n counts from 1; false: answered 200 by the receiver

	mu       sync.Mutex
	requests int
	keys     map[string]int // 2xx deliveries per Idempotency-Key
	matches  map[string]int // 2xx deliveries per "watch event_id"
	all      []string       // every request's body
}

func newReceiver(t *testing.T, respond func(n int, w http.ResponseWriter, r *http.Request) bool) *receiver {
	rc := &receiver{respond: respond, keys: map[string]int{}, matches: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.requests++
		n := rc.requests
		rc.all = append(rc.all, string(b))
		rc.mu.Unlock()
		if rc.respond != nil && rc.respond(n, w, r) {
			return
		}
		var body notify.WebhookBody
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("receiver: %v: %s", err, b)
		}
		rc.mu.Lock()
		rc.keys[r.Header.Get("Idempotency-Key")]++
		for _, m := range body.Matches {
			rc.matches[body.Watch+" "+m.EventID.String()]++
		}
		rc.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// delivered returns a copy of the matches delivered.
func (rc *receiver) delivered() map[string]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]int, len(rc.matches))
	for k, v := range rc.matches {
		out[k] = v
	}
	return out
}

func (rc *receiver) count() (requests, accepted int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, n := range rc.keys {
		accepted += n
	}
	return rc.requests, accepted
}

// watchesFile writes a watches file with one webhook channel per name in hooks (name: URL) and
// the given watches YAML (each watch's channels listed in it).
func watchesFile(t *testing.T, hooks map[string]string, watches string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("channels:\n")
	for name, url := range hooks {
		fmt.Fprintf(&b, "  %s:\n    type: webhook\n    url: %s/alerts\n    timeout: 2s\n", name, url)
	}
	b.WriteString("watches:\n" + watches)
	return testkit.WriteTemp(t, "watches.yaml", b.String())
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// teeRow is one tee time of teePage.
type teeRow struct {
	Date, Time string // "12/20", "07:00"
	Price      int64
}

// teePage serves rows() as the sim-golf HTML shape.
func teePage(t testing.TB, rows func() []teeRow) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		var b strings.Builder
		b.WriteString(`<html><body><table class="tee-list">`)
		for _, r := range rows() {
			fmt.Fprintf(&b, `<tr class="tee-row"><td class="course">레이크 CC</td><td class="part">OUT</td><td class="date">%s</td>`+
				`<td class="time">%s</td><td class="price">%d</td><td class="players">4</td></tr>`, r.Date, r.Time, r.Price)
		}
		b.WriteString(`</table></body></html>`)
		_, _ = io.WriteString(w, b.String())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// teeSitesFile is a sites file of one site, "tee", reading teePage at base.
func teeSitesFile(t testing.TB, base string) string {
	return testkit.WriteTemp(t, "sites.yaml", "sites:\n"+sitesim.TeeListSite("tee", base+"/tee"))
}
