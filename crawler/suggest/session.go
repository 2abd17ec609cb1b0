package suggest

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/internal/retry"
)

// A page that answers only within the browser's session: the copied request carries a CSRF token
// or a session id (dropped: a sites file holds none) that the site checks. A crawl gets its own
// from the page that gives it (the form page, the main page whose links carry it): the entry's
// first request captures it (capture:) and the times request sends {{.Captured.NAME}}. suggest
// looks for that page where the browser came from (the Referer) and where the page sends a
// browser without a session (location.href, a meta refresh), proposes the capture only when the
// entry's two requests, sent as a crawl sends them, read the listings the copied request read,
// and otherwise leaves the entry undecided (exit 2) saying why: never an entry that cannot crawl.

// maxSessionPages bounds the pages fetched to look for a session's source.
const maxSessionPages = 3

// sessionCheck is what compareBare found: the page needs the dropped credentials.
type sessionCheck struct {
	bare Page // the answer without them
}

// capturing is the session's source the entry captures from: its request and the page it gave
// (the crawl check answers the capturing request with it).
type capturing struct {
	req  site.RequestTemplate
	body []byte
}

// checkSession settles a page that needs the copied session (a.session): the dropped query, form,
// JSON or path-parameter values are captured from the page that gives them, if one is found and
// the entry then reads the copied request's listings; else the entry is undecided. Up to
// maxSessionPages requests, and the entry's two.
func (a *analysis) checkSession(ctx context.Context) error {
	if a.session == nil || len(a.missing) > 0 {
		return nil
	}
	names := a.droppedValues()
	if len(names) == 0 {
		a.sessionUndecided("the copied request carries it only in its cookies or headers, and a crawl has no session of its own to send")
		return nil
	}
	var candidates []string
	if ref := a.o.Request.Header.Get("Referer"); ref != "" {
		candidates = append(candidates, withoutSecretParams(ref))
	}
	if to := sentTo(a.session.bare.Body, requestURL(a.session.bare.Request)); to != "" {
		candidates = append(candidates, withoutSecretParams(to))
	}
	var tried []string
	for i := 0; i < len(candidates) && len(tried) < maxSessionPages; i++ {
		u := candidates[i]
		if slices.Contains(tried, u) || u == "" {
			continue
		}
		tried = append(tried, u)
		if err := retry.Sleep(ctx, a.o.Fetcher.delay()); err != nil {
			return err
		}
		p, err := a.o.Fetcher.Fetch(ctx, site.RequestTemplate{URL: literal(u)}, nil, a.date, nil)
		if err != nil {
			return err
		}
		a.say("session: fetched %s (where the browser came from, or a page without a session is sent): status %d, %d bytes", p.Request, p.Status, len(p.Body))
		if p.Err != nil {
			continue
		}
		caps, vars := captureSources(p.Body, names)
		if len(caps) == 0 {
			if to := sentTo(p.Body, u); to != "" {
				candidates = append(candidates, withoutSecretParams(to))
			}
			continue
		}
		ok, err := a.tryCapture(ctx, site.RequestTemplate{URL: literal(u), Capture: caps}, vars, p.Body)
		if err != nil || ok {
			return err
		}
	}
	where := "the page names no page the browser came from (Referer) and sends a browser without a session nowhere"
	if len(tried) > 0 {
		where = "no page of " + strings.Join(tried, ", ") + " gives " + strings.Join(names, ", ") + " to a crawl that reads the same listings"
	}
	a.sessionUndecided(where)
	return nil
}

// tryCapture sends the entry's capturing request and its times request as a crawl does and
// keeps them when the answer reads the copied request's listings.
func (a *analysis) tryCapture(ctx context.Context, capReq site.RequestTemplate, vars map[string]string, body []byte) (bool, error) {
	rt, err := a.t.with(vars)
	if err != nil {
		return false, err
	}
	if err := retry.Sleep(ctx, a.o.Fetcher.delay()); err != nil {
		return false, err
	}
	p, err := a.o.Fetcher.FetchCapturing(ctx, capReq, rt, a.t.target, a.date)
	if err != nil {
		return false, err
	}
	var shown []string
	for name, c := range capReq.Capture {
		shown = append(shown, name+" ← "+describeCapture(c))
	}
	slices.Sort(shown)
	a.say("session: captured %s from %s and sent the page's request with it: status %d, %d bytes", strings.Join(shown, "; "), capReq.URL, p.Status, len(p.Body))
	with, errWith := a.readPage(ctx, a.page.Body, a.out.Fields)
	got, errGot := a.readPage(ctx, p.Body, a.out.Fields)
	if p.Err != nil || errWith != nil || errGot != nil || len(with.Listings) == 0 || !sameListings(with.Listings, got.Listings) {
		a.say("session: with the captured values the page reads %d listing(s), the copied request %d: not the same page", len(got.Listings), len(with.Listings))
		return false, nil
	}
	a.say("session: the entry's first request captures them (capture:) and the page's request sends %s: it reads the same %d listing(s) as the copied request",
		strings.Join(sortedTemplatesOf(vars), ", "), len(with.Listings))
	a.t.req, a.capture = rt, &capturing{req: capReq, body: body}
	return true, nil
}

func describeCapture(c site.Capture) string {
	s := c.Selector
	if c.Attr != "" {
		s += " @" + c.Attr
	}
	if c.Regex != "" {
		s += " ~ " + c.Regex
	}
	return s
}

func sortedTemplatesOf(vars map[string]string) []string {
	var out []string
	for _, v := range vars {
		out = append(out, "{{"+v+"}}")
	}
	slices.Sort(out)
	return out
}

// sessionUndecided leaves the entry undecided: it cannot crawl the page as written.
func (a *analysis) sessionUndecided(why string) {
	a.say("undecided: session: the page answers only within the browser's session (without %s it %s), and %s: "+
		"the entry as printed cannot crawl it; add a capture: request by hand (docs/sites.md, requests[].capture) or copy a request that needs no session",
		strings.Join(a.t.dropped, ", "), bareOutcome(a.session.bare), why)
	a.sessionBlocked = true
}

func bareOutcome(p Page) string {
	if p.Err != nil {
		return fmt.Sprintf("fails: status %d", p.Status)
	}
	return "shows no tee times"
}

// droppedValues are the dropped credentials a request can send from a capture: query, form, JSON
// and path-parameter values ("form _csrf"), not headers or cookies.
func (a *analysis) droppedValues() []string {
	var out []string
	for _, d := range a.t.dropped {
		for _, where := range []string{"query ", "form ", "JSON member ", "path parameter "} {
			if strings.HasPrefix(d, where) {
				out = append(out, d)
			}
		}
	}
	return out
}

// captureSources finds in an HTML page where each dropped value (names: "form _csrf") comes
// from: a hidden input or a meta tag of its name, or a link carrying it as a parameter. It
// returns the captures by name and the variables the request sends them as.
func captureSources(body []byte, names []string) (map[string]site.Capture, map[string]string) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, nil
	}
	caps, vars := map[string]site.Capture{}, map[string]string{}
	for _, n := range names {
		name := n[strings.LastIndex(n, " ")+1:]
		if i := strings.LastIndex(name, "."); i >= 0 { // a JSON member's path
			name = name[i+1:]
		}
		c, ok := captureSource(doc, name)
		if !ok {
			continue
		}
		key := reNotIdent.ReplaceAllString(name, "_")
		if key == "" || key[0] >= '0' && key[0] <= '9' {
			key = "_" + key
		}
		caps[key], vars[n] = c, ".Captured."+key
	}
	return caps, vars
}

// captureSource is where a page gives the value of name: an input's value, a meta tag's content,
// or a link's parameter.
func captureSource(doc *goquery.Document, name string) (site.Capture, bool) {
	q := cssString(name)
	for _, c := range []site.Capture{
		{Selector: "input[name=" + q + "]", Attr: "value"},
		{Selector: "meta[name=" + q + "]", Attr: "content"},
	} {
		if v, ok := doc.Find(c.Selector).First().Attr(c.Attr); ok && strings.TrimSpace(v) != "" {
			return c, true
		}
	}
	c := site.Capture{Selector: "a[href*=" + cssString(name+"=") + "]", Attr: "href", Regex: `[?&;]` + regexp.QuoteMeta(name) + `=([^&#;]+)`}
	if href, ok := doc.Find(c.Selector).First().Attr("href"); ok && regexp.MustCompile(c.Regex).MatchString(href) {
		return c, true
	}
	return site.Capture{}, false
}

// cssString is s as a CSS string, double-quoted.
func cssString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

var (
	reLocation    = regexp.MustCompile(`location(?:\.href)?\s*(?:=|\.replace\(|\.assign\()\s*['"]([^'"]+)['"]`)
	reMetaRefresh = regexp.MustCompile(`(?i)<meta[^>]+http-equiv=["']?refresh["']?[^>]+content=["'][^"']*url=([^"'>]+)`)
)

// sentTo is where a page sends the browser (a script's location, a meta refresh), absolute;
// "" when nowhere.
func sentTo(body []byte, pageURL string) string {
	var to string
	if m := reLocation.FindSubmatch(body); m != nil {
		to = string(m[1])
	} else if m := reMetaRefresh.FindSubmatch(body); m != nil {
		to = strings.TrimSpace(string(m[1]))
	}
	if to == "" {
		return ""
	}
	base, err := url.Parse(pageURL)
	if err != nil {
		return ""
	}
	u, err := base.Parse(to)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return u.String()
}

// withoutSecretParams is raw without the query parameters whose name is a credential's (a page
// where the browser came from may carry the session id: a crawl starts its own).
func withoutSecretParams(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	q := u.Query()
	for k := range q {
		if isSecretName(k) {
			q.Del(k)
		}
	}
	u.RawQuery, u.Fragment = q.Encode(), ""
	return u.String()
}

// sessionTransport answers the capturing request with the page it gave and every other request
// with body: the crawl check's transport for an entry that captures.
func sessionTransport(c *capturing, body []byte) http.RoundTripper {
	if c == nil {
		return pageTransport(body)
	}
	capPage, rows := pageTransport(c.body), pageTransport(body)
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodGet && r.URL.String() == c.req.URL {
			return capPage.RoundTrip(r)
		}
		return rows.RoundTrip(r)
	})
}
