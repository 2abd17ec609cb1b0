// Package suggest writes a site entry of the sites file from one request a golfer copied out of
// the browser ("Copy as cURL", or a URL): it fetches the page as a crawl would, finds the rows of
// tee times and their fields by value shape and by name, turns the play date and the target's id
// into templates and learns what an empty answer looks like. Every decision is said with its
// evidence; nothing is guessed by a model.
package suggest

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// Options are the inputs of Suggest.
type Options struct {
	Request Request
	Date    time.Time // the play date the request asked for; zero: found in the request
	Targets []site.Target
	// Examples are what the page shows for one tee time: each a row of text ('12/06 06:30
	// 샤인코스 160,000원 4명', split by the crawler's shapes) or cell=value (price=160,000; all
	// of these together are one more row). They bind: the entry must read each of them.
	Examples []string
	// Command is the command line suggest was run with (ShellCommand), for the command to run
	// again with an example when a cell is undecided; "": a sketch of it.
	Command    string
	Name       string // the site's name; "": from the host
	DaysAhead  int
	ProbeEmpty bool // fetch a far-ahead date to learn what an empty answer looks like
	// Now is the clock the crawl's window (today .. today+DaysAhead) is read on; nil: time.Now.
	Now     func() time.Time
	Fetcher Fetcher
	Say     func(format string, args ...any) // the reasoning, one line each (stderr)
}

// Suggestion is what Suggest found.
type Suggestion struct {
	YAML     []byte     // the sites file, one site
	Site     *site.Site // that site, compiled
	Complete bool       // every required field was found and no login or variable is to be filled in
	Login    bool       // the page needs a login: the login block's credentials are to be set
	// Env are the environment variables of the entry's env block that are to be set: the page
	// needs values of the golfer's own (a member number), which the entry sends from them.
	Env []string
	// Session: the page answers only within the browser's session (a token or id the copied
	// request carries), and no page was found to capture it from: the entry cannot crawl it.
	Session bool
	Missing []string // required fields not found
	// Undecided are the cells more than one column reads alike and nothing decided (no rule, no
	// example): the entry is printed with the leading candidate, and is not complete.
	Undecided []string
	Dropped   []string    // credentials left out of the output (headers; "query NAME", "form NAME", ...)
	Date      time.Time   // the play date used
	Target    site.Target // the given target the request asked for (nil: none)
}

// ProbeDays is how far after the play date the empty probe asks.
const ProbeDays = 180

// Suggest fetches the request and writes a site entry for it.
func Suggest(ctx context.Context, o Options) (Suggestion, error) {
	say := o.Say
	if say == nil {
		say = func(string, ...any) {}
	}
	var sg Suggestion
	date := o.Date
	if date.IsZero() {
		d, where, ok := findDate(o.Request)
		if ok {
			date = d
			say("date: %s holds %s in a full-year spelling: the play date (give --date to also find 12/05)", where, d.Format("2006-01-02"))
		} else {
			say("date: the request names no play date in a full-year spelling; every crawl would ask for the same page (give --date)")
		}
	}
	sg.Date = date
	t, err := makeTemplate(o.Request, date, !o.Date.IsZero(), o.Targets, say)
	if err != nil {
		return sg, err
	}
	// Nothing said from here on repeats a credential's value (the fetched request lines hold them).
	say = redacting(say, t.values)
	sg.Dropped, sg.Target = t.dropped, t.target
	if len(t.dropped) > 0 {
		say("dropped from the output (a login, session or CSRF token does not belong in a sites file): %s", strings.Join(t.dropped, ", "))
	}
	if len(o.Targets) > 0 && t.target == nil {
		say("target: no given target's id is in the request; every target would ask for the same page")
	}
	fetchDate := date
	if fetchDate.IsZero() {
		fetchDate = time.Now().In(site.Seoul())
	}
	out := site.SiteSpec{Name: siteName(o), DaysAhead: o.DaysAhead}
	a := analysis{o: o, t: t, date: fetchDate, say: say, out: &out}
	if err := a.run(ctx); err != nil {
		return sg, err
	}
	a.showTheWay()
	sg.Login, sg.Missing, sg.Env, sg.Session = a.login && !a.loginDone, a.missing, a.envUnset, a.sessionBlocked
	sg.Undecided = a.contested
	sg.Complete = !sg.Login && len(a.missing) == 0 && len(a.contested) == 0 && len(a.envUnset) == 0 && !a.sessionBlocked
	comment := "suggested by crawler suggest from " + o.Request.Method + " " + redactURL(o.Request.URL)
	b, err := marshal(out, comment)
	if err != nil {
		return sg, err
	}
	sg.YAML = b
	if len(a.missing) > 0 {
		return sg, nil // a partial entry does not validate: fields are missing
	}
	sites, err := site.ParseSites(b)
	if err != nil {
		return sg, fmt.Errorf("the suggested entry does not validate: %w", err)
	}
	sg.Site = sites[0]
	if !sg.Login {
		a.crawlCheck(ctx, sg.Site)
		sg.Undecided = a.contested
		sg.Complete = sg.Complete && len(a.contested) == 0
	}
	return sg, nil
}

func (o Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

// siteName is --name, else the host without www. and with dots as dashes.
func siteName(o Options) string {
	if o.Name != "" {
		return o.Name
	}
	u, err := url.Parse(o.Request.URL)
	if err != nil {
		return "site"
	}
	h := strings.TrimPrefix(u.Hostname(), "www.")
	return regexp.MustCompile(`[^A-Za-z0-9-]+`).ReplaceAllString(h, "-")
}

// redactURL is a URL for the output's comment: its query values are not repeated there.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.RawQuery, u.User, u.Fragment = "", nil, ""
	u.Path, u.RawPath = rePathParams.ReplaceAllString(u.Path, ""), ""
	return u.String()
}

// rePathParams are a URL path's parameters (;jsessionid=...): a session id's place.
var rePathParams = regexp.MustCompile(`;[^/]*`)

// redacting is say with every secret replaced by ***.
func redacting(say func(string, ...any), secrets []string) func(string, ...any) {
	if len(secrets) == 0 {
		return say
	}
	// Longest first, so that a value is not half-replaced by one it contains.
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	return func(format string, args ...any) {
		say("%s", crawler.Redact(fmt.Sprintf(format, args...), secrets))
	}
}
