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
	commands := testkit.WriteTemp(t, "watches.yaml", "channels:\n  tg: {type: telegram, token_env: SLACK_URL, chat_id: \"-100\", commands: true, allow_from: [7, 8]}\n"+
		"  hook: {type: webhook, url: \"http://127.0.0.1:1/x\"}\nwatches:\n  - name: a\n    channels: [hook]\n")
	secret := "https://hooks.slack.com/services/T0/B0/sEcReTtOkEn"
	for _, tc := range []struct {
		name, file string
		wantErr    bool
		want       []string
	}{
		{"bad", bad, true, []string{"line 10:", "line 13:", `weekday "xyz"`}},
		{"ftp", ftp, true, []string{"line 4:", `channel "hook": the URL's scheme is "ftp"`}},
		{"good", good, false, []string{"ok    watches", "2 watch(es) (1 muted)", "slack", "commands from the chat: none (no channel has commands: true)"}},
		{"commands", commands, false, []string{"2 channel(s) in use: hook, tg",
			"commands from the chat: tg (chat_id -100; in a group only from allow_from 7, 8): one process polls each bot"}},
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

// TestCheckPrintsNextCrawlTimes: `crawler check --from T` prints each site's next five crawl
// times: a site of its own (a burst around its time) and one on the global --schedule; a jitter
// longer than half the global interval fails the site that has it.
func TestCheckPrintsNextCrawlTimes(t *testing.T) {
	t.Parallel()
	site := func(name, keys string) string {
		return "  - name: " + name + "\n    start_urls: [\"https://golf.example.kr/" + name + "\"]\n    row: \"table tr.row\"\n" + keys +
			"    fields:\n      course: {selector: \"td.c\"}\n      round_date: {selector: \"td.d\"}\n      tee_time: {selector: \"td.t\"}\n"
	}
	good := testkit.WriteTemp(t, "sites.yaml", "sites:\n"+
		site("own", "    schedule: \"*/10 * * * *\"\n    active_hours: \"05:00-23:00\"\n    burst: [{at: \"MON 09:00\", every: 30s, for: 10m}]\n")+
		site("global", "    active_hours: \"05:00-23:00\"\n"))
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"check", "--sites", good, "--schedule", "0 * * * *", "--from", "2026-03-09T08:59:00+09:00"},
		env(nil), &out, &errOut); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	for _, w := range []string{
		`schedule "*/10 * * * *" (own, every 10m0s at the shortest), active 05:00-23:00, burst MON 09:00 every 30s for 10m0s): ` +
			"2026-03-09 09:00:00, 2026-03-09 09:00:30, 2026-03-09 09:01:00, 2026-03-09 09:01:30, 2026-03-09 09:02:00\n",
		`schedule "0 * * * *" (global, every 1h0m0s at the shortest), active 05:00-23:00): ` +
			"2026-03-09 09:00:00, 2026-03-09 10:00:00, 2026-03-09 11:00:00, 2026-03-09 12:00:00, 2026-03-09 13:00:00\n",
	} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
	bad := testkit.WriteTemp(t, "sites.yaml", "sites:\n"+site("jittery", "    jitter: 6m\n"))
	out.Reset()
	err := run(t.Context(), []string{"check", "--sites", bad}, env(nil), &out, &errOut)
	if err == nil || !strings.Contains(out.String(), "FAIL  site \"jittery\": jitter 6m0s is more than half the schedule's interval") {
		t.Errorf("err %v, output:\n%s", err, out.String())
	}
}

// neverSites are review 4's F6 sites: schedules that never fire inside their active hours, and
// one crawled once a month.
func neverSites(t *testing.T) string {
	t.Helper()
	site := func(name, keys string) string {
		return "  - name: " + name + "\n    start_urls: [\"https://golf.example.kr/" + name + "\"]\n    row: \"table tr.row\"\n" + keys +
			"    fields:\n      course: {selector: \"td.c\"}\n      round_date: {selector: \"td.d\"}\n      tee_time: {selector: \"td.t\"}\n"
	}
	return testkit.WriteTemp(t, "sites.yaml", "sites:\n"+
		site("never", "    schedule: \"0 3 * * *\"\n    active_hours: \"05:00-23:00\"\n")+
		site("never2", "    schedule: \"30 4 * * 1-5\"\n    active_hours: \"22:00-04:00\"\n")+
		site("monthly", "    schedule: \"0 9 1 * *\"\n")+
		site("fine", "    schedule: \"0 9 * * 1\"\n    active_hours: \"05:00-23:00\"\n"))
}

// TestCheckRefusesScheduleThatNeverFires (review 4, F6): `crawler check` fails a site whose
// schedule never fires inside its active hours, naming the site and both keys, and one whose
// crawls are more than 8 days apart; a weekly site passes.
func TestCheckRefusesScheduleThatNeverFires(t *testing.T) {
	t.Parallel()
	var out, errOut bytes.Buffer
	err := run(t.Context(), []string{"check", "--sites", neverSites(t), "--from", "2026-03-09T08:59:00+09:00"}, env(nil), &out, &errOut)
	if err == nil {
		t.Errorf("crawler check passed:\n%s", out.String())
	}
	for _, w := range []string{
		`FAIL  site "never": schedule "0 3 * * *" never fires inside active_hours 05:00-23:00`,
		`FAIL  site "never2": schedule "30 4 * * 1-5" never fires inside active_hours 22:00-04:00`,
		`FAIL  site "monthly": schedule "0 9 1 * *" leaves`,
		"ok    fine:",
	} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}

// TestCheckPrintsDemand (#51 item 1): `crawler check --sites S --watches W` prints, per site, the
// page sets its watches can match and the requests an hour of the scheduled and the watched
// crawls; a site whose pages are not page sets has none, and a watch naming neither a source nor
// a date or weekday is said to add none.
func TestCheckPrintsDemand(t *testing.T) {
	t.Parallel()
	sites := testkit.WriteTemp(t, "sites.yaml", `sites:
  - name: club
    schedule: "*/20 * * * *"
    watched_budget: 3
    targets: [{id: "1", name: 파인힐스 CC}, {id: "2", name: 오션뷰 골프클럽}]
    days_ahead: 6
    requests:
      - url: 'https://club.example.kr/tee?c={{.Target.id}}&d={{.Date.Format "20060102"}}'
    row: "tr.slot"
    fields:
      course: {value: '{{.Target.name}}'}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {selector: "td.t"}
  - name: plain
    start_urls: ["https://golf.example.kr/list"]
    row: "tr.row"
    fields:
      course: {selector: "td.c"}
      round_date: {selector: "td.d"}
      tee_time: {selector: "td.t"}
`)
	watches := testkit.WriteTemp(t, "watches.yaml", "channels:\n  hook: {type: webhook, url: \"http://127.0.0.1:1/x\"}\n"+
		"watches:\n  - name: sat\n    sources: [club]\n    weekdays: [sat]\n    channels: [hook]\n"+
		"  - name: anywhere\n    courses: [파인]\n    channels: [hook]\n")
	var out, errOut bytes.Buffer
	if err := run(t.Context(), []string{"check", "--sites", sites, "--watches", watches, "--from", "2026-03-09T08:59:00+09:00"},
		env(nil), &out, &errOut); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errOut.String())
	}
	for _, w := range []string{
		"demand: 2 of 14 page set(s) watched (every 1m0s, confirm_after 20s): 2026-03-14 파인힐스 CC, 2026-03-14 오션뷰 골프클럽\n",
		"requests an hour: 36 scheduled, 120 watched (watched_budget 3: at most 126), plus one confirm crawl per opening seen\n",
		"demand: none (its pages are not page sets",
		"1 watch(es) name neither a source nor a date or weekday (or are muted): they add no demand",
	} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out.String())
		}
	}
}
