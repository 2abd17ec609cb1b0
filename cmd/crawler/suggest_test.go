package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// `crawler suggest --curl FILE --check` against the simulator: the sites file on stdout passes
// `crawler check`, the reasoning and the listings `try` read are on stderr.
func TestSuggestWritesAnEntryThatChecks(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST)
	srv := httptest.NewServer(sitesim.New(sitesim.Config{Seed: 3, Now: func() time.Time { return at }}))
	t.Cleanup(srv.Close)
	curl := testkit.WriteTemp(t, "req.txt", "curl '"+srv.URL+"/api/v2/teetime/list' \\\n  -H 'content-type: application/json' \\\n"+
		"  -b 'JSESSIONID=secret-cookie' \\\n  --data-raw '{\"clubId\":\"138\",\"date\":\"20251203\"}'\n")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"suggest", "--curl", curl, "--target", "id=137,name=파인힐스 CC", "--target", "id=138,name=레이크&힐스 CC",
		"--name", "my-club", "--days-ahead", "3", "--example", "180,000", "--check"}, env(nil), &stdout, &stderr)
	if err != nil {
		t.Fatalf("suggest: %v\nstderr:\n%s", err, stderr.String())
	}
	for _, want := range []string{"tee_time ← bookTime: ", "date: body.date = 20251203", "dropped from the output", "Cookie",
		"without Cookie the page answers the same", "empty_when ← msg equals \"NO_DATA\"", "check: crawler try --site my-club --date 2025-12-03",
		"레이크&힐스 CC  서코스  2025-12-03", "example \"180,000\": shown by the row(s) of", "compare with the page: the first 3 of the 3 listing(s)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stdout.String(), "secret-cookie") {
		t.Errorf("the cookie reached the sites file:\n%s", stdout.String())
	}
	sites := testkit.WriteTemp(t, "site.yaml", stdout.String())
	var out bytes.Buffer
	if err := run(t.Context(), []string{"check", "--sites", sites}, env(nil), &out, &stderr); err != nil || !strings.Contains(out.String(), "ok    my-club") {
		t.Errorf("check of the suggestion: %v\n%s\n%s", err, out.String(), stdout.String())
	}
}

// A copied request whose session has expired answers with the login page: the entry is partial
// (exit status 2), the login block names the variables to set.
func TestSuggestSaysLoginPage(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 12, 1, 10, 0, 0, 0, sitesim.KST)
	srv := httptest.NewServer(sitesim.New(sitesim.Config{Seed: 3, Now: func() time.Time { return at }, LoginPassword: "pw"}))
	t.Cleanup(srv.Close)
	curl := testkit.WriteTemp(t, "req.txt", "curl '"+srv.URL+"/club/ajax/teeList' -H 'Cookie: SIMSESS=expired' --data 'golfResDate=20251203&courseId=137'")
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"suggest", "--curl", curl, "--name", "club", "--probe-empty=false"}, env(nil), &stdout, &stderr)
	if !errors.Is(err, cli.ErrPartial) {
		t.Fatalf("err %v; want ErrPartial (exit status 2)\n%s", err, stderr.String())
	}
	for _, want := range []string{"login: the page itself is a login page", "CLUB_PASSWORD", "no repeated element"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), "credentials:") || !strings.Contains(stdout.String(), "user_pw: '{{.Credentials.password}}'") {
		t.Errorf("stdout lacks the login block:\n%s", stdout.String())
	}
	// With the block's variables set, the second run logs in itself and finds the rows.
	stdout.Reset()
	stderr.Reset()
	creds := env(map[string]string{"CLUB_USER": sitesim.DefaultUser, "CLUB_PASSWORD": "pw"})
	if err := run(t.Context(), []string{"suggest", "--curl", curl, "--name", "club", "--target", "id=137,name=파인힐스 CC", "--probe-empty=false", "--check"}, creds, &stdout, &stderr); err != nil {
		t.Fatalf("with the credentials set: %v\n%s", err, stderr.String())
	}
	for _, want := range []string{"logged in and fetched the page again", "tee_time ← td.time", "check: 1 page(s), "} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stdout.String()+stderr.String(), "pw\n") || strings.Contains(stdout.String(), "expired") {
		t.Errorf("a secret reached the output")
	}
}

func TestSuggestUsage(t *testing.T) {
	t.Parallel()
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"suggest", "--help"}, env(nil), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-curl", "-date", "-target", "-example", "-name", "-days-ahead", "-probe-empty", "-check", "Copy as cURL", "Exit status 0"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
	for _, args := range [][]string{{"suggest"}, {"suggest", "--curl", "x", "http://h/"}, {"suggest", "--date", "monday", "http://h/"},
		{"suggest", "--target", "nokey", "http://h/"}, {"suggest", "--curl", testkit.WriteTemp(t, "bad.txt", "wget http://h/")}} {
		if err := run(t.Context(), args, env(nil), &stdout, &stderr); !errors.Is(err, cli.ErrUsage) {
			t.Errorf("%q: %v; want a usage error", args, err)
		}
	}
}

// A partial entry shows the way: stderr names the missing cells with the candidates
// seen for each, points to the Sites file section and `crawler try`, and --check says it was
// skipped and why (it crashed on the missing site before).
func TestSuggestPartialShowsTheWay(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<html><body><table class="tbl"><tr><th>시간</th><th>코스</th><th>그린피</th></tr>`+
			`<tr><td>06:30</td><td>동코스</td><td>130,000원</td></tr><tr><td>07:00</td><td>서코스</td><td>140,000원</td></tr></table></body></html>`)
	}))
	t.Cleanup(srv.Close)
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"suggest", "--date", "2026-12-05", "--probe-empty=false", "--check", srv.URL + "/tee?date=20261205"}, env(nil), &stdout, &stderr)
	if !errors.Is(err, cli.ErrPartial) {
		t.Fatalf("err %v; want ErrPartial (exit status 2)\n%s", err, stderr.String())
	}
	for _, want := range []string{"partial: the entry lacks course", "course: candidates seen: td:nth-child(2) (코스 td:nth-child(2)): 동코스, 서코스",
		`see "Sites file" in docs/sites.md`, "crawler try --sites", "check: skipped: the entry is partial (it lacks course)"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// An entry two price columns read alike with other values is undecided: exit status 2, and the
// command to run again is the one given, with --example added; with that example it exits 0.
func TestSuggestUndecidedExitsTwo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprint(w, `{"list":[{"TEE_TIME":"06:30","FEE_A":"150000","FEE_B":"200000"},{"TEE_TIME":"06:37","FEE_A":"160000","FEE_B":"190000"},`+
			`{"TEE_TIME":"06:44","FEE_A":"170000","FEE_B":"160000"}]}`)
	}))
	t.Cleanup(srv.Close)
	args := []string{"suggest", "--date", "2026-12-05", "--probe-empty=false", "--name", "lake", srv.URL + "/tee?date=20261205"}
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), args, env(nil), &stdout, &stderr)
	if !errors.Is(err, cli.ErrPartial) || !strings.Contains(err.Error(), "price undecided") {
		t.Fatalf("err %v; want ErrPartial naming price (exit status 2)\n%s", err, stderr.String())
	}
	rerun := "crawler suggest --date 2026-12-05 --probe-empty=false --name lake '" + srv.URL + "/tee?date=20261205' --example '06:30 150000'"
	if !strings.Contains(stderr.String(), rerun) {
		t.Errorf("stderr lacks the command to run again %q:\n%s", rerun, stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if err := run(t.Context(), append(args, "--example", "06:30 200,000원"), env(nil), &stdout, &stderr); err != nil {
		t.Fatalf("with the page's price: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "path: FEE_B") {
		t.Errorf("the example did not bind price to FEE_B:\n%s", stdout.String())
	}
}
