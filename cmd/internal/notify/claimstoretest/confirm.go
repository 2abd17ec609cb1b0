package claimstoretest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

// pendingClaim is c marked Pending (the crawler path's confirm).
func pendingClaim(c notify.Claim) notify.Claim {
	c.Pending = true
	return c
}

// statuses lists the store's claims as "watch:status:reason", sorted.
func statuses(t *testing.T, st notify.ClaimStore) []string {
	t.Helper()
	var out []string
	for _, n := range list(t, st, notify.Filter{}) {
		out = append(out, n.Watch+":"+n.Status+":"+n.Reason)
	}
	slices.Sort(out)
	return out
}

// pendingWaitsForItsResolution (#51 item 3): a claim made pending is stored pending (a skip at
// claim time wins: a later close stored makes it skipped closed), is listed as pending, is never
// picked, and survives a restart (Pending returns it with its event); a later batch's Resolve
// makes one sending (picked from then on), one withheld and one skipped with its reason, each
// in that batch's transaction.
func pendingWaitsForItsResolution(t *testing.T, f Factory) {
	st := f.New(t)
	now := time.Now()
	confirmed, flicker, left, closed := opening("confirmed", "c1", now), opening("flicker", "c1", now),
		opening("left", "c1", now), opening("closed", "c1", now.Add(-time.Minute))
	got := mustClaim(t, st, notify.ClaimBatch{Now: now, Closes: []notify.Close{{ListingKey: closed.ListingKey, At: now}},
		Claims: []notify.Claim{pendingClaim(claim("confirmed", "a", confirmed)),
			pendingClaim(claim("flicker", "a", flicker)), pendingClaim(claim("left", "a", left)),
			pendingClaim(claim("closed", "a", closed)), claim("plain", "a", opening("plain", "c1", now))}})
	var made []string
	for _, c := range got {
		made = append(made, string(c.Status)+":"+c.Reason)
	}
	slices.Sort(made)
	if fmt.Sprint(made) != "[pending: pending: pending: sending: skipped:closed]" {
		t.Fatalf("claimed %v, want 3 pending, the plain one sending, the closed one skipped", made)
	}
	if ns := list(t, st, notify.Filter{Status: notify.StatusPending}); len(ns) != 3 {
		t.Errorf("--status pending listed %d, want 3", len(ns))
	}
	st = f.Reopen(t, st)
	if gs := mustPick(t, st, "a"); len(gs) != 1 || gs[0].Watch != "plain" {
		t.Errorf("picked %+v, want the plain claim only (pending claims wait)", gs)
	}
	pending, err := st.Pending(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pending {
		if p.Key != notify.ClaimKey(p.Watch, p.Channel, p.Event.EventID) || p.Event.ListingKey == "" || p.Event.OccurredAt.IsZero() {
			t.Errorf("pending %+v: want its key, watch, channel and event", p)
		}
		names = append(names, p.Watch)
	}
	slices.Sort(names)
	if fmt.Sprint(names) != "[confirmed flicker left]" {
		t.Errorf("Pending after a restart: %v, want the three pending claims", names)
	}
	mustClaim(t, st, notify.ClaimBatch{Now: now.Add(time.Minute), Resolve: []notify.Resolve{
		{Key: notify.ClaimKey("confirmed", "a", confirmed.EventID), Status: notify.StatusSending},
		{Key: notify.ClaimKey("flicker", "a", flicker.EventID), Status: notify.StatusWithheld},
		{Key: notify.ClaimKey("left", "a", left.EventID), Status: notify.StatusSkipped, Reason: notify.ReasonLeftWatch}}})
	if got := statuses(t, st); fmt.Sprint(got) != "[closed:skipped:closed confirmed:sending: flicker:withheld: left:skipped:left_watch plain:sending:]" {
		t.Errorf("after the resolution: %v", got)
	}
	var picked []string
	for _, g := range mustPick(t, st, "a") {
		picked = append(picked, g.Watch)
	}
	slices.Sort(picked)
	if fmt.Sprint(picked) != "[confirmed plain]" {
		t.Errorf("picked %v after the confirmation, want confirmed and plain", picked)
	}
	if p, err := st.Pending(t.Context()); err != nil || len(p) != 0 {
		t.Errorf("Pending after the resolution: %+v, %v; want none", p, err)
	}
}

// resolveTouchesOnlyPending: a resolution of a claim no longer pending (sending, sent, withheld)
// or of no claim at all changes nothing; withheld claims are pruned as sent and skipped ones are.
func resolveTouchesOnlyPending(t *testing.T, f Factory) {
	st := f.New(t)
	now := time.Now()
	sent, held := opening("sent", "c1", now), opening("held", "c1", now)
	mustClaim(t, st, notify.ClaimBatch{Now: now, Claims: []notify.Claim{claim("sent", "a", sent),
		pendingClaim(claim("held", "a", held))}})
	mustClaim(t, st, notify.ClaimBatch{Now: now, Resolve: []notify.Resolve{
		{Key: notify.ClaimKey("held", "a", held.EventID), Status: notify.StatusWithheld}}})
	g := mustPick(t, st, "a")
	if len(g) != 1 {
		t.Fatalf("picked %+v, want the sending claim", g)
	}
	mustFinish(t, st, g[0], notify.Outcome{Status: notify.StatusSent})
	mustClaim(t, st, notify.ClaimBatch{Now: now, Resolve: []notify.Resolve{
		{Key: notify.ClaimKey("sent", "a", sent.EventID), Status: notify.StatusWithheld},
		{Key: notify.ClaimKey("held", "a", held.EventID), Status: notify.StatusSending},
		{Key: uuid.New(), Status: notify.StatusSending}}})
	if got := statuses(t, st); fmt.Sprint(got) != "[held:withheld: sent:sent:]" {
		t.Errorf("after resolving claims no longer pending: %v, want them unchanged", got)
	}
	if gs := mustPick(t, st, "a"); len(gs) != 0 {
		t.Errorf("picked %+v", gs)
	}
	if n, err := st.Prune(t.Context(), time.Now().Add(time.Hour)); err != nil || n != 2 {
		t.Errorf("pruned %d (%v), want the sent and the withheld claim", n, err)
	}
}
