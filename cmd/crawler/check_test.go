package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestCheckWatches: `crawler check --watches FILE` names every error with its line, exits
// non-zero on an invalid file, checks no sites file unless one is named, and never prints a
// channel's secret.
func TestCheckWatches(t *testing.T) {
	t.Parallel()
	bad := testkit.WriteTemp(t, "watches.yaml", "channels:\n  hook:\n    type: webhook\n    url: http://127.0.0.1:1/x\n"+
		"  slack:\n    type: slack\n    url_env: SLACK_URL\nwatches:\n  - name: a\n    max_price_krw: abc\n    channels: [hook]\n"+
		"  - name: b\n    weekdays: [xyz]\n    channels: [slack]\n")
	good := testkit.WriteTemp(t, "watches.yaml", "channels:\n  slack:\n    type: slack\n    url_env: SLACK_URL\n"+
		"watches:\n  - name: a\n    channels: [slack]\n  - name: b\n    enabled: false\n    channels: [slack]\n")
	ftp := testkit.WriteTemp(t, "watches.yaml", "channels:\n  hook:\n    type: webhook\n    url: \"ftp://u:sEcReT@127.0.0.1:1/x\"\n"+
		"watches:\n  - name: a\n    channels: [hook]\n")
	secret := "https://hooks.slack.com/services/T0/B0/sEcReTtOkEn"
	for _, tc := range []struct {
		name, file string
		wantErr    bool
		want       []string
	}{
		{"bad", bad, true, []string{"line 10:", "line 13:", `weekday "xyz"`}},
		{"ftp", ftp, true, []string{"line 4:", `channel "hook": the URL's scheme is "ftp"`}},
		{"good", good, false, []string{"ok    watches", "2 watch(es) (1 muted)", "slack"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := run(t.Context(), []string{"check", "--watches", tc.file}, env(map[string]string{"SLACK_URL": secret}), &out, &errOut)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v\n%s", err, tc.wantErr, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			if all := out.String() + errOut.String() + errString(err); strings.Contains(all, "sEcReT") || strings.Contains(all, "sites") {
				t.Errorf("output has the secret or checked a sites file:\n%s", all)
			}
		})
	}
}
