package suggest

import (
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
)

// A times request that answers only within the browser's session (a CSRF token bound to a session
// cookie) and names no page it came from: suggest finds nowhere to capture the token from, so the
// entry it prints cannot crawl the page. It must not exit 0: the entry is undecided (Session),
// stderr says why and what to add, and neither the copied token nor its session reaches the
// output.
func TestSuggestSessionWithoutItsSourceExitsTwo(t *testing.T) {
	clock := &simClock{t: simStart}
	sim, srv := simServer(t, clock)
	live := csrfSession(t, srv.URL)
	day := simStart.AddDate(0, 0, 1)
	curl := "curl '" + srv.URL + sitesim.PathCSRFTimes + "' -b '" + sitesim.CSRFCookie + "=" + live["CSRF_SESSION"] + "' " +
		"--data-raw '_csrf=" + live["CSRF_TOKEN"] + "&club=138&date=" + d8(day) + "'"
	sg, stderr := runSuggest(t, curl, Options{Date: day, DaysAhead: crawlDays, Targets: clubTargets(sim), Now: clock.Now})
	if sg.Complete || !sg.Session {
		t.Errorf("complete %v, session %v: want exit 2 for an entry that cannot crawl the page", sg.Complete, sg.Session)
	}
	if !strings.Contains(stderr, "undecided: session: the page answers only within the browser's session (without form _csrf, Cookie it fails: status 403)") ||
		!strings.Contains(stderr, "add a capture: request by hand") {
		t.Errorf("stderr does not say why the entry is undecided and what to add")
	}
	for _, s := range append(sim.IssuedSecrets(), live["CSRF_SESSION"], live["CSRF_TOKEN"]) {
		if strings.Contains(string(sg.YAML), s) || strings.Contains(stderr, s) {
			t.Errorf("the session's %s reached the output or stderr", s)
		}
	}
}
