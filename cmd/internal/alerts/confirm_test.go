package alerts_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
)

const confirmWatches = "channels:\n  hook: {type: webhook, url: http://127.0.0.1:1/}\n" +
	"watches:\n  - {name: all, channels: [hook]}\n  - {name: cheap, max_price_krw: 100000, channels: [hook]}\n"

// sightings is what a crawl saw, by listing key (absent: gone).
type sightings map[string]alerts.Sighting

func (s sightings) seen(key string) alerts.Sighting { return s[key] }

// shown is e's listing open since since, seen by a complete crawl, at price.
func shown(e *events.Event, since time.Time, price int64) alerts.Sighting {
	l := events.Listing{Source: e.Source, CourseName: e.CourseName, CoursePart: e.CoursePart, PlayDate: e.PlayDate, TeeTime: e.TeeTime,
		Values: events.Values{PriceKRW: &price, Players: e.Players}}
	return alerts.Sighting{Listing: l, Open: true, Since: since, Shows: true}
}

// statusesOf lists the store's claims as "watch course status[:reason]", sorted.
func statusesOf(t *testing.T, st alerts.Store) []string {
	t.Helper()
	return listed(t, st, func(r notify.Notification) string {
		s := r.Watch + " " + r.Course + " " + r.Status
		if r.Reason != "" {
			s += ":" + r.Reason
		}
		return s
	})
}

func awaiting(svc *alerts.Service, site string) []string {
	var out []string
	for _, l := range svc.Awaiting(site) {
		out = append(out, l.CourseName)
	}
	slices.Sort(out)
	return out
}

// TestConfirmBeforeSent (#51 item 3): with confirm_after, the openings of a crawl are claimed
// pending (not sent, awaiting); a crawl before confirm_after confirms nothing; a crawl after it
// confirms the listing it shows inside the watch (sending), skips the watch it left
// (left_watch), withholds the one that closed and the one re-opened since (a new lifetime: its own
// opening is claimed anew), and leaves the one it did not see completely waiting; a restarted
// service finds the pending claims in the store and confirms them (confirm_after 0 now: any
// crawl that shows them). A backlog claim and a claim without Confirm (the central path) are
// sending at once.
func TestConfirmBeforeSent(t *testing.T) {
	t.Parallel()
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			st := s.open(t)
			t0 := time.Now()
			svc, err := alerts.New(st, alerts.Config{Watches: parse(t, confirmWatches), Now: func() time.Time { return t0 }})
			if err != nil {
				t.Fatal(err)
			}
			crawl := func(svc *alerts.Service, at time.Duration, after time.Duration, seen sightings, evs ...*events.Event) int {
				t.Helper()
				n, err := svc.Claim(t.Context(), alerts.Crawl{Events: evs, Site: "site-a",
					Confirm: &alerts.Confirm{At: t0.Add(at), After: after, Seen: seen.seen}})
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			kept, left, closed, reopened, missed := opening("Kept", "site-a", "c1", t0), opening("Left", "site-a", "c1", t0),
				opening("Closed", "site-a", "c1", t0), opening("Reopened", "site-a", "c1", t0), opening("Missed", "site-a", "c1", t0)
			all := sightings{}
			for _, e := range []*events.Event{kept, left, closed, reopened, missed} {
				all[e.ListingKey] = shown(e, t0, 100000)
			}
			if n := crawl(svc, 0, 20*time.Second, all, kept, left, closed, reopened, missed); n != 0 {
				t.Fatalf("first sighting: %d claims sending, want 0 (pending)", n)
			}
			if got := awaiting(svc, "site-a"); fmt.Sprint(got) != "[Closed Kept Left Missed Reopened]" {
				t.Errorf("awaiting %v", got)
			}
			if n := crawl(svc, 10*time.Second, 20*time.Second, all); n != 0 {
				t.Fatalf("10s later: %d confirmed, want 0 (confirm_after 20s)", n)
			}
			later := sightings{kept.ListingKey: shown(kept, t0, 100000), left.ListingKey: shown(left, t0, 150000),
				closed.ListingKey:   {Listing: all[closed.ListingKey].Listing, Since: t0},
				reopened.ListingKey: shown(reopened, t0.Add(15*time.Second), 100000),
				missed.ListingKey:   {Listing: all[missed.ListingKey].Listing, Open: true, Since: t0}}
			if n := crawl(svc, 25*time.Second, 20*time.Second, later); n != 3 {
				t.Fatalf("25s later: %d confirmed, want 3 (Kept for both watches, Left for all)", n)
			}
			want := []string{"all Closed withheld", "all Kept sending", "all Left sending", "all Missed pending", "all Reopened withheld",
				"cheap Closed withheld", "cheap Kept sending", "cheap Left skipped:left_watch", "cheap Missed pending", "cheap Reopened withheld"}
			if got := statusesOf(t, st); !slices.Equal(got, want) {
				t.Errorf("after the confirm crawl:\n%q\nwant\n%q", got, want)
			}
			if svc.Withheld() != 4 {
				t.Errorf("withheld %d, want 4", svc.Withheld())
			}
			if got := awaiting(svc, "site-a"); fmt.Sprint(got) != "[Missed]" {
				t.Errorf("awaiting %v, want [Missed]", got)
			}
			restarted, err := alerts.New(st, alerts.Config{Watches: parse(t, confirmWatches), Now: func() time.Time { return t0 }})
			if err != nil {
				t.Fatal(err)
			}
			if got := awaiting(restarted, "site-a"); len(got) != 0 {
				t.Errorf("awaiting %v before the restarted service's first crawl", got)
			}
			if n := crawl(restarted, time.Minute, 0, sightings{missed.ListingKey: shown(missed, t0, 100000)}); n != 2 {
				t.Fatalf("after a restart: %d confirmed, want Missed's 2", n)
			}
			backlog := opening("Backlog", "site-b", "c0", t0.Add(-time.Hour))
			if n, err := restarted.Claim(t.Context(), alerts.Crawl{Site: "site-b", First: true, Open: listings{backlog},
				Confirm: &alerts.Confirm{At: t0, After: 20 * time.Second, Seen: sightings{}.seen}}); err != nil || n != 2 {
				t.Fatalf("a first crawl's backlog: %d, %v; want 2 sending", n, err)
			}
			central := opening("Central", "site-c", "c1", t0)
			if n, err := restarted.Claim(t.Context(), alerts.Crawl{Events: []*events.Event{central}}); err != nil || n != 2 {
				t.Fatalf("without Confirm: %d, %v; want 2 sending", n, err)
			}
			if n := len(statusesOf(t, st)); n != 14 {
				t.Errorf("%d claims, want 14", n)
			}
		})
	}
}
