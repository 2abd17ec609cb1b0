package crawler

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

const envMember = "750010012345"

const envSiteYAML = `
sites:
  - name: member-list
    targets: [{id: "138", name: 레이크 CC}]
    days_ahead: 1
    env: {member: CLUB_MEMBER_NO}
    requests:
      - url: '{{BASE}}/list?memberNo={{.Env.member | urlquery}}&club={{.Target.id}}&date={{.Date.Format "20060102"}}'
    format: json
    json: {rows: rows, success: {path: code, equals: "0000"}}
    fields:
      course: {value: '{{.Target.name}}'}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {path: time}
      price: {path: fee}
`

// A site with an env block sends the golfer's own value from its variable and keeps it a secret:
// the listings' URL drops its parameter, and neither the log (debug) nor the failed pages hold it.
// With the variable unset no page is fetched, each fails naming the variable.
func TestEnvValuesAreSentAndSecret(t *testing.T) {
	t.Parallel()
	srv := newSourceServer(t, func(w http.ResponseWriter, r *http.Request, _ string) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("memberNo") != envMember {
			fmt.Fprint(w, `{"code":"9999","rows":[]}`)
			return
		}
		if r.URL.Query().Get("date") == "20261202" {
			http.Error(w, "busy", http.StatusServiceUnavailable) // a failed page: its key must not hold the value
			return
		}
		fmt.Fprintf(w, `{"code":"0000","memberNo":%q,"rows":[{"time":"0630","fee":"150,000"},{"time":"0707","fee":"160,000"}]}`, envMember)
	})
	st := sourceSite(t, srv.URL, envSiteYAML)
	var logs bytes.Buffer
	deps := newRecorder().deps(t)
	deps.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	deps.Getenv = func(k string) string { return map[string]string{"CLUB_MEMBER_NO": envMember}[k] }
	res, err := Collect(t.Context(), st, sourcesAt, deps)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Listings) != 2 || len(res.FailedPages) != 1 {
		t.Fatalf("%d listings, failed %v; want the 2 of the member's first date and its second date failed", len(res.Listings), res.FailedPages)
	}
	for _, l := range res.Listings {
		if strings.Contains(l.URL, "memberNo") || !strings.Contains(l.URL, "club=138") {
			t.Errorf("listing URL %q: want it without the member number's parameter", l.URL)
		}
	}
	if !strings.Contains(srv.requests()[0].URI, "memberNo="+envMember) {
		t.Errorf("the site was asked %q: want the member number sent", srv.requests()[0].URI)
	}
	for what, text := range map[string]string{"the log": logs.String(), "the failed pages": fmt.Sprint(res.FailedPages)} {
		if strings.Contains(text, envMember) {
			t.Errorf("%s holds the member number:\n%s", what, text)
		}
	}

	unset := newSourceServer(t, func(w http.ResponseWriter, _ *http.Request, _ string) {
		t.Error("a page was fetched without the member number")
	})
	var failures testkit.SyncBuffer
	deps = newRecorder().deps(t)
	deps.Getenv = func(string) string { return "" }
	deps.Logger = slog.New(slog.NewTextHandler(&failures, nil))
	res, err = Collect(t.Context(), sourceSite(t, unset.URL, envSiteYAML), sourcesAt, deps)
	if err != nil {
		t.Fatal(err)
	}
	if res.Complete || len(res.FailedPages) != 2 || !strings.Contains(failures.String(), "environment variable CLUB_MEMBER_NO is not set") {
		t.Errorf("complete %v, failed %v; want both pages failed naming CLUB_MEMBER_NO:\n%s", res.Complete, res.FailedPages, failures.String())
	}
}
