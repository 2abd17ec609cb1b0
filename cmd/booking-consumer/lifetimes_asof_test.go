package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// `lifetimes --csv --as-of T` is the /listings.csv of `serve --as-of T` byte for byte, in both
// forms of T: the CLI reads in the same read-only transaction at the same golf.now clock. Without
// --as-of the CLI answers as of now, where every practice listing has expired: the two differ,
// so the comparison can fail.
func TestLifetimesAsOfIsServeAsOf(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": practiceDatabase(t)}
	for _, asOf := range []string{"2026-04-21", "2026-04-20T18:30:00+09:00"} {
		t.Run(asOf, func(t *testing.T) {
			base := startServe(t, env, "--as-of", asOf)
			resp, err := http.Get(base + "/listings.csv")
			if err != nil {
				t.Fatal(err)
			}
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("/listings.csv: %d\n%s", resp.StatusCode, page)
			}
			cli, stderr, err := runCLI(t, t.Context(), env, "lifetimes", "--csv", "--as-of", asOf)
			if err != nil {
				t.Fatalf("lifetimes --csv --as-of %s: %v\n%s", asOf, err, stderr)
			}
			if string(page) != cli {
				t.Fatalf("/listings.csv of serve --as-of %s (%d bytes) differs from lifetimes --csv --as-of %s (%d bytes)",
					asOf, len(page), asOf, len(cli))
			}
			if n := strings.Count(cli, ",open,"); n == 0 {
				t.Fatalf("as of %s no listing is open: the clock was not applied", asOf)
			}
			now, _, err := runCLI(t, t.Context(), env, "lifetimes", "--csv")
			if err != nil || now == cli {
				t.Fatalf("lifetimes --csv without --as-of equals the as-of answer (err %v): the test cannot tell the clocks apart", err)
			}
		})
	}
}

func TestLifetimesAsOfUsage(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/none"}
	for _, args := range [][]string{{"--as-of", "yesterday"}, {"--as-of", "2026-04-21", "--verify"}, {"--as-of", "2026-04-21", "--rebuild"}} {
		if _, stderr, err := runCLI(t, t.Context(), env, append([]string{"lifetimes"}, args...)...); err == nil || !strings.Contains(stderr+err.Error(), "--as-of") {
			t.Errorf("lifetimes %v: %v, %q; want a usage error naming --as-of", args, err, stderr)
		}
	}
}
