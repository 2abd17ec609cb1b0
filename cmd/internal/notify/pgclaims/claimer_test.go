package pgclaims_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

// claimer is the claim half of the notifier for these tests: a batch's events matched against
// Config (notify.Config.Batch) and claimed in one transaction of Store, as the alert service's
// Claim does with a Kafka batch (its own tests are in cmd/internal/alerts).
type claimer struct {
	Store  *pgclaims.Store
	Config *notify.Config
	Logger *slog.Logger
	Wake   func(channels []string)
}

func (c *claimer) Ingest(ctx context.Context, batch []store.Message) (store.Result, error) {
	evs := make([]*events.Event, 0, len(batch))
	for _, m := range batch {
		evs = append(evs, m.Event)
	}
	created, err := c.Store.Claim(ctx, c.Config.Batch(evs, time.Now(), 0))
	n := 0
	for _, cl := range created {
		if cl.Status == notify.StatusSending {
			n++
		}
	}
	if n > 0 && c.Wake != nil {
		c.Wake(nil)
	}
	return store.Result{Inserted: n}, err
}

func msgs(evs ...events.Event) []store.Message {
	out := make([]store.Message, len(evs))
	for i := range evs {
		b, _ := events.Encode(evs[i])
		out[i] = store.Message{Topic: "t", Offset: int64(i), Value: b, Event: &evs[i]}
	}
	return out
}

func listing(course string) events.Listing {
	price, players := int64(100000), 4
	return events.Listing{Source: "s", CourseName: course, RoundDate: "2026-12-05", PlayDate: "2026-12-05", TeeTime: "07:00",
		Values: events.Values{PriceKRW: &price, Players: &players}}
}

// TestClaimRules: claimed once, stale and closed (by the booking consumer's table or by a close the
// notifier consumed) skipped with the reason, closes of other listings and earlier closes ignored.
func TestClaimRules(t *testing.T) {
	t.Parallel()
	db := storetest.NewDB(t)
	cfg, err := notify.Parse([]byte("channels:\n  a: {type: webhook, url: http://x/}\n  b: {type: webhook, url: http://y/}\n"+
		"watches:\n  - name: w\n    channels: [a, b]\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	c := &claimer{Store: &pgclaims.Store{Pool: db, Owner: "test"}, Config: cfg}
	now := time.Now()
	fresh := events.Opened(listing("fresh"), "c1", now)
	old := events.Opened(listing("old"), "c1", now.Add(-31*time.Minute))
	// A close stored by the booking consumer, after the opening.
	closedByStore := events.Opened(listing("closed-store"), "c1", now.Add(-2*time.Minute))
	if _, err := store.New(db).Ingest(t.Context(), msgs(events.Closed(listing("closed-store"), "c2", now.Add(-time.Minute), events.Booked))); err != nil {
		t.Fatal(err)
	}
	// A close the notifier consumed in an earlier batch, and one before the opening (a reopen).
	closedSeen := events.Opened(listing("closed-seen"), "c1", now.Add(-2*time.Minute))
	reopened := events.Opened(listing("reopened"), "c3", now.Add(-time.Minute))
	if _, err := c.Ingest(t.Context(), msgs(events.Closed(listing("closed-seen"), "c2", now.Add(-time.Minute), events.Booked),
		events.Closed(listing("reopened"), "c2", now.Add(-2*time.Minute), events.Expired))); err != nil {
		t.Fatal(err)
	}
	res, err := c.Ingest(t.Context(), msgs(fresh, old, closedByStore, closedSeen, reopened))
	if err != nil {
		t.Fatal(err)
	}
	if res.Inserted != 4 { // fresh and reopened, on two channels each
		t.Errorf("claimed %d, want 4", res.Inserted)
	}
	// The same batch again, and shuffled: nothing more.
	for _, batch := range [][]store.Message{msgs(fresh, old, closedByStore, closedSeen, reopened), msgs(reopened, closedSeen, fresh)} {
		if res, err := c.Ingest(t.Context(), batch); err != nil || res.Inserted != 0 {
			t.Errorf("redelivery claimed %d (%v)", res.Inserted, err)
		}
	}
	got := map[string]string{}
	rows, err := db.Query(t.Context(), "select event->>'course_name', channel, status || coalesce(':' || reason, '') from notifications")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		var course, ch, st string
		if err := rows.Scan(&course, &ch, &st); err != nil {
			t.Fatal(err)
		}
		got[course+"/"+ch] = st
		n++
	}
	want := map[string]string{"fresh": "sending", "old": "skipped:stale", "closed-store": "skipped:closed",
		"closed-seen": "skipped:closed", "reopened": "sending"}
	for course, st := range want {
		for _, ch := range []string{"a", "b"} {
			if got[course+"/"+ch] != st {
				t.Errorf("%s on %s: %q, want %q", course, ch, got[course+"/"+ch], st)
			}
		}
	}
	if n != 10 {
		t.Errorf("%d rows, want 10", n)
	}
}
