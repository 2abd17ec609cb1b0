package suggest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
	"github.com/golfcrawler/golf-crawler/internal/retry"
)

// analysis is one run of Suggest past the request template: the fetches and what they showed.
type analysis struct {
	o     Options
	t     templated
	date  time.Time
	say   func(string, ...any)
	out   *site.SiteSpec
	login bool
	// loginDone: the login block's credentials were set and the login worked
	loginDone bool
	missing   []string
	page      Page
	isJSON    bool
	probes    int     // extra requests of the probe so far (MaxProbes)
	part      *column // the course_part column rules (b) and (c) are to check (checkPart)
	cols      []column
	examples  []boundExample
	// contested are the cells left undecided (sayContests)
	contested []string
	// envUnset are the env block's variables not set here (personalVariables)
	envUnset []string
	// session: the page needs the copied session (compareBare); capture, the request the entry
	// captures it with (checkSession); sessionBlocked, none was found.
	session        *sessionCheck
	capture        *capturing
	sessionBlocked bool
}

func (a *analysis) run(ctx context.Context) error {
	f := a.o.Fetcher
	page, err := f.Fetch(ctx, a.t.full, a.t.target, a.date, a.t.secret)
	if err != nil {
		return err
	}
	a.say("fetched %s: status %d, %d bytes", page.Request, page.Status, len(page.Body))
	if page.Err != nil && len(page.Body) == 0 {
		return fmt.Errorf("the page failed: %w", page.Err)
	}
	if lp, ok := loginForm(page.Body, requestURL(page.Request)); ok {
		a.setLogin(lp, "the page itself is a login page (a form with a password field): the copied session has expired, or the page needs one")
		if p, ok, err := a.loggedIn(ctx); err != nil {
			return err
		} else if ok {
			page = p
		}
	} else if len(a.t.passwords) > 0 {
		a.passwordLogin()
	} else if len(a.t.dropped) > 0 {
		bare, err := f.Fetch(ctx, a.t.bare, a.t.target, a.date, nil)
		if err != nil {
			return err
		}
		a.compareBare(ctx, page, bare)
	}
	a.page = page
	a.out.Charset = site.Charset(a.charset(page.Body))
	a.o.Fetcher.Charset = a.out.Charset
	if err := a.rows(ctx); err != nil {
		return err
	}
	if err := a.checkPart(ctx); err != nil {
		return err
	}
	if err := a.checkPersonal(ctx); err != nil {
		return err
	}
	if err := a.checkSession(ctx); err != nil {
		return err
	}
	a.request()
	if a.o.ProbeEmpty {
		return a.probeEmpty(ctx)
	}
	if a.isJSON && a.out.JSON != nil {
		a.out.JSON.EmptyWhen = []site.JSONCondition{{Path: a.out.JSON.Rows, Is: "empty"}}
		a.say("empty_when: %s is empty (a guess: --probe-empty=false did not ask for an empty date)", a.out.JSON.Rows)
	}
	return nil
}

// checkPersonal decides the golfer's own ids and phone numbers the request carries (msNum,
// memberNo, tel2): left out of the entry when it reads the same listings without them (not the
// same bytes: servers echo the request), else they become variables like a login's credentials
// (personalVariables). One more request.
func (a *analysis) checkPersonal(ctx context.Context) error {
	if len(a.t.personal) == 0 {
		return nil
	}
	names := strings.Join(a.t.personal, ", ")
	if len(a.missing) > 0 {
		a.say("personal: %s left out of the output (the golfer's own id or phone number); not checked: the entry is partial", names)
		return nil
	}
	if err := retry.Sleep(ctx, a.o.Fetcher.delay()); err != nil {
		return err
	}
	p, err := a.o.Fetcher.Fetch(ctx, a.t.withoutPersonal, a.t.target, a.date, a.t.secret)
	if err != nil {
		return err
	}
	a.say("personal: fetched %s without %s: status %d, %d bytes", p.Request, names, p.Status, len(p.Body))
	with, errWith := a.readPage(ctx, a.page.Body, a.out.Fields)
	without, errWithout := a.readPage(ctx, p.Body, a.out.Fields)
	if p.Err == nil && errWith == nil && errWithout == nil && len(with.Listings) > 0 && sameListings(with.Listings, without.Listings) {
		a.say("personal: %s left out of the output (the golfer's own id or phone number): without them the entry reads the same %d listing(s)", names, len(with.Listings))
		return nil
	}
	a.say("personal: without %s the entry reads %d listing(s), with them %d: the page needs them, and a sites file never carries a golfer's own id or phone number",
		names, len(without.Listings), len(with.Listings))
	return a.personalVariables(ctx, with.Listings)
}

// personalVariables makes the request's personal values variables, as a login's credentials are:
// the entry's env block names an environment variable for each (CLUB_MS_NUM) and its request
// sends {{.Env.msNum}}. With them set here, the entry's request is fetched with their values and
// must read the listings the copied request read (with: one more request); unset, they are to be
// set (exit 2, naming them).
func (a *analysis) personalVariables(ctx context.Context, with []events.Listing) error {
	vars, env := map[string]string{}, map[string]string{}
	for i, p := range a.t.personal {
		name := p[strings.LastIndex(p, " ")+1:]
		key, variable := envNames(name, i)
		vars[p], env[key] = ".Env."+key, a.envPrefix()+"_"+variable
	}
	rt, err := a.t.with(vars)
	if err != nil {
		return err
	}
	a.t.req, a.out.Env = rt, env
	names := strings.Join(sortedValues(env), " and ")
	a.say("personal: like a login's credentials they become variables: the entry sends %s from %s (env:), never a value",
		strings.Join(sortedTemplates(env), ", "), names)
	getenv := a.o.Fetcher.getenv()
	for _, v := range env {
		if getenv(v) == "" {
			a.envUnset = sortedValues(env)
			a.say("personal: to fill in: set %s before crawling (the golfer's own values, as the copied request sent them); with them set, suggest checks that the entry reads the same listings", names)
			return nil
		}
	}
	if err := retry.Sleep(ctx, a.o.Fetcher.delay()); err != nil {
		return err
	}
	p, err := a.o.Fetcher.FetchEnv(ctx, rt, a.t.target, a.date, a.t.secret, env)
	if err != nil {
		return err
	}
	got, errGot := a.readPage(ctx, p.Body, a.out.Fields)
	if p.Err == nil && errGot == nil && sameListings(with, got.Listings) {
		a.say("personal: with %s set, the entry's request reads the same %d listing(s) as the copied one", names, len(with))
		return nil
	}
	a.say("undecided: personal: with %s set the entry's request reads %d listing(s), the copied one %d: do they hold the values the copied request sent?",
		names, len(got.Listings), len(with))
	a.contested = append(a.contested, "personal")
	return nil
}

// envNames are the env block's name (the template's {{.Env.NAME}}) and the variable's last words
// (MS_NUM) for a personal value's name (msNum); i numbers a name without letters (회원번호).
func envNames(name string, i int) (key, variable string) {
	words := nameWords(name)
	if len(words) == 0 {
		n := "personal" + itoa(i+1)
		return n, strings.ToUpper(n)
	}
	key = reNotIdent.ReplaceAllString(name, "_")
	if key[0] >= '0' && key[0] <= '9' {
		key = "_" + key
	}
	return key, strings.ToUpper(strings.Join(words, "_"))
}

var reNotIdent = regexp.MustCompile(`[^A-Za-z0-9_]+`)

// sortedTemplates are the env block's {{.Env.NAME}}, sorted.
func sortedTemplates(env map[string]string) []string {
	var out []string
	for _, k := range sortedKeys(env) {
		out = append(out, "{{.Env."+k+"}}")
	}
	return out
}

// sameListings reports whether two reads of a page give the same listings (key, price, players).
func sameListings(a, b []events.Listing) bool {
	text := func(ls []events.Listing) []string {
		var out []string
		for _, l := range ls {
			players := 0
			if l.Players != nil {
				players = *l.Players
			}
			out = append(out, fmt.Sprintf("%s|%d|%d", l.Key(), derefPrice(l.PriceKRW), players))
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(text(a), text(b))
}

// compareBare says whether the page answers the same without the dropped credentials.
func (a *analysis) compareBare(ctx context.Context, with, bare Page) {
	if lp, ok := loginForm(bare.Body, requestURL(bare.Request)); ok {
		a.setLogin(lp, fmt.Sprintf("without %s the site answers with a login page (status %d)", strings.Join(a.t.dropped, ", "), bare.Status))
		return
	}
	switch {
	case bare.Err != nil:
		a.say("without %s the page fails (%v): it needs the browser's session, and no login form was found to declare", strings.Join(a.t.dropped, ", "), bare.Err)
		a.session = &sessionCheck{bare: bare}
	case bytes.Equal(with.Body, bare.Body):
		a.say("without %s the page answers the same: they are not needed", strings.Join(a.t.dropped, ", "))
	case rowCount(ctx, with.Body) > 0 && rowCount(ctx, bare.Body) == 0:
		a.say("without %s the page answers (status %d) but shows no tee times: it needs the browser's session, and no login form was found to declare", strings.Join(a.t.dropped, ", "), bare.Status)
		a.session = &sessionCheck{bare: bare}
	default:
		a.say("without %s the page still answers (status %d, %d bytes; %d with them)", strings.Join(a.t.dropped, ", "), bare.Status, len(bare.Body), len(with.Body))
	}
}

// rowCount is how many rows of tee times an answer holds, JSON or HTML.
func rowCount(ctx context.Context, body []byte) int {
	b := bytes.TrimSpace(body)
	if len(b) > 0 && (b[0] == '{' || b[0] == '[') && json.Valid(b) {
		jr, _, _ := findJSONRows(ctx, b)
		return jr.rows
	}
	hr, _, _ := findHTMLRows(ctx, body)
	return hr.rows
}

// requestURL is the URL of a page key ("URL" or "METHOD URL BODY").
func requestURL(key string) string {
	parts := strings.SplitN(key, " ", 3)
	if len(parts) >= 2 && (parts[0] == http.MethodPost || parts[0] == http.MethodGet) {
		return parts[1]
	}
	return key
}

// rows finds the rows and fields in the page, JSON or HTML.
func (a *analysis) rows(ctx context.Context) error {
	body := bytes.TrimSpace(a.page.Body)
	var targetNames []string
	for _, t := range a.o.Targets {
		if n := t["name"]; n != "" {
			targetNames = append(targetNames, site.CleanText(n))
		}
	}
	var cols []column
	if len(body) > 0 && (body[0] == '{' || body[0] == '[') && json.Valid(body) {
		a.isJSON = true
		jr, ok, err := findJSONRows(ctx, body)
		if err != nil {
			return fmt.Errorf("read the JSON answer: %w", err)
		}
		if !ok {
			return a.noRows("no array of objects in the JSON answer has a member that looks like tee times")
		}
		if jr.path == "" {
			// The answer is the array itself: its elements that have a member every row has
			// (#(key)#), and success is that the answer is an array (# is present).
			key := ""
			for _, c := range jr.cols {
				if !slices.Contains(c.values, "") && len(c.sources) == 0 && !strings.Contains(c.where, regexSep) {
					key = c.where
					break
				}
			}
			if key == "" {
				return a.noRows("the answer is an array of objects, but no member is in every one of them to name its rows by")
			}
			jr.path = "#(" + key + ")#"
			a.say("rows ← %s: the answer is an array of %d objects (the elements with %s), the one whose members look most like tee times", jr.path, jr.rows, key)
		} else {
			a.say("rows ← %s: an array of %d objects, the one whose members look most like tee times", jr.path, jr.rows)
		}
		a.out.Format = site.FormatJSON
		a.out.JSON = &site.JSONPage{Rows: jr.path}
		cols = jr.cols
	} else {
		hr, ok, err := findHTMLRows(ctx, a.page.Body)
		if err != nil {
			return fmt.Errorf("read the HTML answer: %w", err)
		}
		if !ok {
			return a.noRows("no repeated element of the HTML answer holds tee times")
		}
		a.say("row ← %s: %d elements of one kind, their cells hold tee times; list ← %s, the element that holds them", hr.row, hr.rows, hr.list)
		a.out.Row, a.out.List = hr.row, hr.list
		if hr.grid {
			a.out.Grid = true
			a.say("grid: true: cells of the rows span others (rowspan, colspan): the rows are read as the rendered grid, every row with every column, a field by its column")
		}
		if hr.next != "" {
			a.out.NextPage = hr.next
			a.say("next_page ← %s: a link that says next (to %s)", hr.next, hr.nextHref)
		}
		cols = hr.cols
	}
	exs, err := parseExamples(a.o.Examples)
	if err != nil {
		return err
	}
	clubNames := slices.Clone(targetNames)
	if a.o.Name != "" {
		clubNames = append(clubNames, a.o.Name)
	}
	if a.examples, err = bindExamples(cols, exs, a.date, a.date, clubNames); err != nil {
		return err
	}
	for _, e := range a.examples {
		a.say("example %q: shown by the row(s) of %s", e.given, rowLabel(cols, e.rows[0], a.date))
	}
	as, err := assignFields(cols, targetNames, a.o.Name, a.date, a.examples, a.pageReader(ctx), a.say)
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if err != nil {
		return err
	}
	a.cols = as.cols
	for name, p := range as.fields {
		a.setField(name, p)
	}
	a.missing, a.part = as.missing, as.part
	if !as.yearless {
		a.roundDateFromRequest()
	}
	a.sayContests(as)
	return nil
}

func (a *analysis) noRows(why string) error {
	a.say("rows: %s", why)
	if !a.login {
		a.say("no login page either: is this the request that lists the tee times? (Network tab, the XHR or document that holds them)")
	}
	a.missing = append(a.missing, "tee_time", "course", "round_date")
	for _, ex := range a.o.Examples {
		if bytes.Contains(a.page.Body, []byte(ex)) {
			a.say("example %q: in the answer, but in no repeated element read as rows: the rows may be shaped in a way suggest does not read (see the Sites file section)", ex)
		} else {
			a.say("example %q: not in the answer: is this the request that lists the tee times?", ex)
		}
	}
	return nil
}

func (a *analysis) roundDateFromRequest() {
	if a.t.dateFound {
		a.setField("round_date", pick{value: `{{.Date.Format "2006-01-02"}}`})
		a.say("round_date ← {{.Date}}: the rows carry no year-less date, the request names the play date")
		return
	}
	a.missing = append(a.missing, "round_date")
	a.say("round_date: the rows carry no date and the request names none; give --date")
}

// request writes the request part of the entry: url_template for a plain GET of an HTML list
// without targets, requests otherwise; the targets.
func (a *analysis) request() {
	rt := a.t.req
	plain := rt.Method == "" && len(rt.Headers) == 0 && len(a.o.Targets) == 0 && a.out.Login == nil &&
		!a.isJSON && !hasValue(a.out.Fields) && a.capture == nil && len(a.out.Env) == 0
	switch {
	case plain:
		a.out.URLTemplate = rt.URL
		a.say("url_template: a plain GET of an HTML list, one URL per play date")
	case a.capture != nil:
		a.out.Requests = []site.RequestTemplate{a.capture.req, rt}
	default:
		a.out.Requests = []site.RequestTemplate{rt}
	}
	if len(a.o.Targets) > 0 {
		a.out.Targets = a.o.Targets
	}
	if a.out.DaysAhead == 0 && !a.t.dateFound {
		return
	}
	if !a.t.dateFound {
		a.say("days_ahead: %d, but the request names no date: every day would fetch the same page", a.out.DaysAhead)
	}
}

// hasValue reports whether a field comes from the request.
func hasValue(f site.Fields) bool {
	for _, field := range f {
		if field.Value != "" {
			return true
		}
	}
	return false
}

// setField maps cell name as p says: a path (JSON) or selector (HTML) within the row, or a value
// from the request.
func (a *analysis) setField(name string, p pick) {
	if a.out.Fields == nil {
		a.out.Fields = site.Fields{}
	}
	a.out.Fields[name] = a.fieldOf(p)
}

// reGridColumn is a grid column's cell: td:nth-child(N) reads column N of the rendered grid.
var reGridColumn = regexp.MustCompile(`^td:nth-child\((\d+)\)$`)

// fieldOf is the field that reads p on this page: p.field, with a grid's td:nth-child(N) as
// column: N.
func (a *analysis) fieldOf(p pick) site.Field {
	f := p.field(a.isJSON)
	if m := reGridColumn.FindStringSubmatch(f.Selector); a.out.Grid && m != nil && f.Attr == "" && f.Regex == "" && len(f.Fallbacks) == 0 {
		f.Column, _ = strconv.Atoi(m[1])
		f.Selector = ""
	}
	return f
}

// field is the sites file's field that reads p: its value, its path (JSON), or its selector
// with a link candidate's attribute and regex split out (splitWhere).
func (p pick) field(isJSON bool) site.Field {
	f := site.Field{Value: p.value}
	switch {
	case p.value != "":
	case len(p.sources) > 0: // a fallback: its sources in order (withFallback: plain paths or selectors)
		if isJSON {
			f.Path = p.sources[0]
		} else {
			f.Selector = p.sources[0]
		}
		f.Fallbacks = p.sources[1:]
	case isJSON:
		where := p.where
		level, rest, key := splitGroupWhere(where)
		switch {
		case key:
			f.GroupKey = level
			return f
		case level > 0:
			f.Group, where = level, rest
		}
		f.Path, f.Regex, _ = strings.Cut(where, regexSep) // a part of a list (listParts)
	default:
		f.Selector, f.Attr, f.Regex = splitWhere(p.where)
	}
	return f
}

// showTheWay is what a partial entry says: the missing cells, the columns seen that no field
// took (the candidates, with sample values), where the fields are described and how to try an
// edit.
func (a *analysis) showTheWay() {
	if len(a.missing) == 0 {
		return
	}
	a.say("partial: the entry lacks %s; the sites file is printed with what was found, to complete by hand", strings.Join(a.missing, ", "))
	taken := map[string]bool{}
	for name, f := range a.out.Fields {
		// A column taken as the part may be the course the entry lacks.
		if name != "course_part" || !slices.Contains(a.missing, "course") {
			taken[f.Path+f.Selector] = true
		}
	}
	var seen []string
	for _, c := range a.cols {
		if !taken[c.where] {
			seen = append(seen, c.label()+": "+orNone(sample(c.values)))
		}
	}
	for _, m := range slices.Compact(slices.Sorted(slices.Values(a.missing))) {
		if len(seen) == 0 {
			a.say("%s: candidates seen: none (no column of the rows is left)", m)
			continue
		}
		a.say("%s: candidates seen: %s", m, strings.Join(seen[:min(len(seen), 8)], "; "))
	}
	a.say(`partial: see "Sites file" in docs/sites.md for fields.<cell> (path, selector, value, regex), `+
		"then crawler try --sites FILE --site %s --dump to see what the edited entry reads", a.out.Name)
}

func orNone(s string) string {
	if s == "" {
		return "(empty)"
	}
	return s
}
