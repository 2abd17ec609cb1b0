package sitesim

import (
	"slices"
	"testing"
	"time"
)

// cancelSite is a site with cancellation waves and frequent flickers, at 16:00 on a Monday.
func cancelSite(now *time.Time) *Site {
	return New(Config{Seed: 5, Now: func() time.Time { return *now }, TeeTimesPerDay: 16, BadRowRate: -1,
		Cancellations: &Cancellations{Share: 0.5, FlickersPerHour: 0.3}})
}

// TestCancellationsShowWhileOpen: every reopening of the ground truth over two hours around a
// 17:00 deadline shows on the site's pages from its start until just before its end and not at
// its end; a flicker lasts 5 to 25 s; the cancellations' median time open is near 3 minutes; and
// the pages show no booked listing outside a reopening. Without Cancellations nothing reopens.
func TestCancellationsShowWhileOpen(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 3, 9, 16, 0, 0, 0, KST)
	to := from.Add(2 * time.Hour)
	now := to.Add(time.Hour) // every reopening ended and revealed
	s := cancelSite(&now)
	shows := func(tr Truth, at time.Time) bool {
		d, err := time.ParseInLocation("2006-01-02", tr.PlayDate, KST)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(s.visibleOn(d, at), func(l *listing) bool { return l.ID == tr.ID })
	}
	var opens []time.Duration
	flickers := 0
	for _, tr := range s.GroundTruth(from, now) {
		for _, r := range tr.Reopenings {
			if r.From.After(to) {
				continue
			}
			if r.To.IsZero() {
				t.Fatalf("%s: reopening %v not ended at %s", tr.ID, r, now)
			}
			if !shows(tr, r.From) || !shows(tr, r.To.Add(-time.Second)) || shows(tr, r.To) && !tr.VisibleAt(r.To) {
				t.Fatalf("%s: reopening %s..%s: pages at its start %v, last second %v, end %v", tr.ID, r.From, r.To,
					shows(tr, r.From), shows(tr, r.To.Add(-time.Second)), shows(tr, r.To))
			}
			if tr.BookedAt == nil || !r.From.After(*tr.BookedAt) {
				t.Fatalf("%s: reopening at %s of a tee time booked at %v", tr.ID, r.From, tr.BookedAt)
			}
			if r.Flicker {
				flickers++
				if r.Lasted() < 5*time.Second || r.Lasted() > 25*time.Second {
					t.Errorf("%s: a flicker of %s", tr.ID, r.Lasted())
				}
				continue
			}
			opens = append(opens, r.Lasted())
		}
	}
	if len(opens) < 30 || flickers < 30 {
		t.Fatalf("%d cancellations and %d flickers: too few to judge", len(opens), flickers)
	}
	slices.Sort(opens)
	if median := opens[len(opens)/2]; median < 2*time.Minute || median > 4*time.Minute {
		t.Errorf("median time open %s of %d cancellations, want about 3m", median, len(opens))
	}
	t.Logf("%d cancellations (median open %s), %d flickers", len(opens), opens[len(opens)/2], flickers)

	// Between reopenings a booked tee time is not on the pages.
	for at := from.Add(30 * time.Minute); at.Before(to.Add(-30 * time.Minute)); at = at.Add(11 * time.Second) {
		for _, d := range s.Dates(at) {
			for _, l := range s.visibleOn(d, at) {
				if l.visibleAt(at) {
					continue
				}
				tr := l.truthUpTo(now)
				tr.Reopenings = l.reopenings(s.cfg, at, at)
				if len(tr.Reopenings) == 0 || !tr.VisibleAt(at) {
					t.Fatalf("%s shown at %s, booked at %v, with no reopening then", l.ID, at, tr.BookedAt)
				}
			}
		}
	}

	plain := New(Config{Seed: 5, Now: func() time.Time { return now }, TeeTimesPerDay: 16, BadRowRate: -1})
	for _, tr := range plain.GroundTruth(from, to) {
		if len(tr.Reopenings) > 0 {
			t.Fatalf("%s reopened without Cancellations", tr.ID)
		}
	}
}

// TestCancellationsHiddenUntilTheyHappen: the ground truth asked for during a reopening lists it
// without its end, and the reopenings are the same from two sites of one seed.
func TestCancellationsHiddenUntilTheyHappen(t *testing.T) {
	t.Parallel()
	from := time.Date(2026, 3, 9, 16, 0, 0, 0, KST)
	late := from.Add(3 * time.Hour)
	s := cancelSite(&late)
	var r Reopening
	var id string
	for _, tr := range s.GroundTruth(from, from.Add(2*time.Hour)) {
		for _, x := range tr.Reopenings {
			if !x.Flicker && x.Lasted() > time.Minute {
				r, id = x, tr.ID
			}
		}
	}
	if id == "" {
		t.Fatal("no cancellation longer than a minute")
	}
	mid := r.From.Add(r.Lasted() / 2)
	other := cancelSite(&mid)
	for _, tr := range other.GroundTruth(mid, mid) {
		if tr.ID != id {
			continue
		}
		i := slices.IndexFunc(tr.Reopenings, func(x Reopening) bool { return x.From.Equal(r.From) })
		if i < 0 || !tr.Reopenings[i].To.IsZero() || !tr.VisibleAt(mid) {
			t.Fatalf("%s at %s: reopenings %v, want %s open with no end", id, mid, tr.Reopenings, r.From)
		}
		return
	}
	t.Fatalf("%s not in the ground truth at %s", id, mid)
}
