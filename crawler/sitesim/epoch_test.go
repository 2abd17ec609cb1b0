package sitesim

import (
	"testing"
	"time"
)

// With Epoch set, a site started "now" with fast bookings has its bookings ahead of it: none
// before the epoch, dozens within the first minutes.
func TestEpochPutsBookingsAfterStartUp(t *testing.T) {
	t.Parallel()
	epoch := time.Date(2026, 11, 30, 4, 17, 0, 0, KST)
	now := epoch
	s := New(Config{Seed: 1, Now: func() time.Time { return now }, Epoch: epoch, TeeTimesPerDay: 12, BookingSpeed: DemoBookingSpeed})
	var before, within, total int
	for _, tr := range s.GroundTruth(epoch.AddDate(0, 0, -20), epoch.Add(5*time.Minute)) {
		total++
		if tr.BookedAt == nil {
			continue
		}
		switch {
		case tr.BookedAt.Before(epoch):
			before++
		case tr.BookedAt.Before(epoch.Add(5 * time.Minute)):
			within++
		}
	}
	if before != 0 {
		t.Fatalf("%d of %d listings were booked before the epoch", before, total)
	}
	if within < 10 {
		t.Fatalf("only %d of %d listings booked in the first 5 minutes at booking speed %d", within, total, DemoBookingSpeed)
	}
	t.Logf("%d listings, %d booked in the first 5 minutes", total, within)

	// Without an epoch the same site has booked listings long before.
	s = New(Config{Seed: 1, Now: func() time.Time { return now }, TeeTimesPerDay: 12, BookingSpeed: DemoBookingSpeed})
	before = 0
	for _, tr := range s.GroundTruth(epoch.AddDate(0, 0, -20), epoch) {
		if tr.BookedAt != nil && tr.BookedAt.Before(epoch) {
			before++
		}
	}
	if before == 0 {
		t.Fatal("without an epoch no listing was booked before it: the test proves nothing")
	}
}
