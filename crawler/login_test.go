package crawler

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
)

const loginSite = `
sites:
  - name: club-login
    targets:
      - {id: J21, name: 레이크 CC}
      - {id: J22, name: 힐스 CC}
    days_ahead: 2
    login:
      url: '{{BASE}}/login'
      form: {user_id: '{{.Credentials.user}}', user_pw: '{{.Credentials.password}}', keep: "1"}
      credentials: {user: CLUB_USER, password: CLUB_PASSWORD}
      login_page: {selector: "form#login", statuses: [401]}
    requests:
      - method: POST
        url: '{{BASE}}/ajax/teeList'
        form: {golfResDate: '{{.Date.Format "20060102"}}', courseId: '{{.Target.id}}'}
    row: "tr.slot"
    fields:
      course: {value: '{{.Target.name}}'}
      course_part: {selector: "td.part"}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {selector: "td.time"}
      price: {selector: "td.fee"}
      players: {selector: "td.cnt"}
`

// loginServer is a club site: POST /login sets a session cookie, POST /ajax/teeList answers the
// form_fragment.html rows with a live session and login_page.html without one. A session serves
// perSession requests (0: any number); expired401 makes an expired session answer 401 instead.
type loginServer struct {
	*sourceServer
	mu         sync.Mutex
	password   string
	perSession int
	expired401 bool
	logins     int
	token      string
	left       int
}

func newLoginServer(t *testing.T, password string, perSession int) *loginServer {
	ls := &loginServer{password: password, perSession: perSession}
	ls.sourceServer = newSourceServer(t, func(w http.ResponseWriter, r *http.Request, body string) {
		ls.mu.Lock()
		defer ls.mu.Unlock()
		switch r.URL.Path {
		case "/login":
			if body != fmt.Sprintf("keep=1&user_id=golfer&user_pw=%s", ls.password) {
				_, _ = w.Write(fixture(t, "login_page.html"))
				return
			}
			ls.logins++
			ls.token, ls.left = fmt.Sprintf("t%d", ls.logins), ls.perSession
			http.SetCookie(w, &http.Cookie{Name: "JSESSIONID", Value: ls.token, Path: "/"})
			fmt.Fprint(w, "<p>환영합니다</p>")
		case "/ajax/teeList":
			c, err := r.Cookie("JSESSIONID")
			if err != nil || c.Value != ls.token || ls.token == "" {
				if ls.expired401 {
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				_, _ = w.Write(fixture(t, "login_page.html"))
				return
			}
			if ls.left > 0 {
				if ls.left--; ls.left == 0 {
					ls.token = "" // expired
				}
			}
			_, _ = w.Write(fixture(t, "form_fragment.html"))
		default:
			http.NotFound(w, r)
		}
	})
	return ls
}

func envOf(user, password string) func(string) string {
	return func(k string) string {
		return map[string]string{"CLUB_USER": user, "CLUB_PASSWORD": password}[k]
	}
}

// collectAs runs Collect on site with CLUB_USER and CLUB_PASSWORD set to user and password.
func collectAs(t *testing.T, st *site.Site, deps CollectDeps, user, password string) Result {
	t.Helper()
	deps.Getenv = envOf(user, password)
	res, err := Collect(t.Context(), st, sourcesAt, deps)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestLoginFormPostFixture(t *testing.T) {
	t.Parallel()
	ls := newLoginServer(t, "s3cret-pw", 0)
	site := sourceSite(t, ls.URL, loginSite)
	res := collectAs(t, site, newRecorder().deps(t), "golfer", "s3cret-pw")
	if !res.Complete || res.Pages != 6 || len(res.Listings) != 18 || ls.logins != 1 || res.Relogins != 0 {
		t.Fatalf("complete %v pages %d listings %d logins %d relogins %d failed %v", res.Complete, res.Pages, len(res.Listings), ls.logins, res.Relogins, res.FailedPages)
	}
	// The fragment's rows (06:30, 0714, 12:05:00; 130,000원, 전화문의, 15만원) under the target's name.
	var first []events.Listing
	for _, l := range res.Listings {
		if l.PlayDate == "2026-12-01" && l.CourseName == "레이크 CC" {
			first = append(first, l)
		}
	}
	checkRows(t, first,
		"레이크 CC|IN|2026-12-01|2026-12-01|07:14|<nil>|3",
		"레이크 CC|IN|2026-12-01|2026-12-01|12:05|150000|4",
		"레이크 CC|OUT|2026-12-01|2026-12-01|06:30|130000|4",
	)
	for _, r := range ls.requests() {
		if r.URI == "/ajax/teeList" && (r.ContentType != "application/x-www-form-urlencoded" || !strings.HasPrefix(r.Body, "courseId=J2")) {
			t.Errorf("request %+v", r)
		}
	}
}

// A session that expires mid-crawl costs one fresh login, answered with the login page or with a
// declared 401, and every page still arrives.
func TestLoginExpiresMidCrawl(t *testing.T) {
	t.Parallel()
	for _, with401 := range []bool{false, true} {
		t.Run(fmt.Sprint("401=", with401), func(t *testing.T) {
			t.Parallel()
			ls := newLoginServer(t, "pw", 4)
			ls.expired401 = with401
			st := recompiled(t, sourceSite(t, ls.URL, loginSite), func(s *site.SiteSpec) { s.Politeness.Parallelism = 1 })
			res := collectAs(t, st, newRecorder().deps(t), "golfer", "pw")
			if !res.Complete || res.Pages != 6 || ls.logins != 2 || res.Relogins != 1 {
				t.Fatalf("complete %v pages %d logins %d relogins %d failed %v", res.Complete, res.Pages, ls.logins, res.Relogins, res.FailedPages)
			}
		})
	}
}

// A wrong password fails every page without fetching it (one login attempt, no hammering), and a
// site that keeps answering with its login page after a fresh login fails that page.
func TestLoginWrongPassword(t *testing.T) {
	t.Parallel()
	ls := newLoginServer(t, "right-pw", 0)
	site := sourceSite(t, ls.URL, loginSite)
	deps := newRecorder().deps(t)
	res := collectAs(t, site, deps, "golfer", "wrong-pw")
	if res.Complete || len(res.FailedPages) != 6 || res.Pages != 0 || len(ls.requests()) != 1 {
		t.Fatalf("complete %v failed %d pages %d requests %d", res.Complete, len(res.FailedPages), res.Pages, len(ls.requests()))
	}
	// Unset variables are named, not guessed.
	deps.Getenv = envOf("golfer", "")
	res, _ = Collect(t.Context(), site, sourcesAt, deps)
	if res.Complete || len(res.FailedPages) != 6 {
		t.Fatalf("without a password: complete %v failed %d", res.Complete, len(res.FailedPages))
	}
}

// TestCredentialsNeverInOutput crawls the simulator's login site through the Runner with a wrong
// and then a right password and searches every output for either: the log (debug level), the run's
// error, the events file, the snapshots and the metrics.
func TestCredentialsNeverInOutput(t *testing.T) {
	t.Parallel()
	const wrong, right = "Wr0ng-Pa55word", "R1ght-Pa55word"
	clock := newRunClock(t0)
	sim := sitesim.New(sitesim.Config{Seed: 7, Now: clock.Now, DaysAhead: 2, TeeTimesPerDay: 4, LoginPassword: right, SessionRequests: 8})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	st := shippedSite(t, "sim-club-login", srv.URL, 2)
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	dir := t.TempDir()
	out := openEventLog(t, dir)
	metrics := newTestMetrics(clock.Now)
	var errs []string
	for i, pw := range []string{wrong, right} {
		clock.Set(t0.Add(time.Duration(i) * time.Hour))
		r := &Runner{Sites: []*site.Site{st}, State: StateDir{Dir: filepath.Join(dir, "state")}, Logger: logger,
			EventsOut: out, Metrics: metrics, Now: clock.Now,
			Getenv: func(k string) string {
				return map[string]string{"SIM_CLUB_USER": sitesim.DefaultUser, "SIM_CLUB_PASSWORD": pw}[k]
			}}
		sum, err := r.Run(t.Context())
		if err != nil {
			errs = append(errs, err.Error())
		}
		if s := sum.Sites[0]; (pw == right) != s.Complete || s.Err != nil {
			t.Fatalf("password %d: complete %v err %v", i, s.Complete, s.Err)
		}
	}
	if len(errs) != 1 || sim.Logins() < 2 {
		t.Fatalf("errors %v, logins %d: want the wrong password's crawl to fail and the right one to log in (and again)", errs, sim.Logins())
	}
	rec := httptest.NewRecorder()
	metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	outputs := map[string]string{"log": logs.String(), "errors": strings.Join(errs, "\n"), "metrics": rec.Body.String()}
	_ = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			b, _ := os.ReadFile(p)
			outputs[p] = string(b)
		}
		return nil
	})
	if !strings.Contains(outputs["log"], "are the credentials right?") || !strings.Contains(outputs["log"], "logged in") {
		t.Errorf("the log does not tell the failed and the good login apart:\n%s", outputs["log"])
	}
	for name, text := range outputs {
		for _, secret := range []string{wrong, right} {
			if strings.Contains(text, secret) {
				t.Errorf("%s contains the password %q", name, secret)
			}
		}
	}
	if len(outputs) < 5 {
		t.Errorf("only %d outputs searched: %v", len(outputs), outputs)
	}
}

// dev_defaults: a credential whose variable is unset takes its development default; a variable
// set to another value wins over it; the defaults only load for a login on a loopback host.
func TestLoginDevDefaults(t *testing.T) {
	t.Parallel()
	ls := newLoginServer(t, "dev-pw", 0)
	yml := strings.Replace(loginSite, "      credentials: {user: CLUB_USER, password: CLUB_PASSWORD}\n",
		"      credentials: {user: CLUB_USER, password: CLUB_PASSWORD}\n      dev_defaults: {password: dev-pw}\n", 1)
	st := sourceSite(t, ls.URL, yml)
	if res := collectAs(t, st, newRecorder().deps(t), "golfer", ""); !res.Complete || len(res.Listings) != 18 {
		t.Errorf("CLUB_PASSWORD unset: complete %v, %d listings, failed %v; want the development default used", res.Complete, len(res.Listings), res.FailedPages)
	}
	if res := collectAs(t, st, newRecorder().deps(t), "golfer", "another-pw"); res.Complete || res.Pages != 0 {
		t.Errorf("CLUB_PASSWORD=another-pw: complete %v pages %d; want the variable used (and refused)", res.Complete, res.Pages)
	}
	if got := st.Secrets(envOf("golfer", "")); len(got) != 2 {
		t.Errorf("secrets %d, want the user and the default password (redacted like any secret)", len(got))
	}
	for _, bad := range []string{
		strings.ReplaceAll(yml, "{{BASE}}", "https://club.example.kr"),
		strings.Replace(yml, "dev_defaults: {password: dev-pw}", "dev_defaults: {token: x}", 1),
	} {
		if _, err := site.ParseSites([]byte(strings.ReplaceAll(bad, "{{BASE}}", ls.URL))); err == nil || !strings.Contains(err.Error(), "dev_defaults") {
			t.Errorf("want a dev_defaults error, got %v", err)
		}
	}
}
