package suggest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
)

// recorder is the transport of a shape's suggest runs: the first run's fetches go to the
// simulator and are recorded; after replay, the same requests get the same answers in the same
// order, so that the run with an example sees exactly what the unedited run saw. A request the
// first run did not make goes to the simulator (and is counted).
type recorder struct {
	mu        sync.Mutex
	base      http.RoundTripper
	answers   map[string][]recorded
	replaying bool
	served    map[string]int
	extra     int
}

type recorded struct {
	status int
	header http.Header
	body   []byte
}

func (r *recorder) replay() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.replaying, r.served = true, map[string]int{}
}

// extras is how many requests since replay the first run had not made.
func (r *recorder) extras() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.extra
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, err
		}
		req.Body.Close()
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	key := req.Method + " " + req.URL.String() + " " + string(body)
	r.mu.Lock()
	if r.replaying {
		if got := r.answers[key]; len(got) > 0 {
			a := got[min(r.served[key], len(got)-1)]
			r.served[key]++
			r.mu.Unlock()
			return a.response(req), nil
		}
		r.extra++
	}
	r.mu.Unlock()
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	a := recorded{status: resp.StatusCode, header: resp.Header.Clone(), body: b}
	r.mu.Lock()
	if !r.replaying {
		if r.answers == nil {
			r.answers = map[string][]recorded{}
		}
		r.answers[key] = append(r.answers[key], a)
	}
	r.mu.Unlock()
	return a.response(req), nil
}

func (a recorded) response(req *http.Request) *http.Response {
	return &http.Response{StatusCode: a.status, Status: fmt.Sprintf("%d %s", a.status, http.StatusText(a.status)),
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: a.header.Clone(), Request: req,
		Body: io.NopCloser(bytes.NewReader(a.body)), ContentLength: int64(len(a.body))}
}

// parsing is the spec without what a crawl of the simulator does not depend on: its requests'
// headers, and the server's address (base) in its URLs.
func parsing(spec site.SiteSpec, base string) site.SiteSpec {
	fix := func(u string) string { return strings.ReplaceAll(u, base, "BASE") }
	spec.URLTemplate = fix(spec.URLTemplate)
	spec.StartURLs = slices.Clone(spec.StartURLs)
	for i := range spec.StartURLs {
		spec.StartURLs[i] = fix(spec.StartURLs[i])
	}
	spec.Requests = slices.Clone(spec.Requests)
	for i := range spec.Requests {
		spec.Requests[i].Headers, spec.Requests[i].URL = nil, fix(spec.Requests[i].URL)
	}
	if spec.Login != nil {
		l := *spec.Login
		l.URL = fix(l.URL)
		spec.Login = &l
	}
	return spec
}

// loginCookie logs in to the simulator as the golfer's browser did and returns its session
// cookie, name=value.
func loginCookie(t testing.TB, base string) string {
	t.Helper()
	resp, err := http.PostForm(base+sitesim.PathLogin, map[string][]string{"user_id": {sitesim.DefaultUser}, "user_pw": {simPassword}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == sitesim.SessionCookie {
			return c.Value
		}
	}
	t.Fatal("the login set no session cookie")
	return ""
}

// credentialsEnv sets the login block's credential variables: the password field's to the
// simulator's password, any other to its user.
func credentialsEnv(t testing.TB, st *site.Site) func(string) string {
	t.Helper()
	if st.Login == nil || len(st.Login.Credentials) == 0 {
		t.Fatalf("the entry has no login block with credential variables: %+v", st.Login)
	}
	env := map[string]string{}
	for field, name := range st.Login.Credentials {
		v := sitesim.DefaultUser
		if strings.Contains(field, "pw") || strings.Contains(field, "pass") {
			v = simPassword
		}
		env[name] = v
	}
	return func(k string) string { return env[k] }
}

// checkProblem runs the crawler's check (site.CheckSites, the code of `crawler check`) on the
// suggested sites file; "" when it is valid with no warning and no credential variable unset.
func checkProblem(t testing.TB, yaml []byte, getenv func(string) string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sites.yaml")
	if err := os.WriteFile(path, yaml, 0o600); err != nil {
		t.Fatal(err)
	}
	checks, err := site.CheckSites(path, getenv)
	switch {
	case err != nil:
		return err.Error()
	case len(checks) != 1:
		return fmt.Sprintf("check found %d sites, want 1", len(checks))
	}
	c := checks[0]
	if c.Err != nil || len(c.Warnings) > 0 || len(c.MissingEnv) > 0 {
		return fmt.Sprintf("error %v, warnings %q, unset variables %v", c.Err, c.Warnings, c.MissingEnv)
	}
	return ""
}
