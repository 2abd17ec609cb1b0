package suggest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A page robots.txt disallows is never fetched: the suggestion fails and says why.
func TestSuggestObeysRobotsTxt(t *testing.T) {
	var fetched atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /tee\n")
			return
		}
		fetched.Add(1)
		fmt.Fprint(w, `{"list":[{"t":"06:30","p":"130,000"}]}`)
	}))
	t.Cleanup(srv.Close)
	req, err := ParseCurl("curl '" + srv.URL + "/tee?date=2026-12-05'")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Suggest(t.Context(), Options{Request: req, Fetcher: testFetcher(t)})
	if err == nil || !strings.Contains(err.Error(), "robots.txt") {
		t.Errorf("err %v; want a refusal by robots.txt", err)
	}
	if n := fetched.Load(); n != 0 {
		t.Errorf("the disallowed page was fetched %d times", n)
	}
}

// An answer without anything like tee times is a partial suggestion that says so, not an error.
func TestSuggestWithoutRows(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, `<html><body><ul class="news"><li>공지 12/05</li><li>휴장 안내</li></ul></body></html>`)
	}))
	t.Cleanup(srv.Close)
	req, _ := ParseCurl("curl '" + srv.URL + "/notice?d=20261205'")
	var said []string
	sg, err := Suggest(t.Context(), Options{Request: req, Fetcher: testFetcher(t), Examples: []string{"휴장", "06:30"},
		Say: func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatalf("err %v", err)
	}
	all := strings.Join(said, "\n")
	if sg.Complete || len(sg.Missing) == 0 || !strings.Contains(all, "no repeated element of the HTML answer holds tee times") {
		t.Errorf("complete %v missing %v; said:\n%s", sg.Complete, sg.Missing, all)
	}
	// Every --example is answered, also when no rows were found (they were ignored without a word).
	if !strings.Contains(all, `example "휴장": in the answer, but in no repeated element`) || !strings.Contains(all, `example "06:30": not in the answer`) {
		t.Errorf("the examples are not each said found or not found:\n%s", all)
	}
}

// A page that shows its rows only with the browser's cookie, and no login form without it: the
// suggestion says the crawl needs the session and, with no value of it a request could capture,
// is not decided (Session); the cookie still never reaches the output.
func TestSuggestSaysASessionIsNeeded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("sid"); err != nil || c.Value != "live-session" {
			fmt.Fprint(w, `{"result":"0000","list":[]}`)
			return
		}
		fmt.Fprint(w, `{"result":"0000","list":[{"tm":"06:30","fee":"130,000"},{"tm":"06:38","fee":"130,000"}]}`)
	}))
	t.Cleanup(srv.Close)
	req, _ := ParseCurl("curl '" + srv.URL + "/list?d=20261205' -b 'sid=live-session'")
	var said []string
	sg, err := Suggest(t.Context(), Options{Request: req, Fetcher: testFetcher(t), ProbeEmpty: false, Name: "club",
		Say: func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(said, "\n")
	if !strings.Contains(all, "shows no tee times: it needs the browser's session") || strings.Contains(string(sg.YAML), "live-session") ||
		!strings.Contains(all, "the copied request carries it only in its cookies or headers") || sg.Complete || !sg.Session {
		t.Errorf("said:\n%s\noutput:\n%s", all, sg.YAML)
	}
}
