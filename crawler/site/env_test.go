package site

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// envSite is langSite's JSON API sending the member number from the env block.
var envSite = strings.Replace(langSite(FormatJSON, "      - method: POST\n        url: 'https://x.kr/t'\n"+
	"        form: {msNum: '{{.Env.msNum}}', d: '{{.Date.Format \"20060102\"}}'}\n", langTime),
	"    requests:\n", "    env: {msNum: CLUB_MS_NUM}\n    requests:\n", 1)

// The env block (values of the golfer's own the requests send, such as a member number): a
// request's key shows *** for them, crawler check names the unset variable, Secrets has the value,
// and every misuse is an error that names the line.
func TestEnvBlock(t *testing.T) {
	t.Parallel()
	sites, err := ParseSites([]byte(envSite))
	if err != nil {
		t.Fatal(err)
	}
	st := sites[0]
	reqs, sets, err := st.PageRequests(time.Date(2026, 12, 5, 9, 0, 0, 0, Seoul()))
	if err != nil {
		t.Fatal(err)
	}
	if got := reqs[0].Key(); got != "POST https://x.kr/t d=20261205&msNum=%2A%2A%2A" {
		t.Errorf("key %q: want the member number shown as ***", got)
	}
	vars := sets[0]
	vars.Env = map[string]string{"msNum": "750010012345"}
	real, err := st.Expand(0, vars)
	if err != nil {
		t.Fatal(err)
	}
	if string(real.Body) != "d=20261205&msNum=750010012345" || strings.Contains(real.Key(), "750010012345") {
		t.Errorf("expanded with the value: body %q, key %q; want the value sent and the key without it", real.Body, real.Key())
	}
	getenv := func(k string) string { return map[string]string{"CLUB_MS_NUM": "750010012345"}[k] }
	if got := st.Secrets(getenv); !slices.Equal(got, []string{"750010012345"}) {
		t.Errorf("secrets %q, want the member number", got)
	}
	path := filepath.Join(t.TempDir(), "sites.yaml")
	if err := os.WriteFile(path, []byte(envSite), 0o600); err != nil {
		t.Fatal(err)
	}
	checks, err := CheckSites(path, func(string) string { return "" })
	if err != nil || len(checks) != 1 || !slices.Equal(checks[0].MissingEnv, []string{"CLUB_MS_NUM"}) {
		t.Errorf("check: %v, %+v; want CLUB_MS_NUM named unset", err, checks)
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"a value for a variable", strings.Replace(envSite, "msNum: CLUB_MS_NUM", "msNum: '750010012345'", 1),
			"line 4: site \"s\": env.msNum must name an environment variable (letters, digits, _), not hold a value"},
		{"a name no template reads", strings.Replace(envSite, "{msNum: CLUB_MS_NUM}", "{ms-num: CLUB_MS_NUM}", 1),
			"line 4: site \"s\": env.ms-num: a name is letters, digits and _"},
		{"an undeclared name", strings.Replace(envSite, "{{.Env.msNum}}", "{{.Env.memberNo}}", 1),
			"map has no entry for key \"memberNo\""},
		{"env as a field", strings.Replace(envSite, langTime, langTime+"      players: {value: '{{.Env.msNum}}'}\n", 1),
			"fields.players: value reads an env value, the golfer's own and a secret: it never goes into a listing"},
		{"env without requests", "sites:\n  - name: s\n    env: {msNum: CLUB_MS_NUM}\n    url_template: 'https://x.kr/t?d={{.Date.Format \"20060102\"}}'\n" +
			"    row: tr\n    fields:\n      course: {value: 클럽}\n      round_date: {value: '{{.Date.Format \"2006-01-02\"}}'}\n      tee_time: {selector: td}\n",
			"env is read by requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSites([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant one containing:\n%s", err, tc.want)
			}
		})
	}
}
