package crawler

// The requests that capture a value for the requests after them (site/capture.go): a page set's
// requests are sent in order, each capturing one fetched once a crawl (the first page set that
// needs it fetches it; the others reuse what it captured, or its failure) before the requests
// that read it are scheduled. Captured values are secrets of the crawl: they join the login's in
// secretSet, which every log line, page failure, failed page key and crawler try report goes
// through, and a listing's URL drops the parameters that carry one.

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/PuerkitoBio/goquery"
	"github.com/gocolly/colly/v2"
	"github.com/tidwall/gjson"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// secretSet is a crawl's secrets: its login's credentials and the values its requests captured.
type secretSet struct {
	mu   sync.RWMutex
	list []string
}

// add adds the non-empty values.
func (s *secretSet) add(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range values {
		if v != "" && !slices.Contains(s.list, v) {
			s.list = append(s.list, v)
		}
	}
}

// redact is text with every secret replaced by ***.
func (s *secretSet) redact(text string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return redact(text, s.list)
}

// holds reports whether text contains a secret.
func (s *secretSet) holds(text string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range s.list {
		if strings.Contains(text, v) {
			return true
		}
	}
	return false
}

// captured is what one capturing request gave: its values, or why it gave none.
type captured struct {
	values map[string]string
	err    error
}

// capturer fetches the capturing requests of a crawl, each once.
type capturer struct {
	cr *crawl
	c  *colly.Collector // synchronous, over the crawl's cookie jar

	done map[string]captured // by request key
	// the last response, written by c's callbacks (one request at a time)
	status int
	hdr    http.Header
	body   []byte
	ferr   error
}

func (cr *crawl) newCapturer() (*capturer, error) {
	c, err := newCollector(cr.ctx, cr.site, cr.deps.Transport)
	if err != nil {
		return nil, err
	}
	c.Async = false
	c.AllowURLRevisit = true
	c.SetCookieJar(cr.jar)
	cp := &capturer{cr: cr, c: c, done: map[string]captured{}}
	c.OnResponse(func(r *colly.Response) {
		cp.status = r.StatusCode
		cp.body, _ = decodeBody(cr.site, responseContentType(r.Headers), r.Body)
	})
	c.OnError(func(r *colly.Response, err error) {
		cp.status, cp.ferr = r.StatusCode, err
		if r.Headers != nil {
			cp.hdr = *r.Headers
		}
	})
	return cp, nil
}

// sendCapturing schedules the requests of reqs (site.Site.PageRequests, the captured values
// hidden) page set by page set, in order: a capturing one is fetched first (once a crawl), the
// others are expanded again with what the requests before them captured. A capture that fails
// fails its page set; the set's later requests are not sent.
func (cr *crawl) sendCapturing(reqs []site.PageRequest) {
	cp, err := cr.newCapturer()
	if err != nil {
		for _, pr := range reqs {
			cr.failSet(pr.Key(), pr.Set, 0, nil, fmt.Errorf("not fetched: %w", err))
		}
		return
	}
	var values map[string]string
	set, skip := -1, false
	for _, pr := range reqs {
		if pr.Set != set {
			set, values, skip = pr.Set, nil, false
		}
		if skip {
			continue
		}
		vars := cr.sets[set]
		vars.Captured = values
		real, err := cr.site.Expand(pr.Tmpl, vars)
		if err != nil {
			cr.failSet(pr.Key(), set, 0, nil, fmt.Errorf("not fetched: %w", err))
			skip = true
			continue
		}
		real.Set = set
		caps := cr.site.Requests[pr.Tmpl].Capture
		if len(caps) == 0 {
			cr.visitRequest(real)
			continue
		}
		got := cp.capture(real, caps)
		if got.err != nil {
			cr.failSet(cr.secrets.redact(real.Key()), set, cp.status, nil, got.err)
			skip = true
			continue
		}
		values = withValues(values, got.values)
	}
}

// withValues is values with more added (a new map: the earlier one may be in use).
func withValues(values, more map[string]string) map[string]string {
	out := make(map[string]string, len(values)+len(more))
	for k, v := range values {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// capture fetches a capturing request (once a crawl: the same request again gets what the first
// fetch captured) and reads its captures; the values join the crawl's secrets.
func (cp *capturer) capture(pr site.PageRequest, caps map[string]site.Capture) captured {
	cr := cp.cr
	key := cr.secrets.redact(pr.Key())
	if got, ok := cp.done[key]; ok {
		return got
	}
	got := captured{}
	body, err := cp.fetch(pr, key)
	if err == nil {
		got.values, err = readCaptures(body, caps)
	}
	for _, v := range got.values {
		cr.secrets.add(v)
	}
	if err != nil {
		got.err = &pageFailure{FailCapture, err}
	}
	cp.done[key] = got
	cr.mu.Lock()
	cr.res.Pages++
	cr.mu.Unlock()
	if cr.deps.OnPage != nil {
		cr.report(PageReport{Request: key, Status: cp.status, Body: body, Err: got.err, Captured: slices.Sorted(maps.Keys(caps))})
	}
	if got.err == nil {
		cr.log.DebugContext(cr.ctx, "values captured", "url", key, "captured", strings.Join(slices.Sorted(maps.Keys(caps)), ","))
	}
	return got
}

// fetch sends the request, retrying like a page, and returns its answer decoded. A login page
// fails it.
func (cp *capturer) fetch(pr site.PageRequest, key string) ([]byte, error) {
	cr := cp.cr
	p := cr.site.Politeness
	for attempt := 0; ; attempt++ {
		cp.status, cp.hdr, cp.body, cp.ferr = 0, nil, nil, nil
		body, hdr := requestParts(pr)
		err := cp.c.Request(pr.Method, pr.URL, body, nil, hdr)
		cr.deps.Metrics.PageFetched(cr.site.Name, cp.status)
		ferr := cp.ferr
		if err != nil && ferr == nil {
			if errors.Is(err, colly.ErrRobotsTxtBlocked) {
				return nil, fmt.Errorf("%s refused by robots.txt (set ignore_robots_txt to opt out)", key)
			}
			ferr = err
		}
		if ferr == nil {
			if len(cp.body) > p.MaxBodyBytes {
				return nil, fmt.Errorf("body is larger than max_body_bytes (%d)", p.MaxBodyBytes)
			}
			if cr.sess != nil && isLoginPage(cr.site.Login, cp.status, cp.body) {
				return cp.body, errors.New("the site answered the capturing request with its login page")
			}
			return cp.body, nil
		}
		wait, retry := retryDelay(cp.status, cp.hdr, attempt, p.BackoffBase.D(), p.BackoffCap.D(), cr.deps.Now())
		if !retry || attempt >= p.Retries {
			return nil, fmt.Errorf("attempt %d of %d: status %d: %s", attempt+1, p.Retries+1, cp.status, cr.secrets.redact(ferr.Error()))
		}
		if err := cr.deps.Sleep(cr.ctx, wait); err != nil {
			return nil, err
		}
		cr.deps.Metrics.Retry(cr.site.Name)
		cr.mu.Lock()
		cr.res.Retries++
		cr.mu.Unlock()
	}
}

// readCaptures reads every capture of an answer. A capture that finds nothing, or an empty
// value, is an error naming it (never the answer's text: it may hold other secrets).
func readCaptures(body []byte, caps map[string]site.Capture) (map[string]string, error) {
	out := map[string]string{}
	var doc *goquery.Document
	for _, name := range slices.Sorted(maps.Keys(caps)) {
		c := caps[name]
		var v string
		var ok bool
		switch {
		case c.Selector != "":
			if doc == nil {
				var err error
				if doc, err = goquery.NewDocumentFromReader(bytes.NewReader(body)); err != nil {
					return nil, fmt.Errorf("capture %s: parse HTML: %w", name, err)
				}
			}
			sel := doc.Find(c.Selector).First()
			switch {
			case sel.Length() == 0:
			case c.Attr != "":
				v, ok = sel.Attr(c.Attr)
			default:
				v, ok = sel.Text(), true
			}
		case c.Path != "":
			if r := gjson.GetBytes(body, c.Path); r.Exists() {
				v, ok = jsonText(r), true
			}
		default:
			v, ok = string(body), true
		}
		if ok && c.Re() != nil {
			m := c.Re().FindStringSubmatch(v)
			v, ok = "", m != nil
			if ok {
				v = m[1]
			}
		}
		if v = strings.TrimSpace(v); !ok || v == "" {
			return nil, fmt.Errorf("capture %s (%s) found no value in the answer", name, describeCapture(c))
		}
		out[name] = v
	}
	return out, nil
}

func describeCapture(c site.Capture) string {
	var parts []string
	for _, kv := range [][2]string{{"selector", c.Selector}, {"attr", c.Attr}, {"path", c.Path}, {"regex", c.Regex}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+" "+kv[1])
		}
	}
	return strings.Join(parts, ", ")
}
