package suggest

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/tidwall/gjson"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// MaxProbes bounds the extra requests of the probe: the last date of the crawl's window, two
// more to find the last date with rows when that one has none, and the far-ahead date.
const MaxProbes = 4

// probed is one answer of the probe, with what its rows say.
type probed struct {
	date    time.Time
	page    Page
	rows    int      // rows with a tee time
	markers []string // texts of rows that match row but hold no tee time (HTML)
}

// probeEmpty learns what the dates without tee times answer: it asks for the last date of the
// crawl's window (and, when that has no rows, bisects for the last date that has), which shows a
// sold-out date's answer and whether days_ahead reaches past the site's booking window, and for
// a date far ahead, which no site has opened yet. From them: for JSON the empty_when condition
// and json.success (and json.not_open_when when the far-ahead answer differs from a sold-out
// one), for HTML empty_when from a sold-out marker row, not_open from an alert-only answer, and
// whether the list element is still there. At most MaxProbes requests, each after the
// politeness's delay.
func (a *analysis) probeEmpty(ctx context.Context) error {
	if !a.t.dateFound {
		a.say("probe-empty: skipped, the request names no date to move")
		return nil
	}
	if a.missing != nil && (a.out.JSON == nil && a.out.Row == "") {
		return nil
	}
	window, err := a.probeWindow(ctx)
	if err != nil {
		return err
	}
	far := a.date.AddDate(0, 0, ProbeDays)
	fp, err := a.probe(ctx, far)
	if err != nil {
		return err
	}
	a.say("probe-empty: fetched %s (%s, %d days ahead): status %d, %d bytes", fp.page.Request, far.Format("2006-01-02"), ProbeDays, fp.page.Status, len(fp.page.Body))
	soldOut, alike := a.soldOut(window, fp)
	if !a.isJSON {
		a.emptyWhenHTML(append(window, fp))
	}
	if fp.page.Err != nil {
		a.say("probe-empty: the far-ahead page failed (%v); a sold-out date may fail the crawl", fp.page.Err)
		if a.isJSON && soldOut == nil && alike != nil {
			soldOut = alike
		}
		if a.isJSON && soldOut != nil {
			a.emptyJSON(ctx, a.page.Body, soldOut.page.Body)
		}
		return nil
	}
	switch {
	case soldOut != nil:
		a.say("probe-empty: the far-ahead answer differs from %s's, a date of the window that answered no rows: the far date is not open yet, %s is sold out",
			soldOut.date.Format("2006-01-02"), soldOut.date.Format("2006-01-02"))
	case alike != nil:
		a.say("probe-empty: the far-ahead answer looks like %s's, a date of the window that answered no rows: one answer for both, so empty_when only (not_open would need them to differ)",
			alike.date.Format("2006-01-02"))
	default:
		a.say("probe-empty: no date of the window answered without rows, so the far-ahead answer is compared with none: not_open is not proposed")
	}
	if a.isJSON {
		switch {
		case soldOut != nil:
			a.emptyJSON(ctx, a.page.Body, soldOut.page.Body)
			a.notOpenJSON(soldOut.page.Body, fp.page.Body)
		case alike != nil:
			a.emptyJSON(ctx, a.page.Body, alike.page.Body)
		default:
			a.emptyJSON(ctx, a.page.Body, fp.page.Body)
			a.emptyListToo()
		}
		return nil
	}
	a.emptyHTML(fp, soldOut)
	return nil
}

// emptyListToo adds the rows being empty to empty_when when it only holds a code the far-ahead
// answer says: no sold-out date was seen, and one may answer the rows' own code with an empty
// list (after json.success held, an empty list then reads as sold out rather than failing).
func (a *analysis) emptyListToo() {
	j := a.out.JSON
	for _, c := range j.EmptyWhen {
		if c.Path == j.Rows && c.Is == "empty" {
			return
		}
	}
	j.EmptyWhen = append(j.EmptyWhen, site.JSONCondition{Path: j.Rows, Is: "empty"})
	a.say("empty_when ← %s is empty too: no sold-out date of the window was seen, and it may answer with an empty list", j.Rows)
}

// probe fetches the request for date after the politeness's delay; it counts towards MaxProbes.
func (a *analysis) probe(ctx context.Context, date time.Time) (probed, error) {
	a.probes++
	if a.probes > MaxProbes {
		return probed{}, fmt.Errorf("probe: more than %d extra requests", MaxProbes)
	}
	page, err := a.fetchAt(ctx, date)
	if err != nil {
		return probed{}, err
	}
	p := probed{date: date, page: page}
	if page.Err == nil {
		p.rows, p.markers = a.pageRows(ctx, page.Body)
	}
	return p, nil
}

// probeWindow asks for the last date of the crawl's window (today + days_ahead) and, when it
// answers no rows, bisects between the play date and it (two requests at most) for the last date
// that does; it warns when days_ahead reaches past that date.
func (a *analysis) probeWindow(ctx context.Context) ([]probed, error) {
	if a.out.DaysAhead <= 0 {
		return nil, nil
	}
	today := midnight(a.o.now())
	last := today.AddDate(0, 0, a.out.DaysAhead)
	play := midnight(a.date)
	if !last.After(play) {
		return nil, nil
	}
	lp, err := a.probe(ctx, last)
	if err != nil {
		return nil, err
	}
	out := []probed{lp}
	a.say("probe-window: fetched %s (%s, the last date of days_ahead %d): status %d, %d rows", lp.page.Request, last.Format("2006-01-02"), a.out.DaysAhead, lp.page.Status, lp.rows)
	if lp.rows > 0 || lp.page.Err != nil {
		return out, nil
	}
	lo, hi := play, last // lo answered rows, hi none
	for range 2 {
		if play.Before(today) || days(lo, hi) < 2 {
			break
		}
		mid := lo.AddDate(0, 0, days(lo, hi)/2)
		mp, err := a.probe(ctx, mid)
		if err != nil {
			return nil, err
		}
		out = append(out, mp)
		a.say("probe-window: fetched %s (%s): status %d, %d rows", mp.page.Request, mid.Format("2006-01-02"), mp.page.Status, mp.rows)
		switch {
		case mp.page.Err != nil:
			return out, nil
		case mp.rows > 0:
			lo = mid
		default:
			hi = mid
		}
	}
	if play.Before(today) {
		a.say("probe-window: warning: days_ahead %d reaches %s, which answered no rows (sold out, or past the site's booking window)", a.out.DaysAhead, last.Format("2006-01-02"))
		return out, nil
	}
	between := ""
	if days(lo, hi) > 1 {
		between = fmt.Sprintf(" (the dates between it and %s were not asked)", hi.Format("2006-01-02"))
	}
	a.say("probe-window: warning: days_ahead %d reaches %s, but the last date that answered rows is %s%s; %s and later answered none: "+
		"past the site's booking window (or sold out). Set days_ahead: %d to stop there, or keep it with not_open/empty_when below so that those dates keep the crawl complete",
		a.out.DaysAhead, last.Format("2006-01-02"), lo.Format("2006-01-02"), between, hi.Format("2006-01-02"), max(0, days(today, lo)))
	return out, nil
}

func midnight(t time.Time) time.Time {
	y, m, d := t.In(site.Seoul()).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, site.Seoul())
}

// days is the number of calendar days from a to b.
func days(a, b time.Time) int { return int(b.Sub(a).Round(24*time.Hour) / (24 * time.Hour)) }

// soldOut is the first probed date of the window that answered without rows, did not fail, and
// whose answer differs from the far-ahead one (another code or message, a table where it has
// none): a sold-out date, the far one not open yet. alike is the first such date whose answer
// looks like the far-ahead one (nil: none): then one answer says both.
func (a *analysis) soldOut(window []probed, far probed) (soldOut, alike *probed) {
	for i := range window {
		p := &window[i]
		if p.page.Err != nil || p.rows > 0 {
			continue
		}
		if far.page.Err == nil && a.lookAlike(p.page.Body, far.page.Body) {
			if alike == nil {
				alike = p
			}
			continue
		}
		if soldOut == nil {
			soldOut = p
		}
	}
	return soldOut, alike
}

// lookAlike reports whether two answers without rows say the same: for JSON the same result
// members (code, message, status: reCodeName) and the rows path alike (absent, null or empty);
// for HTML both only alerting the same message, or neither alerting.
func (a *analysis) lookAlike(x, y []byte) bool {
	if !a.isJSON {
		mx, my := reAlert.FindSubmatch(x), reAlert.FindSubmatch(y)
		return (mx == nil) == (my == nil) && (mx == nil || string(mx[1]) == string(my[1])) && a.hasList(x) == a.hasList(y)
	}
	dx, dy := gjson.ParseBytes(x), gjson.ParseBytes(y)
	same := true
	for _, d := range []gjson.Result{dx, dy} {
		for _, m := range a.resultMembers(d) {
			if dx.Get(m.path).String() != dy.Get(m.path).String() {
				same = false
			}
		}
	}
	rowsState := func(d gjson.Result) string {
		v := d.Get(a.out.JSON.Rows)
		switch {
		case !v.Exists() || v.Type == gjson.Null:
			return "null"
		case v.IsArray():
			return "array"
		}
		return "other"
	}
	return same && rowsState(dx) == rowsState(dy)
}

// hasList reports whether an HTML answer shows the element that holds the rows.
func (a *analysis) hasList(body []byte) bool {
	if a.out.List == "" {
		return true
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(crawler.TableFragment(body)))
	return err == nil && doc.Find(a.out.List).Length() > 0
}

// pageRows counts the rows of an answer that the entry reads as listings (the crawler's parser,
// so that a grid, grouped rows and link arguments count alike), and for HTML without one the
// texts of the rows that match row (a sold-out marker row).
func (a *analysis) pageRows(ctx context.Context, body []byte) (int, []string) {
	ls, _ := a.rowListings(ctx, body) // a page that fails has no rows
	if len(ls) > 0 || a.isJSON {
		return len(ls), nil
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(crawler.TableFragment(body)))
	if err != nil {
		return 0, nil
	}
	var markers []string
	doc.Find(a.out.Row).Each(func(_ int, row *goquery.Selection) {
		if text := site.CleanText(row.Text()); text != "" {
			markers = append(markers, text)
		}
	})
	return 0, markers
}

// emptyWhenHTML proposes empty_when from the marker rows the probed answers without tee times
// show: a row that matches row and holds no tee time is the page's sold-out marker.
func (a *analysis) emptyWhenHTML(pages []probed) {
	for _, p := range pages {
		if p.rows > 0 || len(p.markers) == 0 {
			continue
		}
		text := strings.TrimRight(p.markers[0], ".")
		a.out.EmptyWhen = []site.RowMark{{Contains: text}}
		a.say("empty_when ← contains %q: %s answered a row matching %q with no tee time (%q), the sold-out marker; "+
			"with the entry such a page is a sold-out answer, not a rejected row", text, p.date.Format("2006-01-02"), a.out.Row, p.markers[0])
		return
	}
}

// emptyHTML says what the far-ahead page shows; an alert-only one becomes not_open only when a
// date of the window answered otherwise without rows (differs).
func (a *analysis) emptyHTML(fp probed, soldOut *probed) {
	differs := soldOut != nil
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(crawler.TableFragment(fp.page.Body)))
	if err != nil {
		return
	}
	list := a.out.List
	listThere := list == "" || doc.Find(list).Length() > 0
	switch {
	case fp.rows > 0:
		a.say("probe-empty: the far-ahead page has %d rows with a tee time too", fp.rows)
	case listThere && len(fp.markers) > 0:
		a.say("probe-empty: the far-ahead page shows %s with only its marker row: an empty day reads as sold out with empty_when", list)
	case listThere:
		a.say("probe-empty: the far-ahead page has no rows and still has %s: an empty day reads as sold out", list)
	case a.notOpen(fp.page.Body, differs):
	case differs && a.notOpenText(fp, soldOut):
	default:
		a.say("probe-empty: the far-ahead page lacks %s: a sold-out day would read as a failed page", list)
	}
}

// notOpenText proposes not_open from a far-ahead page that lacks the list where a date of the
// window without rows (soldOut) shows it: the first text of the far page that the other does not
// show (a notice: "Tee times for this date are not available to members yet").
func (a *analysis) notOpenText(fp probed, soldOut *probed) bool {
	if soldOut == nil || len(a.out.Requests) == 0 {
		return false
	}
	shown := site.CleanText(string(soldOut.page.Body))
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(fp.page.Body))
	if err != nil {
		return false
	}
	text := ""
	doc.Find("body *").EachWithBreak(func(_ int, el *goquery.Selection) bool {
		if el.Children().Length() > 0 || goquery.NodeName(el) == "script" || goquery.NodeName(el) == "option" {
			return true
		}
		t := strings.TrimRight(site.CleanText(el.Text()), ".")
		if len([]rune(t)) >= 8 && len([]rune(t)) <= 80 && steady(t) && !strings.Contains(shown, t) {
			text = t
			return false
		}
		return true
	})
	if text == "" {
		return false
	}
	a.out.NotOpen = &site.PageMatch{Contains: text}
	a.say("not_open ← contains %q: the far-ahead page shows it and lacks %s, where %s's page without rows shows the list: a date not open yet, it opens and closes nothing",
		text, a.out.List, soldOut.date.Format("2006-01-02"))
	return true
}

// reAlert is the message of a page that only alerts and goes back, as classic club sites answer
// a date past their booking window: <script>alert('예약 가능한 일자가 아닙니다.');history.back();</script>.
var reAlert = regexp.MustCompile(`alert\(\s*['"]([^'"]{2,80})['"]\s*\)`)

// notOpen proposes not_open from a far-ahead answer that only alerts: such a date is not open yet,
// not sold out. It needs requests (a url_template page cannot be attributed to its date).
func (a *analysis) notOpen(body []byte, differs bool) bool {
	m := reAlert.FindSubmatch(body)
	if m == nil {
		return false
	}
	text := strings.TrimRight(site.CleanText(string(m[1])), ".")
	if !differs {
		a.say("probe-empty: the far-ahead page only alerts %q; not_open is not proposed (no date of the window answered otherwise without rows): if it is how a date not open yet answers, add not_open: {contains: %q}", text, text)
		return true
	}
	if len(a.out.Requests) == 0 {
		a.say("probe-empty: the far-ahead page only alerts %q: a date not open yet; not_open needs requests, so declare the page as requests and add not_open: {contains: %q}", text, text)
		return true
	}
	a.out.NotOpen = &site.PageMatch{Contains: text}
	a.say("not_open ← contains %q: the far-ahead page only alerts it, so such a date is not open yet: it opens and closes nothing", text)
	return true
}

// charset is the page's declared charset when it is not UTF-8, for the charset: key.
func (a *analysis) charset(body []byte) string {
	cs := declaredCharset(body)
	if cs == "" || strings.EqualFold(cs, "utf-8") || strings.EqualFold(cs, "utf8") {
		return ""
	}
	_, name, err := site.LookupCharset(cs)
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
