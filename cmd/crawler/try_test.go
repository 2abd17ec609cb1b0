package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

func TestTryPrintsListingsAndRejectedRows(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST)
	sim := sitesim.New(sitesim.Config{Seed: 3, Now: func() time.Time { return at }, BadRowRate: 0.5})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	sites := testkit.WriteTemp(t, "sites.yaml", devSites(t, srv.URL))
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"try", "--sites", sites, "--site", "sim-api-post", "--date", "2025-12-03", "--target", "레이크&힐스 CC", "--dump"},
		env(nil), &stdout, &stderr)
	out := stdout.String()
	if err != nil {
		t.Fatalf("try: %v\n%s\n%s", err, out, stderr.String())
	}
	for _, want := range []string{
		`== POST ` + srv.URL + `/api/v2/teetime/list {"clubId":"138","date":"20251203"}`,
		"course", "레이크&힐스 CC  서코스  2025-12-03  2025-12-03  06:00     180000  4",
		"rejected (bad_tee_time)", `raw: course="레이크&힐스 CC"`,
		"--- raw response", `"bookTime":"`,
		"sim-api-post on 2025-12-03: 1 page(s)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// The HTML site of start pages and next links is reported page by page too.
	stdout.Reset()
	if err := run(t.Context(), []string{"try", "--sites", sites, "--site", "sim-golf", "--date", "2025-12-03"}, env(nil), &stdout, &stderr); err != nil {
		t.Fatalf("try sim-golf: %v\n%s", err, stdout.String())
	}
	for _, want := range []string{"== " + srv.URL + "/tee?date=20251203&page=1\n   status 200: ", "== " + srv.URL + "/tee?date=20251203&page=2\n",
		"course", "2025-12-03  12/03(수)", "sim-golf on 2025-12-03: "} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	// An unknown target is named with the choices.
	err = run(t.Context(), []string{"try", "--sites", sites, "--site", "sim-api-post", "--target", "999"}, env(nil), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), `no target of site sim-api-post matches "999"; targets: 0 {id=137, name=파인힐스 CC}`) {
		t.Errorf("unknown target: %v", err)
	}
}

// `crawler try --dump` with a wrong and a right password: neither appears in any output.
func TestTryNeverPrintsCredentials(t *testing.T) {
	t.Parallel()
	const wrong, right = "try-Wr0ng-pw", "try-R1ght-pw"
	at := time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST)
	sim := sitesim.New(sitesim.Config{Seed: 3, Now: func() time.Time { return at }, LoginPassword: right})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	sites := testkit.WriteTemp(t, "sites.yaml", devSites(t, srv.URL))
	for _, pw := range []string{wrong, right} {
		var stdout, stderr bytes.Buffer
		e := env(map[string]string{"SIM_CLUB_USER": "golfer", "SIM_CLUB_PASSWORD": pw, "LOG_LEVEL": "debug"})
		err := run(t.Context(), []string{"try", "--sites", sites, "--site", "sim-club-login", "--date", "2025-12-02", "--dump"}, e, &stdout, &stderr)
		if (pw == right) != (err == nil) {
			t.Fatalf("password %s: err %v\n%s\n%s", pw, err, stdout.String(), stderr.String())
		}
		all := stdout.String() + stderr.String()
		if err != nil {
			all += err.Error()
		}
		if pw == right && !strings.Contains(stdout.String(), "파인힐스 CC") {
			t.Errorf("no listings:\n%s", stdout.String())
		}
		if pw == wrong && !strings.Contains(all, "are the credentials right?") {
			t.Errorf("the wrong password is not explained:\n%s", all)
		}
		for _, secret := range []string{wrong, right} {
			if strings.Contains(all, secret) {
				t.Errorf("password %s: the output contains %q:\n%s", pw, secret, all)
			}
		}
	}
}

func TestCheckSites(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	shipped := filepath.Join("..", "..", "compose", "dev", "sites.yaml")
	if err := run(t.Context(), []string{"check", "--sites", shipped}, env(nil), &stdout, &stderr); err != nil {
		t.Fatalf("check: %v\n%s", err, stdout.String())
	}
	for _, want := range []string{"ok    sim-golf: html, url_template x 15 day(s)",
		"ok    sim-api-post: json, 1 request(s) x 4 target(s) x 7 day(s) = 28 requests a crawl",
		"ok    sim-club-login: html, 1 request(s) x 4 target(s) x 7 day(s) = 28 requests a crawl, login http://127.0.0.1:8089/club/login\n" +
			`      warning: no list selector can be derived from row "tr.slot"`} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	// The dev file's development login needs no variable; the Docker file's does.
	if got := strings.Count(stdout.String(), "warning:"); got != 1 {
		t.Errorf("%d warnings for the dev file, want the one about sim-club-login's list:\n%s", got, stdout.String())
	}
	stdout.Reset()
	app := filepath.Join("..", "..", "compose", "app", "sites.yaml")
	if err := run(t.Context(), []string{"check", "--sites", app}, env(nil), &stdout, &stderr); err != nil ||
		!strings.Contains(stdout.String(), "warning: the variables of its login or env block are not set here: SIM_CLUB_PASSWORD, SIM_CLUB_USER") {
		t.Errorf("check %s: %v, want the login's variables warned about:\n%s", app, err, stdout.String())
	}
	bad := testkit.WriteTemp(t, "bad.yaml", `
sites:
  - name: a
    requests: [{url: "http://x.kr/{{.Target.nope}}"}]
    targets: [{id: 1}]
    row: tr
    fields: {course: {selector: td}, round_date: {value: "{{.Date.Format \"2006-01-02\"}}"}, tee_time: {selector: td}}
  - name: b
    requests: [{url: "http://x.kr/"}]
    format: json
    json: {rows: "list..x"}
    fields: {course: {path: c}, round_date: {path: d}, tee_time: {path: t}}
  - name: c
    requests: [{url: "http://x.kr/"}]
    row: tr
    fields: {course: {selector: "td["}, round_date: {selector: td}, tee_time: {selector: td}}
  - name: d
    requests: [{url: "http://x.kr/"}]
    row: tr
    fields: {course: {selector: td}, round_date: {selector: td}}
`)
	stdout.Reset()
	err := run(t.Context(), []string{"check", "--sites", bad}, env(nil), &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "4 of 4 site(s)") {
		t.Fatalf("check of a bad file: %v", err)
	}
	for _, want := range []string{`site "a": requests do not expand`, `map has no entry for key "nope"`,
		`site "b": json: rows path "list..x": empty component`, `line 16: site "c": fields.course selector "td[" is invalid`,
		`site "d": fields.tee_time needs a selector, attr, path or value`} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
}

// `crawler try` on the simulator's EUC-KR page, which declares its charset only in <meta>, shows
// the course names as a browser does; forced to read it as UTF-8 (charset: utf-8), the page fails
// as undecodable and shows no garbage listing.
func TestTryShowsNamesOfAnEUCKRPage(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST)
	sim := sitesim.New(sitesim.Config{Seed: 3, Now: func() time.Time { return at }})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	polite := "    politeness: {no_delay: true, ignore_robots_txt: true}\n"
	sites := testkit.WriteTemp(t, "sites.yaml", "sites:\n"+sitesim.EUCKRSite("euc-meta", srv.URL)+polite+
		sitesim.EUCKRSite("euc-forced-utf8", srv.URL)+polite+"    charset: utf-8\n")
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"try", "--sites", sites, "--site", "euc-meta", "--date", "2025-12-02", "--dump"}, env(nil), &stdout, &stderr); err != nil {
		t.Fatalf("try: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"파인힐스 CC", "원", `<meta http-equiv="Content-Type" content="text/html; charset=euc-kr">`, "기준 시각"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsRune(out, '\ufffd') || strings.Contains(out, "rejected (") {
		t.Errorf("output has U+FFFD or rejected rows:\n%s", out)
	}
	stdout.Reset()
	err := run(t.Context(), []string{"try", "--sites", sites, "--site", "euc-forced-utf8", "--date", "2025-12-02"}, env(nil), &stdout, &stderr)
	out = stdout.String()
	if err == nil || !strings.Contains(out, "undecodable") || strings.Contains(out, "파인힐스 CC ") {
		t.Errorf("forced UTF-8: err %v, want the page failed as undecodable:\n%s", err, out)
	}
}

// `crawler try` names a date that answers not_open, and `crawler check` describes the key.
func TestTryNamesANotOpenDate(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		fmt.Fprint(w, `<script>alert('예약 가능한 일자가 아닙니다.');history.back();</script>`)
	}))
	t.Cleanup(srv.Close)
	sites := testkit.WriteTemp(t, "sites.yaml", `
sites:
  - name: club
    requests:
      - url: '`+srv.URL+`/list.asp?book_date={{.Date.Format "20060102"}}'
    not_open: {contains: "예약 가능한 일자가 아닙니다"}
    row: "#resList tr.res"
    fields:
      course: {value: "레이크 CC"}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {selector: "td:nth-child(1)"}
`)
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"try", "--sites", sites, "--site", "club", "--date", "2026-12-20"}, env(nil), &stdout, &stderr); err != nil {
		t.Fatalf("try: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if out := stdout.String(); !strings.Contains(out, "status 200: the date is not open for booking yet (not_open holds)") ||
		!strings.Contains(out, "0 page(s) failed") {
		t.Errorf("try does not name the not-open date:\n%s", out)
	}
	stdout.Reset()
	if err := run(t.Context(), []string{"check", "--sites", sites}, env(nil), &stdout, &stderr); err != nil {
		t.Fatalf("check: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String()+stderr.String(), "a date not open yet (not_open) opens and closes nothing") {
		t.Errorf("check does not describe not_open:\n%s%s", stdout.String(), stderr.String())
	}
}
