package views_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/store"
	"github.com/golfcrawler/golf-crawler/store/storetest"
)

var t0 = time.Date(2026, 5, 1, 6, 0, 0, 0, time.UTC)

var seoul = mustLoad("Asia/Seoul")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

func ptr[T any](v T) *T { return &v }

func listing(course, tee string, price int64) events.Listing {
	return events.Listing{Source: "teeup", CourseName: course, RoundDate: "2026-05-10", PlayDate: "2026-05-10",
		TeeTime: tee, Values: events.Values{PriceKRW: ptr(price), Players: ptr(4)}}
}

// ingest stores evs through store.Ingest, the consumer's path, in batches of size batch.
func ingest(t *testing.T, s *store.Store, evs []events.Event, batch int) {
	t.Helper()
	for start := 0; start < len(evs); start += batch {
		var msgs []store.Message
		for i, e := range evs[start:min(start+batch, len(evs))] {
			b, err := events.Encode(e)
			if err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, store.Message{Topic: "t", Offset: int64(start + i), Value: b, Event: &e})
		}
		if _, err := s.Ingest(t.Context(), msgs); err != nil {
			t.Fatalf("Ingest: %v", err)
		}
	}
}

func lifetimes(t *testing.T, s *store.Store) map[string]store.Lifetime {
	t.Helper()
	rows, err := s.Lifetimes(t.Context(), store.LifetimeFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]store.Lifetime{}
	for _, r := range rows {
		if _, dup := out[r.ListingKey]; dup {
			t.Fatalf("listing %s has two rows", r.ListingKey)
		}
		out[r.ListingKey] = r
	}
	return out
}

// TestBookingLifetimesScenarios: out-of-order arrival, a reopened listing, an expired one and
// duplicate deliveries, with the expected rows written out by hand.
func TestBookingLifetimesScenarios(t *testing.T) {
	t.Parallel()
	s := store.New(storetest.NewDB(t))

	a := listing("Alpha", "07:00", 100000)
	aCheap := a
	aCheap.PriceKRW = ptr(int64(90000))
	aOpen := events.Opened(a, "c1", t0)
	aChg := events.Changed(a, aCheap, "c2", t0.Add(time.Hour))
	aBooked := events.Closed(aCheap, "c3", t0.Add(3*time.Hour), events.Booked)

	b := listing("Beta", "08:00", 120000)
	b.PlayDate, b.RoundDate = future, future // still open: its tee time is ahead
	bOpen := events.Opened(b, "c1", t0)
	bClosed := events.Closed(b, "c2", t0.Add(time.Hour), events.Booked)
	bReopen := events.Opened(b, "c3", t0.Add(2*time.Hour)) // booking cancelled: a new lifetime
	bCheap := b
	bCheap.PriceKRW = ptr(int64(90000))
	bChg := events.Changed(b, bCheap, "c4", t0.Add(4*time.Hour))

	c := listing("Gamma", "09:00", 80000)
	cOpen := events.Opened(c, "c1", t0)
	cExpired := events.Closed(c, "c9", t0.Add(10*time.Hour), events.Expired)

	// Arrival order is scrambled and everything is delivered twice, the second time later.
	ingest(t, s, []events.Event{aBooked, bChg, cExpired, aChg, bReopen, aOpen, bClosed}, 3)
	ingest(t, s, []events.Event{cOpen, bOpen, aBooked, aOpen, bReopen, cExpired}, 4)

	got := lifetimes(t, s)
	if len(got) != 3 {
		t.Fatalf("got %d listings, want 3", len(got))
	}
	check := func(key, status string, opened time.Time, closed *time.Time, openPrice, lastPrice int64, changes, reopens int) {
		t.Helper()
		l := got[key]
		if l.Status != status || !l.OpenedAt.Equal(opened) || (closed == nil) != (l.ClosedAt == nil) ||
			(closed != nil && !l.ClosedAt.Equal(*closed)) || *l.OpenPriceKRW != openPrice || *l.LastPriceKRW != lastPrice ||
			l.ChangeCount != changes || l.ReopenCount != reopens {
			t.Errorf("%s = %+v\nwant status %s opened %v closed %v prices %d->%d changes %d reopens %d",
				key, l, status, opened, closed, openPrice, lastPrice, changes, reopens)
		}
		if closed != nil && l.Duration != closed.Sub(opened) {
			t.Errorf("%s lifetime %v, want %v", key, l.Duration, closed.Sub(opened))
		}
	}
	check(a.Key(), "booked", t0, ptr(t0.Add(3*time.Hour)), 100000, 90000, 1, 0)
	check(b.Key(), "open", t0.Add(2*time.Hour), nil, 120000, 90000, 1, 1)
	check(c.Key(), "expired", t0, ptr(t0.Add(10*time.Hour)), 80000, 80000, 0, 0)
	if l := got[b.Key()]; l.LastEventType != "listing_changed" || !l.LastEventAt.Equal(t0.Add(4*time.Hour)) || l.Duration < 2*time.Hour {
		t.Errorf("reopened listing = %+v", l)
	}
}

// TestBookingLifetimesMatchesRecomputation generates random histories (ties in occurred_at,
// reopens, expiries, double closes, shuffled arrival, duplicates) and checks that the view says
// exactly what a straightforward recomputation from the same events says.
func TestBookingLifetimesMatchesRecomputation(t *testing.T) {
	t.Parallel()
	storetest.Seeds(t, 3, 42, func(t *testing.T, rng *rand.Rand) {
		s := store.New(storetest.NewDB(t))
		byKey := map[string][]events.Event{}
		var all []events.Event
		for i := range 60 {
			l := listing(fmt.Sprintf("Course %d", i%4), fmt.Sprintf("%02d:%02d", 6+i/6, i%6*10), 100000)
			if i%2 == 1 { // half the tee times are ahead: without a close they stay open
				l.PlayDate, l.RoundDate = future, future
			}
			evs := storetest.RandomHistory(rng, l, t0)
			byKey[evs[0].ListingKey] = evs
			all = append(all, evs...)
		}
		all = storetest.Redelivered(rng, all, len(all)/5)
		ingest(t, s, all, 1+rng.IntN(40))

		got := lifetimes(t, s)
		if len(got) != len(byKey) {
			t.Fatalf("view has %d listings, want %d", len(got), len(byKey))
		}
		now := time.Now()
		for key, evs := range byKey {
			want := recompute(evs, now)
			g := got[key]
			g.Duration = 0 // depends on now() while open; checked below for closed listings
			if g.ClosedAt != nil && (got[key].Duration != g.ClosedAt.Sub(g.OpenedAt)) {
				t.Errorf("%s: lifetime %v != closed-opened", key, got[key].Duration)
			}
			if fmt.Sprint(norm(g)) != fmt.Sprint(norm(want)) {
				t.Errorf("%s:\n view %+v\n want %+v", key, norm(g), norm(want))
			}
		}
	})
}

// recompute is the reference: sort by (occurred_at, type, event_id), split into lifetimes at every
// non-close event that follows a close, and describe the last one; a last lifetime without a close
// whose tee time (Asia/Seoul) is at or before now is expired at its tee time.
func recompute(evs []events.Event, now time.Time) store.Lifetime {
	rank := map[events.Type]int{events.ListingOpened: 0, events.ListingChanged: 1, events.ListingClosed: 2}
	evs = slices.Clone(evs)
	slices.SortFunc(evs, func(a, b events.Event) int {
		if c := a.OccurredAt.Compare(b.OccurredAt); c != 0 {
			return c
		}
		if c := rank[a.EventType] - rank[b.EventType]; c != 0 {
			return c
		}
		return bytes.Compare(a.EventID[:], b.EventID[:])
	})
	starts := 0
	var start events.Event
	changes := 0
	for i, e := range evs {
		if i == 0 || (evs[i-1].EventType == events.ListingClosed && e.EventType != events.ListingClosed) {
			starts++
			start, changes = e, 0
		}
		if e.EventType == events.ListingChanged {
			changes++
		}
	}
	last := evs[len(evs)-1]
	l := store.Lifetime{
		ListingKey: last.ListingKey, Source: last.Source, CourseName: last.CourseName, PlayDate: store.Date(last.PlayDate),
		TeeTime: store.TimeOfDay(last.TeeTime), Status: "open", OpenedAt: start.OccurredAt, LastEventType: string(last.EventType),
		LastEventAt: last.OccurredAt, OpenPriceKRW: start.PriceKRW, LastPriceKRW: last.PriceKRW,
		ChangeCount: changes, ReopenCount: starts - 1,
	}
	if last.EventType == events.ListingClosed {
		l.Status, l.ClosedAt = string(last.CloseReason), &last.OccurredAt
	} else if tee, err := last.PlayTime(seoul); err == nil && !tee.After(now) {
		l.Status, l.ClosedAt = store.StatusExpired, &tee
	}
	return l
}

// norm makes a Lifetime printable for comparison (pointers dereferenced, times in UTC).
func norm(l store.Lifetime) []any {
	closed := "-"
	if l.ClosedAt != nil {
		closed = l.ClosedAt.UTC().String()
	}
	return []any{l.ListingKey, l.Source, l.CourseName, l.PlayDate, l.TeeTime, l.Status, l.OpenedAt.UTC().String(),
		closed, l.LastEventType, l.LastEventAt.UTC().String(), price(l.OpenPriceKRW), price(l.LastPriceKRW), l.ChangeCount, l.ReopenCount}
}

// price is a nullable price for printing: "null" or the number.
func price(p *int64) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// future is a play date far ahead: a listing on it is open until its close arrives.
const future = "2099-05-10"

// TestBookingLifetimesExpiresALostClose: a listing whose close event was lost (no close stored)
// and whose tee time has passed is expired at its tee time (Asia/Seoul), with lifetime = tee time
// - opened_at; one whose tee time is ahead stays open; a stored close always wins.
func TestBookingLifetimesExpiresALostClose(t *testing.T) {
	t.Parallel()
	s := store.New(storetest.NewDB(t))

	lost := listing("Lost", "07:00", 100000) // play date 2026-05-10, in the past
	lostCheap := lost
	lostCheap.PriceKRW = ptr(int64(90000))
	ahead := listing("Ahead", "07:00", 100000)
	ahead.PlayDate, ahead.RoundDate = future, future
	booked := listing("Booked", "07:00", 100000)
	ingest(t, s, []events.Event{
		events.Opened(lost, "c1", t0), events.Changed(lost, lostCheap, "c2", t0.Add(time.Hour)),
		events.Opened(ahead, "c1", t0),
		events.Opened(booked, "c1", t0), events.Closed(booked, "c2", t0.Add(2*time.Hour), events.Booked),
	}, 10)

	got := lifetimes(t, s)
	tee := time.Date(2026, 5, 10, 7, 0, 0, 0, seoul)
	l := got[lost.Key()]
	if l.Status != store.StatusExpired || l.ClosedAt == nil || !l.ClosedAt.Equal(tee) || l.Duration != tee.Sub(t0) ||
		l.LastEventType != "listing_changed" || !l.LastEventAt.Equal(t0.Add(time.Hour)) || l.ChangeCount != 1 ||
		*l.LastPriceKRW != 90000 {
		t.Errorf("listing without a close, tee time passed = %+v (closed_at %v)\nwant expired, closed at its tee time %v, lifetime %v",
			l, l.ClosedAt, tee, tee.Sub(t0))
	}
	if a := got[ahead.Key()]; a.Status != store.StatusOpen || a.ClosedAt != nil || a.Duration < time.Since(t0)-time.Hour {
		t.Errorf("listing without a close, tee time ahead = %+v, want open, no closed_at, lifetime now - opened_at", a)
	}
	if b := got[booked.Key()]; b.Status != store.StatusBooked || b.ClosedAt == nil || !b.ClosedAt.Equal(t0.Add(2*time.Hour)) {
		t.Errorf("booked listing = %+v, want booked at its close event", b)
	}

	rows, err := s.Lifetimes(t.Context(), store.LifetimeFilter{Status: store.StatusExpired})
	if err != nil || len(rows) != 1 || rows[0].ListingKey != lost.Key() {
		t.Errorf("--status expired = %v, %v; want only the listing whose close was lost", rows, err)
	}
	sum, err := s.LifetimeSummary(t.Context(), store.LifetimeFilter{})
	if err != nil || sum.ByStatus[store.StatusExpired] != 1 || sum.ByStatus[store.StatusOpen] != 1 || sum.ByStatus[store.StatusBooked] != 1 {
		t.Errorf("summary by status = %v, %v; want 1 expired, 1 open, 1 booked", sum.ByStatus, err)
	}
}
