package main

import (
	"net/url"
	"testing"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// atClock returns dbURL with the session setting golf.now (views/lifetimes_clock.sql) set to clock
// for every connection (a startup parameter), so that the open listings' lifetimes and the
// expiries do not depend on the day the test runs.
func atClock(t *testing.T, dbURL, clock string) string {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("golf.now", clock)
	u.RawQuery = q.Encode()
	return u.String()
}

// TestLifetimesOutputsMatchTheirGoldens runs `lifetimes` in every output format over the seed
// history (as of four days after it) and the practice set (as of its last evening), and compares each output byte for byte with
// testdata/goldens/lifetimes (UPDATE_GOLDENS=1 rewrites them): a change of the read model must not
// change what the command prints.
func TestLifetimesOutputsMatchTheirGoldens(t *testing.T) {
	t.Parallel()
	seedEnv := map[string]string{"DATABASE_URL": atClock(t, seed(t), "2026-05-01T12:00:00+09:00")}
	practiceEnv := map[string]string{"DATABASE_URL": atClock(t, practiceDatabase(t), "2026-04-21T23:59:00+09:00")}
	week := []string{"--from", "2026-04-19", "--to", "2026-04-21"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"seed.txt", seedEnv, nil},
		{"seed-utc.txt", seedEnv, []string{"--tz", "UTC"}},
		{"seed.json", seedEnv, []string{"--json"}},
		{"seed.csv", seedEnv, []string{"--csv"}},
		{"seed-summary.txt", seedEnv, []string{"--summary"}},
		{"seed-summary.json", seedEnv, []string{"--summary", "--json"}},
		{"seed-summary.csv", seedEnv, []string{"--summary", "--csv"}},
		{"practice-week.txt", practiceEnv, week},
		{"practice-week.json", practiceEnv, append([]string{"--json"}, week...)},
		{"practice-week.csv", practiceEnv, append([]string{"--csv"}, week...)},
		{"practice-summary.txt", practiceEnv, []string{"--summary"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, err := runCLI(t, t.Context(), tc.env, append([]string{"lifetimes"}, tc.args...)...)
			if err != nil {
				t.Fatalf("lifetimes %v: %v\n%s", tc.args, err, stderr)
			}
			testkit.Golden(t, "testdata/goldens/lifetimes/"+tc.name, []byte(out))
		})
	}
}
