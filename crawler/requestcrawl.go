package crawler

// The pages of a site's request templates (site.Site.PageRequests expands them): the login first
// when one is declared, each request scheduled once, its answer read as rows, a page not yet open,
// an expired login (logged in again, once per page) or a failure attributed to its page set
// (pageset.go).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"slices"

	"github.com/gocolly/colly/v2"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
)

// Keys of the colly request context for requests of a site's request templates.
const (
	setKey     = "golf-crawler.set" // int: the page set
	pageKeyKey = "golf-crawler.key" // string: site.PageRequest.key
	origURLKey = "golf-crawler.url" // string: the URL as requested (before redirects)
	// string: the URL its listings carry: origURLKey without the parameters that hold a captured
	// value or a credential
	listingURLKey = "golf-crawler.listing-url"
	loginGenKey   = "golf-crawler.login-gen" // int: the login generation the request was sent under
	reloggedKey   = "golf-crawler.relogged"  // bool: the page already got a fresh login
)

// PageReport is what one page of a crawl gave, for CollectDeps.OnPage (`crawler try`).
type PageReport struct {
	Request  string            // the URL, or method, URL and body
	Status   int               // 0: no response
	Body     []byte            // the response decoded to UTF-8 (decodeBody); nil when none
	Vars     *site.RequestVars // the page set's variables; nil for a site without requests
	Listings []events.Listing
	Rejected []RejectedRow
	Empty    bool  // no rows, and a sold-out answer: one of empty_when held (JSON), the list shown (HTML)
	NotOpen  bool  // the answer says the date is not open for booking yet (not_open, json.not_open_when)
	Err      error // the page failed; nil otherwise
	// Sources, beside Listings, are the sources that gave each listing's cells whose field has
	// fallbacks (cell name → selector, path or "value"); nil without such a field.
	Sources []map[string]string
	// OtherDate counts the rows of another play date than the page's, dropped (site.ListingOrReject).
	OtherDate int
	// Grid are the page's rows as the rendered grid shows them (grid: true), cells inherited from
	// a row above marked ↑.
	Grid []string
	// Captured names the values the page captured (a capturing request); never their values.
	Captured []string
}

// report gives rep to CollectDeps.OnPage without the crawl's secrets: its request, body and
// rejected rows redacted.
func (cr *crawl) report(rep PageReport) {
	rep.Request = cr.secrets.redact(rep.Request)
	if rep.Vars != nil && len(rep.Vars.Env) > 0 {
		v := *rep.Vars
		v.Env = cr.site.HiddenEnv()
		rep.Vars = &v
	}
	if rep.Body != nil {
		rep.Body = []byte(cr.secrets.redact(string(rep.Body)))
	}
	for i, r := range rep.Rejected {
		rep.Rejected[i].Raw = cr.secrets.redact(r.Raw)
		if r.Err != nil {
			if msg := cr.secrets.redact(r.Err.Error()); msg != r.Err.Error() {
				rep.Rejected[i].Err = errors.New(msg)
			}
		}
	}
	cr.deps.OnPage(rep)
}

// RejectedRow is a row that did not make a listing: its reason (a Reject* constant), its raw
// cells and the normaliser's error.
type RejectedRow struct {
	Reason string
	Raw    string
	Err    error
}

// startRequests starts the crawl: the login when declared, then every start URL and request.
func (cr *crawl) startRequests(ctx context.Context, urls []string) error {
	reqs, sets, err := cr.site.PageRequests(cr.crawledAt)
	if err != nil {
		return err
	}
	cr.sets, cr.failedSets = sets, map[int]bool{}
	cr.attributed = map[string]bool{}
	if reqs, err = cr.withEnv(reqs); err != nil {
		for _, pr := range reqs {
			cr.failSet(pr.Key(), pr.Set, 0, nil, fmt.Errorf("not fetched: %w", err))
		}
		return nil
	}
	if cr.site.Login != nil || cr.site.Captures() {
		// the login's session, and the one a capturing request may start (a CSRF token's)
		jar, err := cookiejar.New(nil)
		if err != nil {
			return fmt.Errorf("cookie jar: %w", err)
		}
		cr.jar = jar
		cr.c.SetCookieJar(jar)
	}
	if cr.site.Login != nil {
		if err := cr.startSession(ctx, cr.deps.Transport); err != nil {
			cr.log.WarnContext(ctx, "login failed: every page of the crawl fails", "err", cr.secrets.redact(err.Error()))
		}
	}
	for _, u := range urls {
		if cr.deps.Sets != nil {
			break // a start URL has no page set: a partial crawl does not fetch it
		}
		if cr.deps.OnPage != nil {
			// `crawler try` reports every page: start URLs take the request path too (the same
			// parsing, no page set), which reports them.
			cr.visitRequest(site.PageRequest{Method: http.MethodGet, URL: u, Header: http.Header{}, Set: -1})
			continue
		}
		cr.visit(u)
	}
	if cr.site.Captures() {
		cr.sendCapturing(reqs)
		return nil
	}
	for _, pr := range reqs {
		if cr.deps.Sets != nil && !slices.Contains(cr.deps.Sets, pageSet(cr.site, sets[pr.Set])) {
			continue
		}
		cr.visitRequest(pr)
	}
	return nil
}

// withEnv is reqs (site.Site.PageRequests, the env block's values hidden) with the env block's
// values read from the environment (site/env.go): they join the crawl's secrets and its page
// sets' variables, and every request is expanded again with them (by sendCapturing, for a site
// that captures). An unset variable is the error
// (reqs as they are): no page is fetched without the values the site needs.
func (cr *crawl) withEnv(reqs []site.PageRequest) ([]site.PageRequest, error) {
	if len(cr.site.Env) == 0 {
		return reqs, nil
	}
	values, err := cr.site.EnvValues(cr.deps.Getenv)
	if err != nil {
		return reqs, err
	}
	for _, v := range values {
		cr.secrets.add(v)
	}
	for i := range cr.sets {
		cr.sets[i].Env = values
	}
	if cr.site.Captures() {
		return reqs, nil // sendCapturing expands each request with its set's variables
	}
	out := make([]site.PageRequest, 0, len(reqs))
	for _, pr := range reqs {
		real, err := cr.site.Expand(pr.Tmpl, cr.sets[pr.Set])
		if err != nil {
			return reqs, err
		}
		real.Set = pr.Set
		out = append(out, real)
	}
	return out, nil
}

// visitRequest schedules one request unless it was already scheduled or max_pages is reached.
func (cr *crawl) visitRequest(pr site.PageRequest) {
	key := cr.secrets.redact(pr.Key()) // a captured value, or a credential, shows as ***
	if !cr.claim(key, "request") {
		return
	}

	rctx := colly.NewContext()
	rctx.Put(attemptKey, 0)
	rctx.Put(setKey, pr.Set)
	rctx.Put(pageKeyKey, key)
	rctx.Put(origURLKey, pr.URL)
	rctx.Put(listingURLKey, site.DropParams(pr.ListingURL(), cr.secrets.holds))
	if cr.sess != nil {
		gen, err := cr.sess.generation()
		if err != nil {
			cr.failSet(key, pr.Set, 0, nil, fmt.Errorf("not fetched: %w", err))
			return
		}
		rctx.Put(loginGenKey, gen)
	}
	body, hdr := requestParts(pr)
	if err := scheduleErr(cr.c.Request(pr.Method, pr.URL, body, rctx, hdr)); err != nil {
		cr.failSet(key, pr.Set, 0, nil, err)
	}
}

// requestParts are the body (nil without one) and a copy of the headers a request is sent with.
func requestParts(pr site.PageRequest) (io.Reader, http.Header) {
	var body io.Reader
	if len(pr.Body) > 0 {
		body = bytes.NewReader(pr.Body)
	}
	hdr := pr.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	return body, hdr
}

// failSet records a failed page of page set set (-1: none) and reports it.
func (cr *crawl) failSet(key string, set, status int, body []byte, err error) {
	if msg := cr.secrets.redact(err.Error()); msg != err.Error() {
		err = &pageFailure{failReason(err), errors.New(msg)} // the reason survives; the secret does not
	}
	cr.fail(key, status, err)
	cr.mu.Lock()
	if set >= 0 {
		cr.failedSets[set] = true
		cr.attributed[key] = true
	}
	cr.mu.Unlock()
	if cr.deps.OnPage != nil {
		cr.report(PageReport{Request: key, Status: status, Body: body, Vars: cr.vars(set), Err: err})
	}
}

func (cr *crawl) vars(set int) *site.RequestVars {
	if set < 0 || set >= len(cr.sets) {
		return nil
	}
	return &cr.sets[set]
}

// onRequestResponse handles the response of a request of the site's requests; it returns false
// for a page of start_urls or url_template, which onResponse handles as before.
func (cr *crawl) onRequestResponse(r *colly.Response) bool {
	key, ok := r.Ctx.GetAny(pageKeyKey).(string)
	if !ok {
		return false
	}
	set, _ := r.Ctx.GetAny(setKey).(int)
	cr.deps.Metrics.PageFetched(cr.site.Name, r.StatusCode)
	if len(r.Body) > cr.site.Politeness.MaxBodyBytes {
		cr.failSet(key, set, r.StatusCode, nil, fmt.Errorf("body is larger than max_body_bytes (%d)", cr.site.Politeness.MaxBodyBytes))
		return true
	}
	body, dec := decodeBody(cr.site, responseContentType(r.Headers), r.Body)
	if cr.sess != nil && isLoginPage(cr.site.Login, r.StatusCode, body) {
		cr.loginPage(r, key, set)
		return true
	}
	if (cr.site.NotOpen != nil && pageMatches(*cr.site.NotOpen, r.StatusCode, body)) ||
		(cr.site.JSON != nil && notOpen(cr.site.JSON, body)) {
		cr.notOpenPage(key, set, r.StatusCode, body)
		return true
	}
	var (
		rows  []site.RawRow
		links []string
		grid  []string
		err   error
		empty bool
	)
	if cr.site.Format == site.FormatJSON {
		rows, err = parseJSONPage(cr.site, body, cr.crawledAt)
		switch {
		case errors.Is(err, errEmptyPage):
			empty, err = true, nil
		case err != nil:
			err = &pageFailure{FailBadAnswer, err}
		}
	} else {
		var pg page
		pg, err = parsePage(cr.site, r.Request.URL, tableFragment(body), cr.deps.ListHint, cr.crawledAt)
		if err == nil {
			err = cr.seen(pg)
		}
		rows, links, grid = pg.Rows, pg.Links, pg.Grid
		empty = err == nil && len(rows) == 0
	}
	if err == nil {
		err = checkDecoded(cr.site, rows, dec)
	}
	if err != nil {
		cr.failSet(key, set, r.StatusCode, body, err)
		return true
	}
	pageURL, _ := r.Ctx.GetAny(listingURLKey).(string)
	vars := cr.vars(set)
	rep := PageReport{Request: key, Status: r.StatusCode, Body: body, Vars: vars, Empty: empty, Grid: grid}
	markers := 0
	for _, row := range rows {
		lr := cr.site.FromRequest(row, vars, pageURL, cr.crawledAt)
		if lr.OtherDate {
			rep.OtherDate++ // a row of another date than the page's: the page of that date has it
			continue
		}
		if lr.Err != nil && site.SoldOutMarker(row, lr.Reason) {
			markers++ // a sold-out date's marker row (empty_when): no listing and no reject
			continue
		}
		if lr.Err != nil {
			cr.deps.Metrics.RowRejected(cr.site.Name, lr.Reason)
			cr.log.WarnContext(cr.ctx, "row skipped", "url", key, "reason", lr.Reason, "raw", lr.Raw, "err", lr.Err)
			rep.Rejected = append(rep.Rejected, RejectedRow{Reason: lr.Reason, Raw: lr.Raw, Err: lr.Err})
			continue
		}
		rep.Listings = append(rep.Listings, lr.Listing)
		if lr.Sources != nil || rep.Sources != nil {
			rep.Sources = append(rep.Sources[:len(rep.Sources):len(rep.Sources)], make([]map[string]string, len(rep.Listings)-len(rep.Sources))...)
			rep.Sources[len(rep.Listings)-1] = lr.Sources
		}
	}
	if markers > 0 && markers == len(rows) {
		rep.Empty, empty = true, true
	}
	cr.mu.Lock()
	cr.res.Pages++
	cr.res.Rows += len(rows)
	cr.res.Rejected += len(rep.Rejected)
	cr.res.OtherDateRows += rep.OtherDate
	for _, l := range rep.Listings {
		if _, dup := cr.listings[l.Key()]; !dup {
			cr.listings[l.Key()] = l
		}
	}
	cr.mu.Unlock()
	cr.log.DebugContext(cr.ctx, "page parsed", "url", key, "rows", len(rows), "rejected", len(rep.Rejected),
		"other_date", rep.OtherDate, "links", len(links), "empty", empty)
	if cr.deps.OnPage != nil {
		cr.report(rep)
	}
	for _, link := range links {
		cr.visitRequest(site.PageRequest{Method: http.MethodGet, URL: link, Header: http.Header{}, Set: set})
	}
	return true
}

// onRequestError handles a failed fetch of a request of the site's requests, like onError does
// for the others, and a login status (401, 403 as declared) with one fresh login.
func (cr *crawl) onRequestError(r *colly.Response, err error) bool {
	key, ok := r.Ctx.GetAny(pageKeyKey).(string)
	if !ok {
		return false
	}
	set, _ := r.Ctx.GetAny(setKey).(int)
	cr.deps.Metrics.PageFetched(cr.site.Name, r.StatusCode)
	if cr.ctx.Err() != nil {
		cr.failSet(key, set, r.StatusCode, nil, cr.ctx.Err())
		return true
	}
	if cr.sess != nil && slices.Contains(cr.site.Login.Page.Statuses, r.StatusCode) {
		cr.loginPage(r, key, set)
		return true
	}
	if cr.site.NotOpen != nil && slices.Contains(cr.site.NotOpen.Statuses, r.StatusCode) {
		cr.notOpenPage(key, set, r.StatusCode, r.Body)
		return true
	}
	if stop, spent := cr.backOff(r, key, err); stop != nil {
		var body []byte
		if spent {
			body = r.Body
		}
		cr.failSet(key, set, r.StatusCode, body, stop)
		return true
	}
	cr.retryRequest(r, key, set)
	return true
}

// loginPage handles a page that answered with the login page: one fresh login (shared with the
// other pages that saw the same expiry) and one more fetch; the login page again fails the page.
func (cr *crawl) loginPage(r *colly.Response, key string, set int) {
	if done, _ := r.Ctx.GetAny(reloggedKey).(bool); done {
		cr.failSet(key, set, r.StatusCode, nil, errors.New("the site answered with its login page again after a fresh login"))
		return
	}
	gen, _ := r.Ctx.GetAny(loginGenKey).(int)
	if err := cr.relogin(gen); err != nil {
		cr.failSet(key, set, r.StatusCode, nil, fmt.Errorf("the site answered with its login page and the login failed: %w", err))
		return
	}
	newGen, _ := cr.sess.generation()
	r.Ctx.Put(reloggedKey, true)
	r.Ctx.Put(loginGenKey, newGen)
	cr.retryRequest(r, key, set)
}

// retryRequest fetches the request again as it was first sent (colly's Request.URL follows
// redirects, a login redirect included).
func (cr *crawl) retryRequest(r *colly.Response, key string, set int) {
	if orig, ok := r.Ctx.GetAny(origURLKey).(string); ok {
		if u, err := url.Parse(orig); err == nil {
			r.Request.URL = u
		}
	}
	if err := r.Request.Retry(); err != nil {
		cr.failSet(key, set, 0, nil, fmt.Errorf("retry: %w", err))
	}
}

// tableFragment wraps an HTML fragment of table rows (an AJAX answer starting with <tr>, <td>,
// <tbody> or <thead>) in a table: an HTML parser drops row and cell tags outside one, and the
// rows would be lost.
func tableFragment(body []byte) []byte {
	b := bytes.TrimLeft(body, " \t\r\n\ufeff")
	for _, tag := range []string{"<tr", "<td", "<tbody", "<thead", "<TR", "<TD", "<TBODY", "<THEAD"} {
		if bytes.HasPrefix(b, []byte(tag)) && len(b) > len(tag) && (b[len(tag)] == '>' || b[len(tag)] == ' ' || b[len(tag)] == '\t' || b[len(tag)] == '\n') {
			out := make([]byte, 0, len(body)+15)
			out = append(out, "<table>"...)
			out = append(out, body...)
			return append(out, "</table>"...)
		}
	}
	return body
}

// notOpenPage records a page that says its date is not open for booking yet: it counts as fetched,
// shows nothing and fails nothing; its page set closes nothing (Result.NotOpenSets).
func (cr *crawl) notOpenPage(key string, set, status int, body []byte) {
	cr.mu.Lock()
	cr.res.Pages++
	if cr.notOpen == nil {
		cr.notOpen = map[int]bool{}
	}
	cr.notOpen[set] = true
	cr.mu.Unlock()
	if m, ok := cr.deps.Metrics.(NotOpenMetrics); ok {
		m.PageNotOpen(cr.site.Name)
	}
	cr.log.InfoContext(cr.ctx, "date not open for booking yet: the page opens and closes nothing", "url", key, "status", status)
	if cr.deps.OnPage != nil {
		cr.report(PageReport{Request: key, Status: status, Body: body, Vars: cr.vars(set), NotOpen: true})
	}
}

// TableFragment is tableFragment for other packages (crawler/suggest reads pages as a crawl does).
func TableFragment(body []byte) []byte { return tableFragment(body) }
