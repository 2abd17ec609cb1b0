package main

import (
	"bytes"
	"errors"
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
		"레이크&힐스 CC  서코스  2025-12-03", "example \"180,000\": found in greenFeeDC (price)"} {
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
