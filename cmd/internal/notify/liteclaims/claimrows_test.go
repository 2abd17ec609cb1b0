package liteclaims_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
)

// TestClaimBatchAcrossStatements: a batch larger than one claim statement claims every match
// once and returns them in the batch's order, and its backlog claims see what the batch claimed
// before them as one statement per match did: a listing the batch claimed for a change is not
// claimed again as backlog, nor twice when the batch holds it twice under two keys (a statement
// does not see its own rows, so the second must go into another one).
func TestClaimBatchAcrossStatements(t *testing.T) {
	t.Parallel()
	st := open(t, filepath.Join(t.TempDir(), "alerts.db"))
	now := time.Now()
	var cs []notify.Claim
	for i := range 250 {
		e := opening(fmt.Sprint("course-", i))
		cs = append(cs, notify.Claim{Key: notify.ClaimKey("w", "a", e.EventID), Watch: "w", Channel: "a", Event: e})
	}
	changedListing := opening("changed")
	changed := *changedListing
	changed.EventID, changed.EventType = uuid.New(), events.ListingChanged
	cs = append(cs, notify.Claim{Key: notify.ClaimKey("w", "a", changed.EventID), Watch: "w", Channel: "a", Event: &changed})
	backlog := func(e *events.Event) notify.Claim {
		return notify.Claim{Key: notify.ClaimKey("w", "a", e.EventID), Watch: "w", Channel: "a", Event: e, Backlog: true}
	}
	twice := opening("twice")
	again := *twice
	again.EventID = uuid.New()
	fresh := opening("fresh")
	cs = append(cs, backlog(changedListing), backlog(twice), backlog(&again), backlog(fresh))
	got, err := st.Claim(t.Context(), notify.ClaimBatch{Now: now, Claims: cs})
	if err != nil {
		t.Fatal(err)
	}
	want := append([]notify.Claim{}, cs[:251]...) // the 250 openings and the change
	want = append(want, cs[252], cs[254])         // twice once, fresh
	if len(got) != len(want) {
		t.Fatalf("%d claims made, want %d (not the changed listing's backlog, the listing held twice once)", len(got), len(want))
	}
	for i, c := range got {
		if c.Key != want[i].Key || c.Status != notify.StatusSending {
			t.Fatalf("claim %d: %+v, want %s sending (the batch's order)", i, c, want[i].Key)
		}
	}
	if n := len(mustListAll(t, st)); n != len(want) {
		t.Errorf("%d claims stored, want %d", n, len(want))
	}
}

func mustListAll(t *testing.T, st notify.ClaimStore) []notify.Notification {
	t.Helper()
	rows, err := st.List(t.Context(), notify.Filter{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}
