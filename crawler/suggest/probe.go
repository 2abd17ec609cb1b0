package suggest

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/tidwall/gjson"

	"github.com/golfcrawler/golf-crawler/crawler"
)

// probeEmpty asks for a date far ahead, which no site has opened yet, to learn what an empty
// answer looks like: for JSON the empty_when condition and, from a result code that both answers
// share, json.success; for HTML whether the list element is still there.
func (a *analysis) probeEmpty(ctx context.Context) error {
	if !a.t.dateFound {
		a.say("probe-empty: skipped, the request names no date to move")
		return nil
	}
	if a.missing != nil && (a.out.JSON == nil && a.out.Row == "") {
		return nil
	}
	far := a.date.AddDate(0, 0, ProbeDays)
	page, err := a.o.Fetcher.Fetch(ctx, a.t.req, a.t.target, far, a.t.secret)
	if err != nil {
		return err
	}
	a.say("probe-empty: fetched %s (%s, %d days ahead): status %d, %d bytes", page.Request, far.Format("2006-01-02"), ProbeDays, page.Status, len(page.Body))
	if page.Err != nil {
		a.say("probe-empty: the far-ahead page failed (%v); a sold-out date may fail the crawl", page.Err)
		return nil
	}
	if a.isJSON {
		a.emptyJSON(a.page.Body, page.Body)
		return nil
	}
	a.emptyHTML(page.Body)
	return nil
}

var (
	reCodeName = regexp.MustCompile(`(?i)(code|result|status|success|msg|message|rtn|ret)`)
	reCode     = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,20}$`) // a code, not a sentence
)

func (a *analysis) emptyJSON(full, empty []byte) {
	j := a.out.JSON
	rows := gjson.GetBytes(empty, j.Rows)
	if rows.IsArray() && len(rows.Array()) > 0 {
		a.say("probe-empty: the far-ahead date has %d rows too; what an empty answer looks like is unknown (empty_when left out)", len(rows.Array()))
		return
	}
	fullDoc, emptyDoc := gjson.ParseBytes(full), gjson.ParseBytes(empty)
	var differs *crawler.JSONCondition
	emptyDoc.ForEach(func(k, v gjson.Result) bool {
		name := k.String()
		if !reCodeName.MatchString(name) || v.IsObject() || v.IsArray() || v.Type == gjson.Null {
			return true
		}
		fv := fullDoc.Get(gjsonPath([]string{name}))
		path := gjsonPath([]string{name})
		switch {
		case !fv.Exists():
		case fv.String() == v.String() && j.Success == nil && strings.Contains(strings.ToLower(name), "code"):
			j.Success = &crawler.JSONCondition{Path: path, Equals: v.String()}
			a.say("json.success ← %s equals %q: the result code of both the answer with rows and the empty one", path, v.String())
		case fv.String() != v.String() && differs == nil && v.Type == gjson.String:
			differs = &crawler.JSONCondition{Path: path, Equals: v.String()}
			a.say("empty_when ← %s equals %q: it says %q when there are rows", path, v.String(), fv.String())
			if j.Success == nil && reCode.MatchString(fv.String()) {
				j.Success = &crawler.JSONCondition{Path: path, Equals: fv.String()}
				a.say("json.success ← %s equals %q: what the answer with rows says (an error answer fails the page)", path, fv.String())
			}
		}
		return true
	})
	if differs != nil {
		j.EmptyWhen = []crawler.JSONCondition{*differs}
		return
	}
	j.EmptyWhen = []crawler.JSONCondition{emptyCond(emptyDoc, j.Rows)}
	a.say("empty_when ← %s is %s: so the empty answer reads", j.EmptyWhen[0].Path, j.EmptyWhen[0].Is)
	if j.Success == nil {
		a.successFromShared(fullDoc, emptyDoc)
	}
}

// successFromShared sets json.success to a status-like member both answers share: without one,
// an is-condition would also hold for an error answer that lacks the rows (crawler check warns).
func (a *analysis) successFromShared(full, empty gjson.Result) {
	empty.ForEach(func(k, v gjson.Result) bool {
		name := k.String()
		if !reCodeName.MatchString(name) || v.IsObject() || v.IsArray() || v.Type == gjson.Null {
			return true
		}
		path := gjsonPath([]string{name})
		if fv := full.Get(path); fv.Exists() && fv.String() == v.String() {
			a.out.JSON.Success = &crawler.JSONCondition{Path: path, Equals: v.String()}
			a.say("json.success ← %s equals %q: both answers say it", path, v.String())
			return false
		}
		return true
	})
	if a.out.JSON.Success == nil {
		a.say("json.success: no member that both answers share says success; an error answer without %s would read as sold out (crawler check warns)", a.out.JSON.EmptyWhen[0].Path)
	}
}

// emptyCond is the condition the empty answer meets at the rows path: the shortest prefix that
// is null or absent, else the rows being empty.
func emptyCond(doc gjson.Result, rows string) crawler.JSONCondition {
	parts := splitPath(rows)
	for i := 1; i <= len(parts); i++ {
		p := strings.Join(parts[:i], ".")
		v := doc.Get(p)
		if !v.Exists() || v.Type == gjson.Null {
			return crawler.JSONCondition{Path: p, Is: "null"}
		}
	}
	return crawler.JSONCondition{Path: rows, Is: "empty"}
}

// splitPath splits a gjson path at its unescaped dots.
func splitPath(p string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			cur.WriteByte(p[i])
			cur.WriteByte(p[i+1])
			i++
		case p[i] == '.':
			out = append(out, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(p[i])
		}
	}
	return append(out, cur.String())
}

func (a *analysis) emptyHTML(body []byte) {
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(crawler.TableFragment(body)))
	if err != nil {
		return
	}
	n := 0
	doc.Find(a.out.Row).Each(func(_ int, row *goquery.Selection) {
		cell := row
		if f := a.out.Fields["tee_time"]; f.Selector != "" {
			cell = row.Find(f.Selector).First()
		}
		if tee := cells["tee_time"]; slices.ContainsFunc(tee.Shapes(), func(sh crawler.Shape) bool { return sh.Match(cell.Text()) }) {
			n++
		}
	})
	hr, _, _ := findHTMLRows(a.page.Body)
	listThere := hr.list == "" || doc.Find(hr.list).Length() > 0
	switch {
	case n > 0:
		a.say("probe-empty: the far-ahead page has %d rows with a tee time too", n)
	case listThere:
		a.say("probe-empty: the far-ahead page has no rows and still has %s: an empty day reads as sold out", hr.list)
	case a.notOpen(body):
	default:
		a.say("probe-empty: the far-ahead page lacks %s: a sold-out day would read as a failed page", hr.list)
	}
}

// reAlert is the message of a page that only alerts and goes back, as classic club sites answer
// a date past their booking window: <script>alert('예약 가능한 일자가 아닙니다.');history.back();</script>.
var reAlert = regexp.MustCompile(`alert\(\s*['"]([^'"]{2,80})['"]\s*\)`)

// notOpen proposes not_open from a far-ahead answer that only alerts: such a date is not open yet,
// not sold out. It needs requests (a url_template page cannot be attributed to its date).
func (a *analysis) notOpen(body []byte) bool {
	m := reAlert.FindSubmatch(body)
	if m == nil {
		return false
	}
	text := strings.TrimRight(crawler.CleanText(string(m[1])), ".")
	if len(a.out.Requests) == 0 {
		a.say("probe-empty: the far-ahead page only alerts %q: a date not open yet; not_open needs requests, so declare the page as requests and add not_open: {contains: %q}", text, text)
		return true
	}
	a.out.NotOpen = &crawler.PageMatch{Contains: text}
	a.say("not_open ← contains %q: the far-ahead page only alerts it, so such a date is not open yet: it opens and closes nothing", text)
	return true
}

// charset is the page's declared charset when it is not UTF-8, for the charset: key.
func (a *analysis) charset(body []byte) string {
	cs := declaredCharset(body)
	if cs == "" || strings.EqualFold(cs, "utf-8") || strings.EqualFold(cs, "utf8") {
		return ""
	}
	_, name, err := crawler.LookupCharset(cs)
	if err != nil {
		a.say("charset: the page declares %q, which the crawler does not know (%v); left out", cs, err)
		return ""
	}
	if strings.EqualFold(name, "utf-8") {
		return ""
	}
	a.say("charset ← %s: the page declares %s in its <meta> (the crawler reads it there too; the key makes it explicit)", strings.ToLower(cs), cs)
	return strings.ToLower(cs)
}

var reMetaCharset = regexp.MustCompile(`(?i)<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_-]+)`)

// declaredCharset is the charset a page's <meta> declares in its first 1024 bytes.
func declaredCharset(body []byte) string {
	head := body[:min(len(body), 1024)]
	if m := reMetaCharset.FindSubmatch(head); m != nil {
		return string(m[1])
	}
	return ""
}
