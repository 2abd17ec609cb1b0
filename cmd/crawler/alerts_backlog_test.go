package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/google/uuid"
)

// notifyEvent is an opening of listing key first seen at at.
func notifyEvent(key string, at time.Time) *events.Event {
	return &events.Event{EventID: uuid.New(), EventType: events.ListingOpened, SchemaVersion: events.SchemaVersion, ListingKey: key,
		OccurredAt: at, CrawlID: "c1", Source: "tee", CourseName: "레이크", PlayDate: "2026-12-20", TeeTime: "07:00"}
}

// backlogTexts is every text rc accepted for watch, with the match's already_open flags.
func backlogTexts(t *testing.T, rc *receiver, watch string) (texts []string, open, opened int) {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, b := range rc.all {
		var body notify.WebhookBody
		if err := json.Unmarshal([]byte(b), &body); err != nil {
			t.Fatalf("receiver body: %v", err)
		}
		if body.Watch != watch {
			continue
		}
		texts = append(texts, body.Text)
		for _, m := range body.Matches {
			if m.AlreadyOpen {
				open++
			} else {
				opened++
			}
		}
	}
	return texts, open, opened
}

// ageSnapshot moves the first-seen time of every listing of source in the state dir days back:
// a crawler that has run for days.
func ageSnapshot(t *testing.T, state, source string, days int) {
	t.Helper()
	sd := crawler.StateDir{Dir: state}
	snap, err := sd.Load(source)
	if err != nil {
		t.Fatal(err)
	}
	for k, e := range snap.Listings {
		e.FirstSeen = e.FirstSeen.Add(-time.Duration(days) * 24 * time.Hour)
		snap.Listings[k] = e
	}
	if err := sd.Save(snap); err != nil {
		t.Fatal(err)
	}
}

// TestNewWatchHearsWhatIsOpen: a watch is a query. The first crawl of a fresh state dir sends
// what is open worded as already open (never "opened N seconds ago"); a watch added to a crawler
// that has run for days sends the tee times that match now once, "열려 있음 · 3일째", though they
// are far older than --alert-max-age; an unchanged watches file sends nothing again; a changed
// watch sends only what it had not sent; backlog: false and --no-backlog send nothing of what
// is open, and a restart without --no-backlog does not make up for it.
func TestNewWatchHearsWhatIsOpen(t *testing.T) {
	t.Parallel()
	site := teePage(t, func() []teeRow {
		return []teeRow{{"12/20", "07:00", 140000}, {"12/20", "08:00", 180000}, {"12/21", "06:30", 250000}}
	})
	rc := newReceiver(t, nil)
	o := newOnceRun(t, site.URL, rc.srv.URL, "  - name: all\n    channels: [hook]\n")
	hooks := map[string]string{"hook": rc.srv.URL}
	once := func(step string, extra ...string) {
		t.Helper()
		if out, err := o.once(t, extra...); err != nil || strings.Contains(out, "left claimed") {
			t.Fatalf("%s: once: %v\n%s", step, err, tail(out))
		}
	}
	perWatch := func() map[string]int {
		out := map[string]int{}
		for m, n := range rc.delivered() {
			w, _, _ := strings.Cut(m, " ")
			out[w] += n
		}
		return out
	}

	once("fresh state dir")
	texts, open, opened := backlogTexts(t, rc, "all")
	if open != 3 || opened != 0 || len(texts) != 1 || strings.Contains(texts[0], "전 오픈") || !strings.Contains(texts[0], "열려 있음 · 0분째") {
		t.Fatalf("first crawl of a fresh state dir: %d already open, %d opened, texts %q; want 3 already open in one message", open, opened, texts)
	}
	once("unchanged")
	if got := perWatch(); got["all"] != 3 || len(got) != 1 {
		t.Fatalf("after a second crawl with the same watches: %v, want all 3 (nothing again)", got)
	}

	ageSnapshot(t, o.state, "tee", 3)
	o.watches = watchesFile(t, hooks, "  - name: all\n    channels: [hook]\n  - name: cheap\n    max_price_krw: 150000\n    channels: [hook]\n"+
		"  - name: quiet\n    backlog: false\n    channels: [hook]\n")
	once("cheap and quiet added")
	texts, open, opened = backlogTexts(t, rc, "cheap")
	if open != 1 || opened != 0 || len(texts) != 1 || !strings.Contains(texts[0], "07:00 · 140,000원 · 4명 · 열려 있음 · 3일째") {
		t.Errorf("new watch cheap on a crawler run for 3 days: %d already open, %d opened, texts %q; want the 07:00 tee time, open for 3 days", open, opened, texts)
	}
	if got := perWatch(); got["all"] != 3 || got["cheap"] != 1 || got["quiet"] != 0 {
		t.Errorf("after adding cheap and quiet: %v, want all 3, cheap 1, quiet 0 (backlog: false)", got)
	}

	o.watches = watchesFile(t, hooks, "  - name: all\n    channels: [hook]\n  - name: cheap\n    max_price_krw: 200000\n    channels: [hook]\n"+
		"  - name: quiet\n    backlog: false\n    channels: [hook]\n")
	once("cheap raised to 200,000")
	once("restart, unchanged")
	if got := perWatch(); got["all"] != 3 || got["cheap"] != 2 || got["quiet"] != 0 {
		t.Errorf("after raising cheap's cap and a restart: %v, want all 3, cheap 2 (08:00 added, 07:00 not again), quiet 0", got)
	}

	o.watches = watchesFile(t, hooks, "  - name: all\n    channels: [hook]\n  - name: late\n    tee_time: {from: \"06:00\", to: \"23:00\"}\n    channels: [hook]\n")
	once("late added with --no-backlog", "--no-backlog")
	once("restart without --no-backlog")
	if got := perWatch(); got["late"] != 0 {
		t.Errorf("watch added under --no-backlog: %d alerts, want none, also after a restart without it", got["late"])
	}
	list := o.cmd(t, "notifications", "--watch", "cheap")
	if strings.Count(list, "sent") != 2 || strings.Contains(list, "stale") {
		t.Errorf("crawler notifications --watch cheap (backlog claims are not stale):\n%s", list)
	}
}

// TestBacklogSkipsAtSendTimeLikeAnyClaim: a 3-day-old listing's backlog claim is neither stale at
// claim time nor at send time (its age counts from the claim), and one whose listing that closes after its backlog claim and before the
// send is skipped (closed), like any claim.
func TestBacklogSkipsAtSendTimeLikeAnyClaim(t *testing.T) {
	t.Parallel()
	st, err := openAlertStore(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	old := time.Now().Add(-72 * time.Hour)
	e := notifyEvent("k1", old)
	closed := notifyEvent("k2", old)
	b := notify.ClaimBatch{Now: time.Now(), Claims: []notify.Claim{
		{Key: notify.ClaimKey("w", "hook", e.EventID), Watch: "w", Channel: "hook", Event: e, Backlog: true},
		{Key: notify.ClaimKey("w", "hook", closed.EventID), Watch: "w", Channel: "hook", Event: closed, Backlog: true},
	}}
	got, err := st.Claim(t.Context(), b)
	if err != nil || len(got) != 2 || got[0].Status != notify.StatusSending || got[1].Status != notify.StatusSending {
		t.Fatalf("backlog claims of 3-day-old listings: %+v, %v; want both sending (not stale)", got, err)
	}
	if _, err := st.Claim(t.Context(), notify.ClaimBatch{Now: time.Now(), Closes: []notify.Close{{ListingKey: "k2", At: time.Now()}}}); err != nil {
		t.Fatal(err)
	}
	rc := newReceiver(t, nil)
	cfg, err := notify.Parse([]byte("channels:\n  hook: {type: webhook, url: "+rc.srv.URL+"}\nwatches:\n  - {name: w, channels: [hook]}\n"), os.Getenv)
	if err != nil {
		t.Fatal(err)
	}
	s := &notify.Sender{Store: st, Channel: cfg.Channels["hook"], Watches: cfg}
	if _, err := s.Once(t.Context()); err != nil {
		t.Fatal(err)
	}
	rows, err := st.List(t.Context(), notify.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, r := range rows {
		status[r.EventID.String()] = r.Status + " " + r.Reason
	}
	if status[e.EventID.String()] != "sent " || status[closed.EventID.String()] != "skipped closed" {
		t.Errorf("statuses %v: want the open one sent, the closed one skipped closed", status)
	}
	if _, accepted := rc.count(); accepted != 1 {
		t.Errorf("receiver accepted %d messages, want 1", accepted)
	}
}
