package suggest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/events"
)

// The secrets every copied request of the corpus carries, as a browser's "Copy as cURL" writes
// them: a session cookie, a CSRF header and a bearer token (and in a GET's query a CSRF token). None may reach suggest's output or
// its reasoning.
const (
	corpusSession = "corpusSess7f3a9c"
	corpusCSRF    = "corpusCsrf91b2e4"
	corpusBearer  = "corpusBearer55d0a1"
	// corpusQuery is a CSRF token some pages put in the query of their own XHR.
	corpusQuery = "corpusQuery3c8d2f"
)

// browser is the tail of a Chrome "Copy as cURL (bash)": its usual headers with the corpus's
// secrets among them.
func browser(referer string) string {
	return " \\\n  -H 'accept: */*' \\\n  -H 'accept-language: ko-KR,ko;q=0.9,en-US;q=0.8' \\\n" +
		"  -b '_ga=GA1.1.20261202; JSESSIONID=" + corpusSession + "; _gid=GA1.1.77' \\\n" +
		"  -H 'authorization: Bearer " + corpusBearer + "' \\\n" +
		"  -H 'referer: " + referer + "' \\\n" +
		"  -H 'user-agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' \\\n" +
		"  -H 'x-csrf-token: " + corpusCSRF + "' \\\n  -H 'x-requested-with: XMLHttpRequest'"
}

// corpusShape is one site shape of the corpus: the request a golfer copies, what the shape
// shows of the model, and the outcome the table promises.
type corpusShape struct {
	name   string
	source string // the public repository and file its request and answer shapes came from
	// curl is the copied request for play date day; url, for a GET, the bare URL ("" otherwise).
	curl func(base string, day time.Time) string
	url  func(base string, day time.Time) string
	// clubs are the model's courses the shape shows (nil: every one); players whether it shows
	// the players.
	clubs   []int
	players bool
	cfg     func(*sitesim.Config)
	// noTargets: suggest is given no --target (a page of every club); name: --name.
	noTargets bool
	// oneClub: the page is of one club, whose only target (no id in the request) names it.
	oneClub bool
	// login: the site needs a login; the entry's login block's credential variables are set.
	login bool
	// partial, when set, is exactly what suggest says it could not decide (it exits 2).
	partial string
	// wrong, when set, says how today's suggestion crawls wrong listings: the subtest is skipped
	// with it.
	wrong string
}

func corpusShapes() []corpusShape {
	iso := func(d time.Time) string { return d.Format("2006-01-02") }
	d8 := func(d time.Time) string { return d.Format("20060102") }
	return []corpusShape{
		{name: "teescanner json get", source: "dlfmzlspdh764-svg/golf-fees-pohang-gyeongju-yeongcheon refresh.py",
			players: true,
			url: func(b string, d time.Time) string {
				return b + sitesim.PathTeescanner + "?golfclub_seq=138&roundDay=" + iso(d) + "&orderType="
			}},
		{name: "aggregator json get", source: "dlfmzlspdh764-svg/golf-fees-pohang-gyeongju-yeongcheon refresh.py (parameters renamed)",
			players: true,
			url: func(b string, d time.Time) string {
				return b + sitesim.PathAPIGet + "?club=138&roundDay=" + iso(d)
			}},
		{name: "caddie per row json get", source: "dlfmzlspdh764-svg/golf-fees-pohang-gyeongju-yeongcheon refresh.py (caddie_name)",
			players: true,
			url: func(b string, d time.Time) string {
				return b + sitesim.PathJSONCaddie + "?ccId=139&ymd=" + d8(d)
			}},
		{name: "json post body", source: "the project's own (sources.go)", players: true,
			curl: func(b string, d time.Time) string {
				return "curl '" + b + sitesim.PathAPIPost + "'" + browser(b+"/golf/138") +
					" \\\n  -H 'content-type: application/json' \\\n  --data-raw '{\"clubId\":\"138\",\"date\":\"" + d8(d) + "\"}'"
			}},
		{name: "json mm/dd dates", source: "the project's own (sources_observed.go)", players: true,
			url: func(b string, d time.Time) string {
				return b + sitesim.PathJSONMMDD + "?ccNo=139&playDate=" + d8(d)
			}},
		{name: "controller form post json", source: "jaehyunlee25/teezzim_webview_server script/search_core/allday.js", players: true,
			curl: func(b string, d time.Time) string {
				return "curl '" + b + sitesim.PathReservationController + "'" + browser(b+"/reservation/real.asp") +
					" \\\n  -H 'content-type: application/x-www-form-urlencoded; charset=UTF-8' \\\n" +
					"  --data-raw 'method=getTeeList&coDiv=138&cos=All&part=All&date=" + d8(d) + "'"
			}},
		{name: "ajax html list and sale price", source: "jaehyunlee25/teezzim_webview_server script/search_core/adelscott.js",
			curl: func(b string, d time.Time) string {
				return "curl '" + b + sitesim.PathRealTimeList + "'" + browser(b+"/GolfRes/onepage/real_reservation.asp") +
					" \\\n  -H 'content-type: application/x-www-form-urlencoded; charset=UTF-8' \\\n" +
					"  --data-raw 'golfrestype=real&courseid=138&usrmemcd=13&pointdate=" + d8(d) + "&openyn=1&dategbn=4&choice_time=00&cssncourseum=&inputtype=I'"
			}},
		{name: "html list price struck through, meeting time", source: "jaehyunlee25/teezzim_webview_server script/search/lakeside.js",
			curl: func(b string, d time.Time) string {
				return "curl '" + b + sitesim.PathPricesHTML + "'" + browser(b+"/reservation/real.do") +
					" \\\n  -H 'content-type: application/x-www-form-urlencoded; charset=UTF-8' \\\n" +
					"  --data-raw 'golfResType=real&clubCd=138&pointDate=" + d8(d) + "'"
			}},
		{name: "json greenfee and onegreenfee", source: "jaehyunlee25/teezzim_webview_server script/search_core/cygnus.js",
			url: func(b string, d time.Time) string {
				return b + sitesim.PathPricesJSON + "?requestType=get&gc=138&chosenDate=" + iso(d)
			}},
		{name: "calendar then Book_time links, euc-kr", source: "jaehyunlee25/teezzim_webview_server script/search/island.js",
			clubs: []int{sitesim.CalendarClub}, oneClub: true,
			curl: func(b string, d time.Time) string {
				return "curl '" + b + sitesim.PathBookCalendar + "'" + browser(b+sitesim.PathBookCalendar) +
					" \\\n  -H 'content-type: application/x-www-form-urlencoded' \\\n  --data-raw 'book_date=" + d8(d) + "'"
			}},
		{name: "korean times and prices", source: "jaehyunlee25/teezzim_webview_server script/search_core/delphino.js",
			curl: func(b string, d time.Time) string {
				return "curl '" + b + sitesim.PathKoreanGrid + "'" + browser(b+"/m.rsv.selectMobileRsvStep.dp") +
					" \\\n  -H 'content-type: application/x-www-form-urlencoded; charset=UTF-8' \\\n" +
					"  --data-raw 'fRsvD=" + d8(d) + "&fJiyukCd=60&fStoreCd=138'"
			}},
		{name: "form post behind an expiring login", source: "ksh20531/pythonProject sunVally_config.py", players: true, login: true,
			cfg: func(c *sitesim.Config) { c.SessionRequests = 15 },
			curl: func(b string, d time.Time) string {
				return "curl '" + b + sitesim.PathClubAJAX + "'" + browser(b+"/club/reservation") +
					" \\\n  -b '" + sitesim.SessionCookie + "=LOGIN_COOKIE' \\\n" +
					"  -H 'content-type: application/x-www-form-urlencoded; charset=UTF-8' \\\n" +
					"  --data-raw 'golfResDate=" + d8(d) + "&courseId=138'"
			}},
		{name: "one club a page get", source: "jaehyunlee25/teezzim_webview_server script/search_core/baystars.js",
			url: func(b string, d time.Time) string {
				return b + sitesim.PathClubPage + "?club_code=138&book_date=" + d8(d)
			}},
		{name: "old asp euc-kr, not open, sold-out row", source: "yeonjae0901/bearcreek bearcreek_checker.py", players: true,
			cfg: func(c *sitesim.Config) { c.AlertPastWindow = true },
			url: func(b string, d time.Time) string {
				return b + sitesim.PathASP + "?gc=140&ymd=" + d.Format("2006.01.02")
			}},
		{name: "every club a page, euc-kr", source: "the project's own (euckr.go)", players: true, noTargets: true,
			url: func(b string, d time.Time) string { return b + sitesim.PathEUCKRPage + "?book_date=" + d8(d) }},
		{name: "html list with pages", source: "the project's own (render.go)", players: true, noTargets: true,
			url: func(b string, d time.Time) string { return b + "/tee?date=" + d8(d) + "&page=1" }},
	}
}

// TestSuggestCorpus: for every shape of the corpus, suggest from the copied request (and from
// the bare URL of a GET) gives an entry that the crawler's check accepts with no warning,
// unedited (a login's credential variables aside), that carries no secret of the request, and
// whose crawl of a simulated week is the ground truth: every tee time opened once, booked ones
// closed as booked, price drops as changes, nothing else.
func TestSuggestCorpus(t *testing.T) {
	shapes := corpusShapes()
	if len(shapes) < 10 {
		t.Fatalf("the corpus has %d shapes, want at least 10", len(shapes))
	}
	day := simStart.AddDate(0, 0, 1)
	for _, sh := range shapes {
		forms := map[string]func(base string, day time.Time) string{}
		if sh.curl != nil {
			forms["curl"] = sh.curl
		}
		if sh.url != nil {
			u := sh.url
			forms["curl"] = func(b string, d time.Time) string {
				return "curl '" + u(b, d) + "&_csrf=" + corpusQuery + "'" + browser(b+"/")
			}
			forms["url"] = func(b string, d time.Time) string { return "curl '" + u(b, d) + "'" }
		}
		t.Run(sh.name, func(t *testing.T) {
			t.Parallel()
			// An entry the same as one already crawled (headers aside, which the simulator
			// ignores) crawls the same: it is checked, not crawled again.
			var crawled []site.SiteSpec
			for _, form := range []string{"curl", "url"} {
				if curl, ok := forms[form]; ok {
					t.Run(form, func(t *testing.T) { crawled = corpusCase(t, sh, day, curl, crawled) })
				}
			}
		})
	}
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

func corpusCase(t *testing.T, sh corpusShape, day time.Time, curl func(string, time.Time) string, crawled []site.SiteSpec) []site.SiteSpec {
	if sh.wrong != "" {
		t.Skip("today's suggestion crawls wrong listings: " + sh.wrong)
		return crawled
	}
	clock := &simClock{t: simStart}
	cfg := sitesim.Config{Seed: 2026, Now: clock.Now, DaysAhead: simDays, TeeTimesPerDay: 8, LoginPassword: simPassword}
	if sh.cfg != nil {
		sh.cfg(&cfg)
	}
	sim := sitesim.New(cfg)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)

	text := curl(srv.URL, day)
	secrets := []string{corpusSession, corpusCSRF, corpusBearer, corpusQuery}
	if sh.login {
		cookie := loginCookie(t, srv.URL)
		text = strings.ReplaceAll(text, "LOGIN_COOKIE", cookie)
		secrets = append(secrets, cookie, simPassword)
	}
	o := Options{Date: day, DaysAhead: crawlDays, ProbeEmpty: true, Now: clock.Now}
	switch {
	case sh.oneClub:
		o.Targets = []site.Target{{"name": sim.Clubs()[sh.clubs[0]].Name}}
	case !sh.noTargets:
		o.Targets = clubTargets(sim)
	}
	sg, stderr := runSuggest(t, text, o)
	for _, s := range secrets {
		if strings.Contains(string(sg.YAML), s) || strings.Contains(stderr, s) {
			t.Errorf("the secret %q of the copied request reached suggest's output or stderr", s)
		}
	}
	if sh.partial != "" {
		if sg.Complete || !strings.Contains(stderr, sh.partial) {
			t.Fatalf("complete %v; want exit 2 saying %q", sg.Complete, sh.partial)
		}
		return crawled
	}
	switch {
	case len(sg.Missing) > 0:
		t.Fatalf("the suggestion is partial: missing %v", sg.Missing)
	case sg.Login != sh.login:
		t.Fatalf("login %v, want %v", sg.Login, sh.login)
	}
	getenv := noEnv
	if sh.login {
		// Exit 2 naming what is left to do: the login block's credential variables.
		if !strings.Contains(stderr, "login: to fill in: set ") {
			t.Errorf("stderr does not say which credential variables to set")
		}
		getenv = credentialsEnv(t, sg.Site)
	}
	checkAccepts(t, sg.YAML, getenv)
	spec := parsing(sg.Site.SiteSpec, srv.URL)
	for _, c := range crawled {
		if reflect.DeepEqual(c, spec) {
			t.Log("the same entry as one crawled already: its crawl is that one's")
			return crawled
		}
	}
	crawled = append(crawled, spec)
	crawls := crawlTimes()
	logins := sim.Logins()
	got := crawlWeekEvents(t, clock, getenv, sg.Site)[0]
	sameAsTruth(t, got, truthEvents(t, sim, sh, crawls))
	if sh.login {
		// Sessions that expire within a crawl: it logs in again rather than fail.
		t.Logf("the crawls logged in %d times", sim.Logins()-logins)
		if sim.Logins()-logins <= len(crawls) {
			t.Errorf("%d logins over %d crawls: no session expired within a crawl", sim.Logins()-logins, len(crawls))
		}
	}
	return crawled
}

// loginCookie logs in to the simulator as the golfer's browser did and returns its session
// cookie, name=value.
func loginCookie(t *testing.T, base string) string {
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
func credentialsEnv(t *testing.T, st *site.Site) func(string) string {
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

// checkAccepts runs the crawler's check (site.CheckSites, the code of `crawler check`) on the
// suggested sites file: valid, no warning, no credential variable unset.
func checkAccepts(t *testing.T, yaml []byte, getenv func(string) string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sites.yaml")
	if err := os.WriteFile(path, yaml, 0o600); err != nil {
		t.Fatal(err)
	}
	checks, err := site.CheckSites(path, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 {
		t.Fatalf("check found %d sites, want 1", len(checks))
	}
	c := checks[0]
	if c.Err != nil || len(c.Warnings) > 0 || len(c.MissingEnv) > 0 {
		t.Errorf("check: error %v, warnings %q, unset variables %v", c.Err, c.Warnings, c.MissingEnv)
	}
}

// truthEvents are the events a perfect crawl at the instants crawls would write for the shape's
// listings, from the simulator's ground truth: opened at the first crawl that shows a tee time,
// changed at each crawl that shows other values (the players only where the shape shows them),
// closed at the first crawl that misses it, as booked once it is missed twice
// (crawler.DefaultMissesToClose) before its tee time, as expired once its tee time has passed.
func truthEvents(t *testing.T, sim *sitesim.Site, sh corpusShape, crawls []time.Time) []string {
	t.Helper()
	courses := map[string]bool{}
	for i, c := range sim.Clubs() {
		if sh.clubs == nil || slices.Contains(sh.clubs, i) {
			courses[c.Name] = true
		}
	}
	var out []string
	for _, tr := range sim.GroundTruth(crawls[0], crawls[len(crawls)-1]) {
		if tr.Malformed || !courses[tr.Course] {
			continue
		}
		tee, err := time.ParseInLocation("2006-01-02 15:04", tr.PlayDate+" "+tr.TeeTime, sitesim.KST)
		if err != nil {
			t.Fatal(err)
		}
		id := tr.Course + "|" + tr.Part + "|" + tr.PlayDate + " " + tr.TeeTime
		open, closed, misses := false, false, 0
		var last string
		var firstMiss time.Time
		for _, at := range crawls {
			if closed {
				break
			}
			if tr.VisibleAt(at) {
				price, players := tr.StateAt(at)
				v := values(price, players, sh.players)
				switch {
				case !open:
					out = append(out, eventLine(at, events.ListingOpened, id, v))
				case v != last:
					out = append(out, eventLine(at, events.ListingChanged, id, v))
				}
				open, last, misses = true, v, 0
				continue
			}
			if !open {
				continue
			}
			if misses++; misses == 1 {
				firstMiss = at
			}
			switch {
			case !tee.After(firstMiss):
				out, closed = append(out, eventLine(firstMiss, events.ListingClosed, id, string(events.Expired))), true
			case misses >= crawler.DefaultMissesToClose:
				out, closed = append(out, eventLine(firstMiss, events.ListingClosed, id, string(events.Booked))), true
			}
		}
	}
	return out
}

func values(price *int64, players int, showsPlayers bool) string {
	p, n := "null", "null"
	if price != nil {
		p = fmt.Sprint(*price)
	}
	if showsPlayers {
		n = fmt.Sprint(players)
	}
	return "price " + p + " players " + n
}

func eventLine(at time.Time, typ events.Type, id, what string) string {
	return at.UTC().Format(time.RFC3339) + " " + string(typ) + " " + id + " " + what
}

// crawlLines are the crawl's events in eventLine's form.
func crawlLines(evs []events.Event) []string {
	out := make([]string, 0, len(evs))
	for _, e := range evs {
		id := e.CourseName + "|" + e.CoursePart + "|" + e.PlayDate + " " + e.TeeTime
		what := string(e.CloseReason)
		if e.EventType != events.ListingClosed {
			p, n := "null", "null"
			if e.PriceKRW != nil {
				p = fmt.Sprint(*e.PriceKRW)
			}
			if e.Players != nil {
				n = fmt.Sprint(*e.Players)
			}
			what = "price " + p + " players " + n
		}
		out = append(out, eventLine(e.OccurredAt, e.EventType, id, what))
	}
	return out
}

// sameAsTruth fails the test unless the crawl's events are exactly the truth's, with some of
// every kind.
func sameAsTruth(t *testing.T, got []events.Event, want []string) {
	t.Helper()
	kinds := map[string]int{}
	for _, w := range want {
		f := strings.Fields(w)
		kinds[f[1]]++
	}
	a, b := crawlLines(got), slices.Clone(want)
	sort.Strings(a)
	sort.Strings(b)
	t.Logf("ground truth: %d events %v; crawl: %d", len(b), kinds, len(a))
	if len(kinds) < 3 {
		t.Errorf("the week lacks opens, changes or closes: %v", kinds)
	}
	if slices.Equal(a, b) {
		return
	}
	d1, d2 := onlyIn(b, a), onlyIn(a, b)
	t.Errorf("the crawl differs from the ground truth: %d events only in the truth, %d only in the crawl;\nfirst truth only: %v\nfirst crawl only: %v",
		len(d1), len(d2), first(d1), first(d2))
}
