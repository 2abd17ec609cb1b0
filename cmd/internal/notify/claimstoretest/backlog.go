package claimstoretest

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
)

// backlogOncePerListingLifetime: a backlog claim (a listing open for 3 days when its watch asked)
// is not stale at claim time, is picked marked Backlog, is skipped closed when a later close is
// stored, and claims nothing when its watch and channel has any claim of the listing's current
// lifetime already (here a change's, under another key); another watch or channel claims it.
func backlogOncePerListingLifetime(t *testing.T, f Factory) {
	st := f.New(t)
	now := time.Now()
	open := opening("open", "c1", now.Add(-72*time.Hour))
	changed := *open
	changed.EventID, changed.EventType, changed.OccurredAt = uuid.New(), events.ListingChanged, now.Add(-time.Minute)
	closed := opening("closed", "c1", now.Add(-72*time.Hour))
	backlog := func(watch, channel string, e *events.Event) notify.Claim {
		c := claim(watch, channel, e)
		c.Backlog = true
		return c
	}
	if got := mustClaim(t, st, notify.ClaimBatch{Now: now, Claims: []notify.Claim{claim("w", "ch", &changed)},
		Closes: []notify.Close{{ListingKey: closed.ListingKey, At: now.Add(-time.Hour)}}}); len(got) != 1 || got[0].Status != notify.StatusSending {
		t.Fatalf("the change's claim: %+v, want sending", got)
	}
	got := mustClaim(t, st, notify.ClaimBatch{Now: now, Claims: []notify.Claim{backlog("w", "ch", open), backlog("w2", "ch", open),
		backlog("w", "other", open), backlog("w", "ch", closed)},
		Fingerprints: []notify.WatchFingerprint{{Watch: "w", Source: "s", Fingerprint: "f1"}}})
	want := map[uuid.UUID]string{
		notify.ClaimKey("w2", "ch", open.EventID):   "sending:",
		notify.ClaimKey("w", "other", open.EventID): "sending:",
		notify.ClaimKey("w", "ch", closed.EventID):  "skipped:closed",
	}
	if len(got) != len(want) {
		t.Fatalf("backlog claims %+v, want %d (w on ch has the listing's change claimed already)", got, len(want))
	}
	for _, c := range got {
		if s := string(c.Status) + ":" + c.Reason; s != want[c.Key] {
			t.Errorf("backlog claim %s: %s, want %s", c.Key, s, want[c.Key])
		}
	}
	for _, g := range mustPick(t, st, "ch") {
		for _, c := range g.Claims {
			if c.Backlog != (g.Watch == "w2") {
				t.Errorf("picked claim of watch %s: Backlog %v", g.Watch, c.Backlog)
			}
		}
	}
}

// resendPutsFailedBack: Resend puts the failed claims of the channels it is given back to sending
// (marked Resend, under the send key they failed with), the unknown ones only when asked, and
// only those of its watch and claimed since its time.
func resendPutsFailedBack(t *testing.T, f Factory) {
	st := f.New(t)
	now := time.Now()
	a, b, c := opening("a", "c1", now), opening("b", "c1", now), opening("c", "c2", now)
	mustClaim(t, st, notify.ClaimBatch{Now: now, Claims: []notify.Claim{claim("w", "ch", a), claim("w", "ch", b), claim("w", "ch", c),
		claim("w", "gone", a)}})
	keys := map[string]uuid.UUID{}
	for _, ch := range []string{"ch", "gone"} {
		for _, g := range mustPick(t, st, ch) {
			keys[ch+g.CrawlID] = g.Key
			o := notify.Outcome{Status: notify.StatusFailed, Error: "403"}
			if g.CrawlID == "c2" {
				o = notify.Outcome{Status: notify.StatusUnknown, Error: "timeout"}
			}
			mustFinish(t, st, g, o)
		}
	}
	resend := func(f notify.ResendFilter) int {
		t.Helper()
		n, err := st.Resend(t.Context(), f)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := resend(notify.ResendFilter{Channels: []string{"ch"}, Watch: "other"}) + resend(notify.ResendFilter{Channels: []string{"ch"}, Since: now.Add(time.Hour)}); n != 0 {
		t.Errorf("resend of another watch, or since a later time: %d, want 0", n)
	}
	if n := resend(notify.ResendFilter{Channels: []string{"ch"}, Since: now.Add(-time.Hour)}); n != 2 {
		t.Fatalf("resend of ch's failed claims: %d, want 2 (not the unknown one, not channel gone's)", n)
	}
	gs := mustPick(t, st, "ch")
	if len(gs) != 1 || gs[0].Key != keys["chc1"] || len(gs[0].Claims) != 2 || !gs[0].Claims[0].Resend {
		t.Fatalf("picked after the resend: %+v, want the failed message again under key %s, marked Resend", gs, keys["chc1"])
	}
	if n := resend(notify.ResendFilter{Channels: []string{"ch"}, IncludeUnknown: true}); n != 1 {
		t.Fatalf("resend with the unknown ones: %d, want 1 (the others are sending)", n)
	}
	if n := len(list(t, st, notify.Filter{Status: notify.StatusFailed})); n != 1 {
		t.Errorf("%d failed left, want 1 (channel gone's)", n)
	}
}
