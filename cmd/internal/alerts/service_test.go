package alerts_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/alerts"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/liteclaims"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// stores are the two claim stores the service runs over, each a fresh one per call; perSite says
// whether the store keeps a watch's fingerprint per source (the crawler's) or one for every
// source (the notifier's, whose watches are answered on every source at once).
var stores = []struct {
	name    string
	perSite bool
	open    func(t *testing.T) alerts.Store
}{
	{"liteclaims", true, func(t *testing.T) alerts.Store {
		st, err := liteclaims.Open(t.Context(), filepath.Join(t.TempDir(), "alerts.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}},
	{"pgclaims", false, func(t *testing.T) alerts.Store {
		return &pgclaims.Store{Pool: storetest.NewDB(t), Owner: "test", Settle: time.Nanosecond}
	}},
}

func parse(t *testing.T, yaml string) *notify.Config {
	t.Helper()
	cfg, err := notify.Parse([]byte(yaml), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func opening(course, source, crawl string, at time.Time) *events.Event {
	price, players := int64(100000), 4
	l := events.Listing{Source: source, CourseName: course, RoundDate: "2026-12-05", PlayDate: "2026-12-05", TeeTime: "07:00",
		Values: events.Values{PriceKRW: &price, Players: &players}}
	e := events.Opened(l, crawl, at)
	return &e
}

// listings is a fixed set of listings open now (Listings).
type listings []*events.Event

func (l listings) OpenListings(context.Context, string) ([]*events.Event, error) { return l, nil }

// claims lists the store's claims as "watch course kind" (kind: backlog or plain), sorted.
func claims(t *testing.T, st alerts.Store) []string {
	return listed(t, st, func(r notify.Notification) string {
		kind := "plain"
		if r.CrawlID == "backlog" || strings.HasPrefix(r.CrawlID, "backlog-") {
			kind = "backlog"
		}
		return r.Watch + " " + r.Course + " " + kind
	})
}

// listed lists the store's claims, each as line says, sorted.
func listed(t *testing.T, st alerts.Store, line func(notify.Notification) string) []string {
	t.Helper()
	rows, err := st.List(t.Context(), notify.Filter{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		out = append(out, line(r))
	}
	slices.Sort(out)
	return out
}

const twoWatches = "channels:\n  hook: {type: webhook, url: http://127.0.0.1:1/}\n" +
	"watches:\n  - {name: lake, courses: [lake], channels: [hook]}\n  - {name: all, channels: [hook]}\n"

// TestClaimFirstCrawlIsBacklog: on a source's first crawl the openings are every watch's backlog
// (claimed marked Backlog, worded as already open), never openings; the next crawl of the source
// claims its openings as openings and asks no watch again.
func TestClaimFirstCrawlIsBacklog(t *testing.T) {
	t.Parallel()
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			st := s.open(t)
			svc, err := alerts.New(st, alerts.Config{Watches: parse(t, twoWatches)})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			lake := opening("Lake", "site-a", "backlog", now.Add(-time.Hour))
			first := []*events.Event{lake}
			if n, err := svc.Claim(t.Context(), alerts.Crawl{Events: first, Site: "site-a", First: true, Open: listings(first)}); err != nil || n != 2 {
				t.Fatalf("first crawl: %d, %v; want 2 backlog claims", n, err)
			}
			pine := opening("Pine", "site-a", "c2", now)
			if n, err := svc.Claim(t.Context(), alerts.Crawl{Events: []*events.Event{pine}, Site: "site-a", Open: listings{lake, pine}}); err != nil || n != 1 {
				t.Fatalf("second crawl: %d, %v; want 1 claim (the opening of Pine for all)", n, err)
			}
			want := []string{"all Lake backlog", "all Pine plain", "lake Lake backlog"}
			if got := claims(t, st); !slices.Equal(got, want) {
				t.Fatalf("claims %q, want %q", got, want)
			}
		})
	}
}

// TestClaimAsksPerSite: a watch asks anew where its fingerprint recorded is another or none: once
// a source on the crawler's store (per site), once for every source on the notifier's; again
// after its conditions changed; a new service over the same store (a restart) with the same
// watches asks nothing.
func TestClaimAsksPerSite(t *testing.T) {
	t.Parallel()
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			st := s.open(t)
			now := time.Now()
			a := listings{opening("Lake A", "site-a", "backlog", now.Add(-time.Hour))}
			b := listings{opening("Lake B", "site-b", "backlog", now.Add(-time.Hour))}
			claim := func(svc *alerts.Service, site string, open listings) int {
				t.Helper()
				n, err := svc.Claim(t.Context(), alerts.Crawl{Site: site, Open: open})
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			svc, err := alerts.New(st, alerts.Config{Watches: parse(t, twoWatches)})
			if err != nil {
				t.Fatal(err)
			}
			if n := claim(svc, "site-a", a); n != 2 {
				t.Fatalf("site-a asked: %d claims, want 2", n)
			}
			if n, want := claim(svc, "site-b", b), map[bool]int{true: 2, false: 0}[s.perSite]; n != want {
				t.Fatalf("site-b: %d claims, want %d", n, want)
			}
			if n := claim(svc, "site-a", a) + claim(svc, "site-b", b); n != 0 {
				t.Fatalf("asked again: %d claims", n)
			}
			restarted, err := alerts.New(st, alerts.Config{Watches: parse(t, twoWatches)})
			if err != nil {
				t.Fatal(err)
			}
			if n := claim(restarted, "site-a", a) + claim(restarted, "site-b", b); n != 0 {
				t.Fatalf("after a restart: %d claims", n)
			}
			changed, err := alerts.New(st, alerts.Config{Watches: parse(t, strings.Replace(twoWatches, "courses: [lake]", "courses: [lake a]", 1))})
			if err != nil {
				t.Fatal(err)
			}
			// lake changed: it asks anew, and its backlog of site-a's Lake A is claimed already.
			if n := claim(changed, "site-a", a); n != 0 {
				t.Fatalf("the changed watch's backlog: %d claims, want 0 (Lake A claimed for lake already)", n)
			}
		})
	}
}

// TestStartAnswersTheWatchesThatAsk: with Config.Open (the central path) Start answers the
// watches that ask anew with what is open now, once: a restart claims nothing.
func TestStartAnswersTheWatchesThatAsk(t *testing.T) {
	t.Parallel()
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			st := s.open(t)
			open := listings{opening("Lake", "site-a", "backlog-1", time.Now().Add(-72*time.Hour))}
			for i := range 2 {
				svc, err := alerts.New(st, alerts.Config{Watches: parse(t, twoWatches), Open: open, Logger: testkit.Logger(t, 0)})
				if err != nil {
					t.Fatal(err)
				}
				if err := svc.Start(t.Context()); err != nil {
					t.Fatal(err)
				}
				if err := svc.Stop(t.Context()); err != nil {
					t.Fatal(err)
				}
				if got := claims(t, st); len(got) != 2 {
					t.Fatalf("start %d: claims %q, want the backlog of both watches once", i+1, got)
				}
			}
		})
	}
}

// TestDryRunSaysWhatAClaimWouldDoAndWritesNothing: claim.sql in its dry-run mode reports a new
// match as sent, a stale one as skipped, and one that already has a row as claimed, and adds no row.
func TestDryRunSaysWhatAClaimWouldDoAndWritesNothing(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	cfg := parse(t, "channels:\n  a: {type: webhook, url: http://x/}\nwatches:\n  - name: w\n    channels: [a]\n")
	now := time.Now()
	claimed := opening("claimed", "s", "c1", now)
	svc, err := alerts.New(&pgclaims.Store{Pool: db, Owner: "test"}, alerts.Config{Watches: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := svc.Claim(t.Context(), alerts.Crawl{Events: []*events.Event{claimed}}); err != nil || n != 1 {
		t.Fatalf("claim: %d, %v", n, err)
	}
	var out testkit.SyncBuffer
	dry, err := alerts.New(&pgclaims.Store{Pool: db, Owner: "test"}, alerts.Config{Watches: cfg, DryRun: &out})
	if err != nil {
		t.Fatal(err)
	}
	fresh, old := opening("fresh", "s", "c2", now), opening("old", "s", "c2", now.Add(-31*time.Minute))
	if _, err := dry.Claim(t.Context(), alerts.Crawl{Events: []*events.Event{claimed, fresh, old}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"would send to a (watch w", "fresh", "would skip " + claimed.EventID.String() + " for a", ": claimed",
		"would skip " + old.EventID.String() + " for a", ": stale"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("dry run printed:\n%s\nwant %q", out.String(), want)
		}
	}
	if n := strings.Count(out.String(), "would "); n != 3 {
		t.Errorf("dry run printed %d lines for 3 matches:\n%s", n, out.String())
	}
	var rows int
	if err := db.QueryRow(t.Context(), "select count(*) from notifications").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Errorf("%d notifications after the dry run, want the 1 claimed before", rows)
	}
}
