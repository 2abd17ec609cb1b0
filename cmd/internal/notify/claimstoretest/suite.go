// Package claimstoretest is the shared test suite of notify.ClaimStore implementations: Run
// runs it against one (pgclaims and liteclaims each call it from their tests).
package claimstoretest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
)

// Factory makes stores for the suite: New an empty one, Reopen the same claims as a new process
// would see them after a restart (the old one is not used again).
type Factory struct {
	New    func(t *testing.T) notify.ClaimStore
	Reopen func(t *testing.T, old notify.ClaimStore) notify.ClaimStore
}

// Run runs every case of the suite against f's stores, each in a subtest.
func Run(t *testing.T, f Factory) {
	cases := []struct {
		name string
		fn   func(t *testing.T, f Factory)
	}{
		{"ClaimTwiceClaimsOnce", claimTwiceClaimsOnce},
		{"StaleAndClosedAtClaimTime", staleAndClosedAtClaimTime},
		{"OneGroupPerWatchChannelAndCrawl", oneGroupPerWatchChannelAndCrawl},
		{"SendKeyStableAcrossPicksAndRestart", sendKeyStableAcrossPicksAndRestart},
		{"StatusesAndListFilters", statusesAndListFilters},
		{"FinishedClaimsAreNeverPickedAgain", finishedClaimsAreNeverPickedAgain},
		{"AttemptsCountedAndLostAfterFinish", attemptsCountedAndLostAfterFinish},
		{"RetryWaitsForItsTime", retryWaitsForItsTime},
		{"PickKnowsLaterCloses", pickKnowsLaterCloses},
		{"RetentionDeletesOldSentAndSkipped", retentionDeletesOldSentAndSkipped},
		{"SenderSkipsAtSendTime", senderSkipsAtSendTime},
		{"SenderChatTimeoutIsUnknownOnce", senderChatTimeoutIsUnknownOnce},
		{"SenderChecksBeforeEachAttempt", senderChecksBeforeEachAttempt},
		{"SenderNeverCutsAMessage", senderNeverCutsAMessage},
		{"SplitDecidedOnceAcrossRestart", splitDecidedOnceAcrossRestart},
		{"BacklogOncePerListingLifetime", backlogOncePerListingLifetime},
		{"ResendPutsFailedBack", resendPutsFailedBack},
		{"ChatWatchesAndOffsetSurviveReopen", chatWatchesAndOffsetSurviveReopen},
		{"PendingWaitsForItsResolution", pendingWaitsForItsResolution},
		{"ResolveTouchesOnlyPending", resolveTouchesOnlyPending},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.fn(t, f)
		})
	}
}

// opening is a fresh listing_opened of course in crawl at.
func opening(course, crawl string, at time.Time) *events.Event {
	price, players := int64(100000), 4
	l := events.Listing{Source: "s", CourseName: course, RoundDate: "2026-12-05", PlayDate: "2026-12-05", TeeTime: "07:00",
		Values: events.Values{PriceKRW: &price, Players: &players}}
	e := events.Opened(l, crawl, at)
	return &e
}

func claim(watch, channel string, e *events.Event) notify.Claim {
	return notify.Claim{Key: notify.ClaimKey(watch, channel, e.EventID), Watch: watch, Channel: channel, Event: e}
}

func mustClaim(t *testing.T, st notify.ClaimStore, b notify.ClaimBatch) []notify.Claimed {
	t.Helper()
	if b.Now.IsZero() {
		b.Now = time.Now()
	}
	out, err := st.Claim(t.Context(), b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mustPick(t *testing.T, st notify.ClaimStore, channel string) []notify.Group {
	t.Helper()
	gs, err := st.Pick(t.Context(), &notify.Channel{Name: channel, Type: notify.Webhook}, time.Now(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	return gs
}

func mustFinish(t *testing.T, st notify.ClaimStore, g notify.Group, o notify.Outcome) {
	t.Helper()
	if err := st.Finish(t.Context(), g, o); err != nil {
		t.Fatal(err)
	}
}

func list(t *testing.T, st notify.ClaimStore, f notify.Filter) []notify.Notification {
	t.Helper()
	ns, err := st.List(t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func claimTwiceClaimsOnce(t *testing.T, f Factory) {
	st := f.New(t)
	now := time.Now()
	a, b := opening("a", "c1", now), opening("b", "c1", now)
	batch := notify.ClaimBatch{Claims: []notify.Claim{claim("w", "ch", a), claim("w", "ch", b), claim("w", "other", a)}}
	if got := mustClaim(t, st, batch); len(got) != 3 {
		t.Fatalf("first claim created %d, want 3: %+v", len(got), got)
	}
	for i := range 2 {
		if got := mustClaim(t, st, batch); len(got) != 0 {
			t.Errorf("claim #%d again created %d, want 0: %+v", i+2, len(got), got)
		}
	}
	if ns := list(t, st, notify.Filter{}); len(ns) != 3 {
		t.Errorf("%d claims listed, want 3", len(ns))
	}
	for _, n := range list(t, st, notify.Filter{}) {
		if n.Status != string(notify.StatusSending) || n.Course == "" || n.EventType != "listing_opened" {
			t.Errorf("listed %+v, want sending with its event's fields", n)
		}
	}
}

func staleAndClosedAtClaimTime(t *testing.T, f Factory) {
	st := f.New(t)
	now := time.Now()
	closedLater, closedBefore := opening("closed-later", "c1", now.Add(-2*time.Minute)), opening("reopened", "c1", now.Add(-time.Minute))
	mustClaim(t, st, notify.ClaimBatch{Closes: []notify.Close{
		{ListingKey: closedLater.ListingKey, At: now.Add(-time.Minute)},
		{ListingKey: closedBefore.ListingKey, At: now.Add(-2 * time.Minute)}}})
	old := opening("old", "c1", now.Add(-31*time.Minute))
	got := mustClaim(t, st, notify.ClaimBatch{Now: now, MaxAge: 30 * time.Minute, Claims: []notify.Claim{
		claim("w", "ch", closedLater), claim("w", "ch", closedBefore), claim("w", "ch", old)}})
	want := map[uuid.UUID]string{
		notify.ClaimKey("w", "ch", closedLater.EventID):  "skipped:closed",
		notify.ClaimKey("w", "ch", closedBefore.EventID): "sending:",
		notify.ClaimKey("w", "ch", old.EventID):          "skipped:stale",
	}
	if len(got) != 3 {
		t.Fatalf("claimed %+v, want 3", got)
	}
	for _, c := range got {
		if s := string(c.Status) + ":" + c.Reason; s != want[c.Key] || c.Channel != "ch" {
			t.Errorf("claim %s: %s on %s, want %s", c.Key, s, c.Channel, want[c.Key])
		}
	}
	if ns := list(t, st, notify.Filter{Status: notify.StatusSkipped}); len(ns) != 2 {
		t.Errorf("%d skipped listed, want 2", len(ns))
	}
}

func oneGroupPerWatchChannelAndCrawl(t *testing.T, f Factory) {
	st := f.New(t)
	now := time.Now()
	var cs []notify.Claim
	for i := range 3 {
		cs = append(cs, claim("w", "a", opening(fmt.Sprint("one-", i), "c1", now)))
	}
	cs = append(cs, claim("w", "a", opening("two", "c2", now)), claim("v", "a", opening("three", "c1", now)),
		claim("w", "b", opening("four", "c1", now)))
	var many []notify.Claim
	for i := range notify.MaxEventsPerMessage + 1 {
		many = append(many, claim("big", "a", opening(fmt.Sprint("big-", i), "c3", now)))
	}
	mustClaim(t, st, notify.ClaimBatch{Claims: append(cs, many...)})
	sizes := map[string][]int{}
	for _, g := range mustPick(t, st, "a") {
		if g.Channel != "a" {
			t.Errorf("group %+v on channel %s", g, g.Channel)
		}
		for _, c := range g.Claims {
			if c.Event.CrawlID != g.CrawlID || c.Attempts != 0 || c.ClaimedAt.IsZero() {
				t.Errorf("group %s/%s holds %+v", g.Watch, g.CrawlID, c)
			}
		}
		sizes[g.Watch+"/"+g.CrawlID] = append(sizes[g.Watch+"/"+g.CrawlID], len(g.Claims))
	}
	want := map[string][]int{"w/c1": {3}, "w/c2": {1}, "v/c1": {1}, "big/c3": {notify.MaxEventsPerMessage, 1}}
	if fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Errorf("groups on a: %v, want %v", sizes, want)
	}
	if gs := mustPick(t, st, "b"); len(gs) != 1 || len(gs[0].Claims) != 1 {
		t.Errorf("groups on b: %+v, want one of one", gs)
	}
}

func keysOf(gs []notify.Group) map[string]uuid.UUID {
	out := map[string]uuid.UUID{}
	for _, g := range gs {
		out[g.Watch+"/"+g.CrawlID] = g.Key
	}
	return out
}

func sendKeyStableAcrossPicksAndRestart(t *testing.T, f Factory) {
	st := f.New(t)
	now := time.Now()
	one := opening("one", "c1", now)
	mustClaim(t, st, notify.ClaimBatch{Claims: []notify.Claim{claim("w", "a", opening("x", "c2", now)),
		claim("w", "a", opening("y", "c2", now)), claim("w", "a", one)}})
	first := keysOf(mustPick(t, st, "a"))
	if first["w/c1"] != notify.ClaimKey("w", "a", one.EventID) {
		t.Errorf("a message of one has key %s, want its claim key", first["w/c1"])
	}
	if len(first) != 2 {
		t.Fatalf("picked %v, want 2 groups", first)
	}
	if again := keysOf(mustPick(t, st, "a")); fmt.Sprint(again) != fmt.Sprint(first) {
		t.Errorf("second pick: %v, first %v", again, first)
	}
	// A later claim of the same watch and crawl goes in a new message; the old one keeps its key.
	mustClaim(t, st, notify.ClaimBatch{Claims: []notify.Claim{claim("w", "a", opening("z", "c2", now))}})
	st = f.Reopen(t, st)
	var after []notify.Group
	for _, g := range mustPick(t, st, "a") {
		if g.Key == first["w/c2"] {
			if len(g.Claims) != 2 {
				t.Errorf("the c2 message after the restart has %d claims, want its 2", len(g.Claims))
			}
		}
		after = append(after, g)
	}
	keys := map[uuid.UUID]bool{}
	for _, g := range after {
		keys[g.Key] = true
	}
	if !keys[first["w/c1"]] || !keys[first["w/c2"]] || len(after) != 3 {
		t.Errorf("after the restart: %d groups %v, want the 2 first keys and a new one", len(after), keys)
	}
}

// finishAll claims one opening per status on channel "a" and finishes each: it returns the
// outcomes by course.
func finishAll(t *testing.T, st notify.ClaimStore) map[string]notify.Outcome {
	now := time.Now()
	outcomes := map[string]notify.Outcome{
		"sent": {Status: notify.StatusSent}, "failed": {Status: notify.StatusFailed, Error: "HTTP 400: no"},
		"unknown": {Status: notify.StatusUnknown, Error: "no answer within 1s"},
		"skipped": {Status: notify.StatusSkipped, Reason: notify.ReasonWatchRemoved}, "sending": {},
	}
	var cs []notify.Claim
	for course := range outcomes {
		cs = append(cs, claim(course, "a", opening(course, "c-"+course, now)))
	}
	mustClaim(t, st, notify.ClaimBatch{Claims: cs})
	for _, g := range mustPick(t, st, "a") {
		if o := outcomes[g.Watch]; o.Status != "" {
			if err := st.Attempt(t.Context(), g, time.Second); err != nil {
				t.Fatal(err)
			}
			mustFinish(t, st, g, o)
		}
	}
	return outcomes
}

func statusesAndListFilters(t *testing.T, f Factory) {
	st := f.New(t)
	outcomes := finishAll(t, st)
	for course, o := range outcomes {
		status := o.Status
		if status == "" {
			status = notify.StatusSending
		}
		ns := list(t, st, notify.Filter{Status: status})
		if len(ns) != 1 || ns[0].Watch != course || ns[0].Error != o.Error || ns[0].Reason != o.Reason {
			t.Errorf("--status %s: %+v, want %s with %q %q", status, ns, course, o.Error, o.Reason)
		}
		if (status == notify.StatusSent) != (len(ns) == 1 && ns[0].SentAt != nil) {
			t.Errorf("%s: sent_at %v", status, ns[0].SentAt)
		}
		if ns := list(t, st, notify.Filter{Watch: course}); len(ns) != 1 || ns[0].Status != string(status) {
			t.Errorf("--watch %s: %+v", course, ns)
		}
	}
	if ns := list(t, st, notify.Filter{Limit: 2}); len(ns) != 2 {
		t.Errorf("limit 2 listed %d", len(ns))
	}
}

func finishedClaimsAreNeverPickedAgain(t *testing.T, f Factory) {
	st := f.New(t)
	finishAll(t, st)
	for i := range 2 {
		if i == 1 {
			st = f.Reopen(t, st)
		}
		gs := mustPick(t, st, "a")
		if len(gs) != 1 || gs[0].Watch != "sending" {
			t.Errorf("pick %d: %+v, want only the claim still sending (unknown, failed, sent, skipped never again)", i, gs)
		}
	}
}

func attemptsCountedAndLostAfterFinish(t *testing.T, f Factory) {
	st := f.New(t)
	mustClaim(t, st, notify.ClaimBatch{Claims: []notify.Claim{claim("w", "a", opening("x", "c1", time.Now()))}})
	g := mustPick(t, st, "a")[0]
	for range 2 {
		if err := st.Attempt(t.Context(), g, time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if ns := list(t, st, notify.Filter{}); ns[0].Attempts != 2 {
		t.Errorf("attempts %d, want 2", ns[0].Attempts)
	}
	if g := mustPick(t, st, "a"); len(g) != 1 || g[0].Claims[0].Attempts != 2 {
		t.Errorf("picked %+v, want attempts 2", g)
	}
	mustFinish(t, st, g, notify.Outcome{Status: notify.StatusSent})
	if err := st.Attempt(t.Context(), g, time.Second); !errors.Is(err, notify.ErrLost) {
		t.Errorf("Attempt after sent: %v, want ErrLost", err)
	}
	mustFinish(t, st, g, notify.Outcome{Status: notify.StatusFailed, Error: "late"}) // no effect
	if ns := list(t, st, notify.Filter{}); ns[0].Status != "sent" {
		t.Errorf("a finished claim was finished again: %+v", ns[0])
	}
}

func retryWaitsForItsTime(t *testing.T, f Factory) {
	st := f.New(t)
	mustClaim(t, st, notify.ClaimBatch{Claims: []notify.Claim{claim("w", "a", opening("x", "c1", time.Now()))}})
	g := mustPick(t, st, "a")[0]
	mustFinish(t, st, g, notify.Outcome{Status: notify.StatusRetry, Error: "HTTP 503: busy", RetryAt: time.Now().Add(time.Hour)})
	if gs := mustPick(t, st, "a"); len(gs) != 0 {
		t.Errorf("picked %+v an hour before its retry", gs)
	}
	if ns := list(t, st, notify.Filter{}); ns[0].Status != "sending" || ns[0].Error != "HTTP 503: busy" {
		t.Errorf("waiting for a retry: %+v", ns[0])
	}
	mustFinish(t, st, g, notify.Outcome{Status: notify.StatusRetry, RetryAt: time.Now().Add(-time.Second)})
	if gs := mustPick(t, st, "a"); len(gs) != 1 || gs[0].Key != g.Key {
		t.Errorf("after its retry time: %+v, want the group with key %s", gs, g.Key)
	}
}

func pickKnowsLaterCloses(t *testing.T, f Factory) {
	st := f.New(t)
	now := time.Now()
	e := opening("x", "c1", now.Add(-time.Minute))
	mustClaim(t, st, notify.ClaimBatch{Claims: []notify.Claim{claim("w", "a", e)}})
	if g := mustPick(t, st, "a"); !g[0].Claims[0].Closed.IsZero() {
		t.Errorf("closed %v before any close", g[0].Claims[0].Closed)
	}
	mustClaim(t, st, notify.ClaimBatch{Closes: []notify.Close{{ListingKey: e.ListingKey, At: now}}})
	if g := mustPick(t, st, "a"); !g[0].Claims[0].Closed.Equal(now.Truncate(time.Microsecond)) &&
		!g[0].Claims[0].Closed.Equal(now) {
		t.Errorf("closed %v, want %v", g[0].Claims[0].Closed, now)
	}
}

func retentionDeletesOldSentAndSkipped(t *testing.T, f Factory) {
	st := f.New(t)
	finishAll(t, st)
	if n, err := st.Prune(t.Context(), time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Errorf("prune of claims older than an hour: %d, %v", n, err)
	}
	n, err := st.Prune(t.Context(), time.Now().Add(time.Hour))
	if err != nil || n != 2 {
		t.Errorf("pruned %d (%v), want sent and skipped", n, err)
	}
	var left []string
	for _, n := range list(t, st, notify.Filter{}) {
		left = append(left, n.Status)
	}
	slices.Sort(left)
	if fmt.Sprint(left) != "[failed sending unknown]" {
		t.Errorf("left %v", left)
	}
}

func eventsOf(es ...*events.Event) []*events.Event { return es }
