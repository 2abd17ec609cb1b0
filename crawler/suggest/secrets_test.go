package suggest

import (
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// A copied request of a Korean JSP/ASP site's kind: session ids, tokens, a
// CSRF token and passwords in the URL's userinfo, its path parameter and query, the headers, the
// cookies, -u and the form body.
const secretsCurl = `curl 'http://golfer:Hunter2pw@HOST/tee;jsessionid=SESSJSID12345?date=2026-12-05&access_token=QTOKEN98765&sid=SIDVAL4242' \
  -H 'Authorization: Bearer AUTHBEARER777' -H 'X-Auth-Key: XAUTHKEY555' -H 'X-Requested-With: XMLHttpRequest' \
  -H 'X-Api-Secret: APISECRET333' -b 'JSESSIONID=COOKIEJS111; remember_me=REMEMBER222' -u 'basicuser:BASICPW999' \
  --data-raw '_csrf=CSRFFORM444&password=FORMPW666&date=2026-12-05&userPwd=USERPWD888'`

var copiedSecrets = []string{"Hunter2pw", "SESSJSID12345", "QTOKEN98765", "SIDVAL4242", "AUTHBEARER777", "XAUTHKEY555",
	"APISECRET333", "COOKIEJS111", "REMEMBER222", "BASICPW999", "CSRFFORM444", "FORMPW666", "USERPWD888"}

// TestSecretsOfTheCopiedRequestNeverReachTheOutput: no secret of the copied
// request reaches the sites file or stderr; each dropped one is named in the "dropped" line; the
// password fields become a login block over credential variables; the fetch as the browser asked
// sends the Authorization curl would (its -H, which wins over -u), the others none.
func TestSecretsOfTheCopiedRequestNeverReachTheOutput(t *testing.T) {
	var (
		mu    sync.Mutex
		auths []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		mu.Unlock()
		fmt.Fprint(w, `<html><body><table id="res"><tr><th>골프장</th><th>시간</th><th>그린피</th></tr>`)
		if r.FormValue("date") == "2026-12-05" {
			fmt.Fprint(w, `<tr class="slot"><td>레이크 CC</td><td>06:30</td><td>130,000원</td></tr><tr class="slot"><td>레이크 CC</td><td>07:00</td><td>140,000원</td></tr>`)
		}
		fmt.Fprint(w, `</table></body></html>`)
	}))
	t.Cleanup(srv.Close)
	curl := strings.ReplaceAll(secretsCurl, "HOST", strings.TrimPrefix(srv.URL, "http://"))
	sg, stderr := runSuggest(t, curl, Options{Date: time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul()), DaysAhead: 1, ProbeEmpty: true, Name: "club"})
	for _, s := range copiedSecrets {
		if strings.Contains(string(sg.YAML), s) {
			t.Errorf("%s reached the sites file", s)
		}
		if strings.Contains(stderr, s) {
			t.Errorf("%s reached stderr", s)
		}
	}
	var dropped string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "dropped from the output") {
			dropped = line
		}
	}
	for _, name := range []string{"path parameter jsessionid", "query access_token", "query sid", "form _csrf", "form password", "form userPwd",
		"Authorization", "Cookie", "X-Api-Secret", "X-Auth-Key"} {
		if !strings.Contains(dropped, name) {
			t.Errorf("the dropped line does not name %s: %q", name, dropped)
		}
	}
	if sg.Complete || !sg.Login || !strings.Contains(string(sg.YAML), "{{.Credentials.password}}") || !strings.Contains(string(sg.YAML), "CLUB_PASSWORD") {
		t.Errorf("the password fields did not become a login block over credential variables (login %v)", sg.Login)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auths) == 0 || auths[0] != "Bearer AUTHBEARER777" {
		t.Errorf("the fetch as the browser asked sent Authorization %q, want the copied one", auths)
	}
	for _, a := range auths {
		if a != "" && a != "Bearer AUTHBEARER777" {
			t.Errorf("a fetch sent Authorization %q", a)
		}
	}
}

// -u user:password (and, without it, the URL's user:password) is a real Basic header, as curl
// sends it, unless an Authorization header is given (curl's -H wins); the URL keeps no userinfo.
func TestParseCurlBasicAuth(t *testing.T) {
	basic := func(up string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(up)) }
	for _, tc := range []struct{ curl, want string }{
		{"curl -u 'basicuser:BASICPW999' 'http://h/tee'", basic("basicuser:BASICPW999")},
		{"curl 'http://golfer:Hunter2pw@h/tee'", basic("golfer:Hunter2pw")},
		{"curl -u 'basicuser:BASICPW999' 'http://golfer:Hunter2pw@h/tee'", basic("basicuser:BASICPW999")},
		{"curl -H 'Authorization: Bearer X1' -u 'basicuser:BASICPW999' 'http://h/tee'", "Bearer X1"},
		{"curl -u 'basicuser:BASICPW999' -H 'Authorization: Bearer X1' 'http://h/tee'", "Bearer X1"},
	} {
		r, err := ParseCurl(tc.curl)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Header.Get("Authorization"); got != tc.want || strings.Contains(r.URL, "@") {
			t.Errorf("%s: Authorization %q, URL %s; want %q and no userinfo", tc.curl, got, r.URL, tc.want)
		}
	}
}

func TestSecretNames(t *testing.T) {
	for _, n := range []string{"sid", "user_sid", "userSid", "SID", "PHPSESSID", "ASPSESSIONIDQAQB", "jsessionid", "pwd", "userPw", "user_pw",
		"passwd", "api_key", "X-Api-Secret", "access_token", "_csrf", "Cookie", "X-Session-Id",
		"signature", "sig", "X-Signature", "X-Client-Signature", "hash", "hashValue", "HMAC", "hmacSha256", "otp", "otpCode", "pin", "PIN_NO", "userPin"} {
		if !isSecretName(n) {
			t.Errorf("%s is not taken for a credential", n)
		}
	}
	for _, n := range []string{"side", "inside", "ymd", "club_code", "book_date", "courseId", "golfResDate", "X-Requested-With", "page", "roundDay", "gc", "power",
		"spin", "pinehurst", "cashier", "signal", "shopping", "courseKey", "keyword"} {
		if isSecretName(n) {
			t.Errorf("%s is taken for a credential", n)
		}
	}
	for _, n := range []string{"X-Access-Key", "X-Client-Key", "X-Api-Key"} {
		if !isSecretHeader(n) {
			t.Errorf("header %s is not taken for a credential", n)
		}
	}
	for _, n := range []string{"X-Requested-With", "Accept", "X-Keyboard"} {
		if isSecretHeader(n) {
			t.Errorf("header %s is taken for a credential", n)
		}
	}
}

// TestSuggestDropsSecrets (review 4, F8): a request signed per request or carrying a one-time
// code: the query's signature, hash, otp and pin and the headers X-Access-Key, X-Signature and
// X-Client-Signature reached the sites file (and the query ones stderr's fetched lines). Each is
// now a credential, named in the dropped line; the names match as whole words, so a name that
// only holds the letters (spin, pinehurst, cashier) stays.
func TestSuggestDropsSecrets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, `<html><body><table id="res"><tr><th>골프장</th><th>시간</th><th>그린피</th></tr>`)
		if r.FormValue("date") == "2026-12-05" {
			fmt.Fprint(w, `<tr class="slot"><td>레이크 CC</td><td>06:30</td><td>130,000원</td></tr><tr class="slot"><td>레이크 CC</td><td>07:00</td><td>140,000원</td></tr>`)
		}
		fmt.Fprint(w, `</table></body></html>`)
	}))
	t.Cleanup(srv.Close)
	curl := "curl '" + srv.URL + "/tee?s=sg&date=2026-12-05&apiKey=AK111&signature=SIG222&hash=HSH333&otp=OTP444&pin=PIN555&spin=1' " +
		"-H 'X-Access-Key: ACC666' -H 'X-Signature: SIG777' -H 'X-Client-Signature: SIGVAL123' -H 'X-Client-Key: CLK888' " +
		"-H 'X-Amz-Security-Token: AMZ888' -H 'Proxy-Authorization: Basic PRX999' -H 'X-Naver-Client-Secret: NAV000'"
	sg, stderr := runSuggest(t, curl, Options{Date: time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul()), DaysAhead: 1, ProbeEmpty: true, Name: "club"})
	for _, s := range []string{"AK111", "SIG222", "HSH333", "OTP444", "PIN555", "ACC666", "SIG777", "SIGVAL123", "CLK888", "AMZ888", "PRX999", "NAV000"} {
		if strings.Contains(string(sg.YAML), s) {
			t.Errorf("%s reached the sites file", s)
		}
		if strings.Contains(stderr, s) {
			t.Errorf("%s reached stderr", s)
		}
	}
	if !strings.Contains(string(sg.YAML), "spin=1") {
		t.Errorf("the query's spin (not a pin) was dropped")
	}
	var dropped string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "dropped from the output") {
			dropped = line
		}
	}
	for _, name := range []string{"query signature", "query hash", "query otp", "query pin", "X-Access-Key", "X-Signature", "X-Client-Signature", "X-Client-Key"} {
		if !strings.Contains(dropped, name) {
			t.Errorf("the dropped line does not name %s: %q", name, dropped)
		}
	}
}

// TestSuggestDropsPersonalIDs (issue 49, item 6): the copied request carries the logged-in
// member's number and phone (msNum, tel2, tel3), and the answer echoes the request. They were
// kept in the entry and printed on stderr. They are left out and named when the entry reads
// the same listings without them; memberType (no id: a whole-word rule) stays.
func TestSuggestDropsPersonalIDs(t *testing.T) {
	srv := teeListServer(t, func(form url.Values) bool { return form.Get("date") == "20261205" })
	curl := "curl '" + srv.URL + "/getTeeList' --data-raw 'coDiv=65&date=20261205&msNum=750010012345&tel1=010&tel2=5512&tel3=7734&memberType=1'"
	sg, stderr := runSuggest(t, curl, Options{Date: time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul()), Name: "club"})
	for _, s := range []string{"750010012345", "5512", "7734"} {
		if strings.Contains(string(sg.YAML), s) || strings.Contains(stderr, s) {
			t.Errorf("%s reached the output or stderr", s)
		}
	}
	if !sg.Complete {
		t.Errorf("not complete: undecided %v, missing %v", sg.Undecided, sg.Missing)
	}
	if !strings.Contains(stderr, "personal: form msNum, form tel1, form tel2, form tel3 left out of the output") {
		t.Errorf("stderr does not name the personal values left out")
	}
	if !strings.Contains(string(sg.YAML), "memberType: \"1\"") {
		t.Errorf("memberType was left out")
	}
}

// TestSuggestNeededPersonalIDBecomesAVariable (issue 49, item 6): when the page needs the golfer's
// own id (its rows answer only for the member's msNum), the id becomes a variable like the login's
// credentials: the entry sends {{.Env.msNum}} and names the environment variable that holds it
// (env: {msNum: CLUB_MS_NUM}), never the value; suggest exits 2 naming the variable, and with it set
// the entry is decided and its crawl reads the rows.
func TestSuggestNeededPersonalIDBecomesAVariable(t *testing.T) {
	const member = "750010012345"
	srv := teeListServer(t, func(form url.Values) bool { return form.Get("msNum") == member && form.Get("date") == "20261205" })
	curl := "curl '" + srv.URL + "/getTeeList' --data-raw 'coDiv=65&date=20261205&msNum=" + member + "'"
	o := Options{Date: time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul()), Name: "club"}
	sg, stderr := runSuggest(t, curl, o)
	if strings.Contains(string(sg.YAML), member) || strings.Contains(stderr, member) {
		t.Errorf("the member number reached the output or stderr")
	}
	if sg.Complete {
		t.Errorf("exit 0 with the member number's variable unset")
	}
	for _, want := range []string{"env:\n      msNum: CLUB_MS_NUM\n", "msNum: '{{.Env.msNum}}'"} {
		if !strings.Contains(string(sg.YAML), want) {
			t.Errorf("the entry lacks %q", want)
		}
	}
	if !strings.Contains(stderr, "set CLUB_MS_NUM") {
		t.Errorf("stderr does not say which variable to set")
	}
	env := map[string]string{"CLUB_MS_NUM": member}
	o.Fetcher.Getenv = func(k string) string { return env[k] }
	sg, stderr = runSuggest(t, curl, o)
	if !sg.Complete || sg.Site == nil {
		t.Fatalf("with CLUB_MS_NUM set: not decided: missing %v, undecided %v", sg.Missing, sg.Undecided)
	}
	if strings.Contains(string(sg.YAML), member) || strings.Contains(stderr, member) {
		t.Errorf("with CLUB_MS_NUM set, the member number reached the output or stderr")
	}
	res, err := crawler.Collect(t.Context(), sg.Site, o.Date.Add(12*time.Hour), crawler.CollectDeps{Logger: testkit.Logger(t, slog.LevelError), Getenv: o.Fetcher.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Listings) != 2 || len(res.FailedPages) > 0 {
		t.Errorf("the entry's crawl read %d listings (failed pages %v), want the 2 the member sees", len(res.Listings), res.FailedPages)
	}
}

// teeListServer is a getTeeList-like form POST answering JSON that echoes the request's own
// parameters (msNum, tel2, memberType), as the club's does, with two tee times when rows says so.
func teeListServer(t *testing.T, rows func(form url.Values) bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprintf(w, `{"msNum":%q,"tel2":%q,"memberType":%q,"rtnCode":"0000","rows":[`, r.PostForm.Get("msNum"), r.PostForm.Get("tel2"), r.PostForm.Get("memberType"))
		if rows(r.PostForm) {
			fmt.Fprint(w, `{"BK_TIME":"0630","GREEN_FEE":"130000"},{"BK_TIME":"0700","GREEN_FEE":"140000"}`)
		}
		fmt.Fprint(w, `]}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}
