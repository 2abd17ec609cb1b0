package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/events/kafkabus/kafkatest"
	"github.com/golfcrawler/golf-crawler/store"
)

// backlogBody is what the backlog test reads of a webhook message.
type backlogBody struct {
	Watch   string `json:"watch"`
	Text    string `json:"text"`
	Matches []struct {
		TeeTime     string `json:"tee_time"`
		PriceKRW    *int64 `json:"price_krw"`
		AlreadyOpen bool   `json:"already_open"`
	} `json:"matches"`
}

// TestNotifyNewWatchHearsWhatIsOpenOnce: on the central path a watch is a query too. Listings
// open for 3 days in booking_lifetimes (one of them changed since, one closed) are sent to a new
// watch once at the notifier's start, in tee-time order, at their current price, worded as already
// open ("열려 있음 · 3일째") though far older than --max-age; a restart with the same watches sends
// nothing; a watch added later hears only its matches, a changed watch only what it had not been
// sent (under any fingerprint); backlog: false, a muted watch and --no-backlog hear nothing of
// what is open, and a restart without --no-backlog does not make up for it.
func TestNotifyNewWatchHearsWhatIsOpenOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t)
	h := newHook(t)
	seoul, _ := time.LoadLocation("Asia/Seoul")
	day := time.Now().In(seoul).AddDate(0, 0, 10).Format(time.DateOnly)
	listing := func(course, tee string, price int64) events.Listing {
		players := 4
		return events.Listing{Source: "test", CourseName: course, RoundDate: day, PlayDate: day, TeeTime: tee, Values: events.Values{PriceKRW: &price, Players: &players}}
	}
	ago := func(d int) time.Time { return time.Now().Add(-time.Duration(d)*24*time.Hour - time.Hour) }
	a, b, c, d := listing("레이크", "07:00", 140000), listing("레이크", "08:00", 180000), listing("레이크", "06:30", 250000), listing("레이크", "09:00", 100000)
	bCheaper := listing("레이크", "08:00", 170000)
	evs := []events.Event{events.Opened(a, "c1", ago(3)), events.Opened(b, "c1", ago(3)), events.Opened(c, "c1", ago(3)),
		events.Opened(d, "c1", ago(3)), events.Changed(b, bCheaper, "c2", ago(2)), events.Closed(d, "c3", ago(1), events.Booked)}
	msgs := make([]store.Message, len(evs))
	for i := range evs {
		msgs[i] = store.Message{Event: &evs[i]}
	}
	if _, err := store.New(s.db).Ingest(t.Context(), msgs); err != nil {
		t.Fatal(err)
	}

	group := kafkatest.Name(t, "g")
	// start runs the notifier until it consumes (the backlog is answered before) and stops it.
	start := func(step, watches string, extra ...string) {
		t.Helper()
		n := startNotifier(t, s.bin, s.env, s.args(group, writeWatches(t, "channels:\n  hook: {type: webhook, url: "+h.srv.URL+"/hook}\nwatches:\n"+watches), extra...)...)
		waitUntil(t, 60*time.Second, step+": the consumer to start", func() bool { return strings.Contains(n.Logs.String(), "consumer started") }, n)
		waitUntil(t, 60*time.Second, step+": nothing left sending", func() bool { return statusCounts(t, s.db)["sending"] == 0 }, n)
		n.stop(t)
	}
	bodies := func(watch string) []backlogBody {
		var out []backlogBody
		for _, r := range h.all() {
			var bb backlogBody
			if err := json.Unmarshal(r.Body, &bb); err != nil {
				t.Fatal(err)
			}
			if bb.Watch == watch {
				out = append(out, bb)
			}
		}
		return out
	}
	tees := func(watch string) string {
		var ts []string
		for _, bb := range bodies(watch) {
			for _, m := range bb.Matches {
				ts = append(ts, fmt.Sprintf("%s/%d/%v", m.TeeTime, *m.PriceKRW, m.AlreadyOpen))
			}
		}
		return strings.Join(ts, " ")
	}

	start("new watch all", "  - name: all\n    channels: [hook]\n")
	if got, want := tees("all"), "06:30/250000/true 07:00/140000/true 08:00/170000/true"; got != want {
		t.Fatalf("watch all's backlog: %q, want %q (open now, tee-time order, current price, already open)", got, want)
	}
	if bs := bodies("all"); len(bs) != 1 || !strings.Contains(bs[0].Text, "열려 있음 · 3일째") || strings.Contains(bs[0].Text, "전 오픈") {
		t.Fatalf("watch all's backlog messages: %+v, want one worded as open for 3 days", bs)
	}

	start("restart, unchanged", "  - name: all\n    channels: [hook]\n")
	if n := len(h.all()); n != 1 {
		t.Fatalf("a restart with the same watches sent again: %d messages, want 1", n)
	}

	start("cheap, quiet and off added", "  - name: all\n    channels: [hook]\n  - name: cheap\n    max_price_krw: 150000\n    channels: [hook]\n"+
		"  - name: quiet\n    backlog: false\n    channels: [hook]\n  - name: off\n    enabled: false\n    channels: [hook]\n")
	start("cheap raised", "  - name: all\n    channels: [hook]\n  - name: cheap\n    max_price_krw: 200000\n    channels: [hook]\n"+
		"  - name: quiet\n    backlog: false\n    channels: [hook]\n")
	if got, want := tees("cheap"), "07:00/140000/true 08:00/170000/true"; got != want {
		t.Errorf("watch cheap, added then raised to 200,000: %q, want %q (07:00 once, then 08:00 alone)", got, want)
	}
	if got := tees("all") + tees("quiet") + tees("off"); got != "06:30/250000/true 07:00/140000/true 08:00/170000/true" {
		t.Errorf("watches all, quiet (backlog: false) and off (muted): %q, want all's first three alone", got)
	}

	start("late added under --no-backlog", "  - name: all\n    channels: [hook]\n  - name: late\n    tee_time: {from: \"06:00\", to: \"23:00\"}\n    channels: [hook]\n", "--no-backlog")
	start("restart without --no-backlog", "  - name: all\n    channels: [hook]\n  - name: late\n    tee_time: {from: \"06:00\", to: \"23:00\"}\n    channels: [hook]\n")
	if got := tees("late"); got != "" {
		t.Errorf("watch late added under --no-backlog: %q, want nothing, also after a restart without it", got)
	}
	if c := statusCounts(t, s.db); len(c) != 1 || c["sent"] != 5 {
		t.Errorf("notifications: %v, want 5 sent", c)
	}
}
