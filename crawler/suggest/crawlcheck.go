package suggest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler"
	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
)

// crawlCheck runs the entry through the crawler's own parser on the answer suggest fetched (no
// request: a transport answers with that page), so that what suggest says it found is what a
// crawl reads: the listings of the play date, and each rejected row's reason.
func (a *analysis) crawlCheck(ctx context.Context, st *site.Site) {
	spec := st.SiteSpec
	spec.DaysAhead, spec.Charset, spec.NextPage, spec.Follow = 0, "", "", "" // the page is decoded already; one page
	spec.Politeness.NoDelay, spec.Politeness.NoRetry, spec.Politeness.IgnoreRobotsTxt = true, true, true
	if a.t.target != nil {
		spec.Targets = []site.Target{a.t.target}
	} else if len(spec.Targets) > 1 {
		spec.Targets = spec.Targets[:1]
	}
	one, err := spec.Compile()
	if err != nil {
		return
	}
	var (
		mu      sync.Mutex
		reports []crawler.PageReport
	)
	res, err := crawler.Collect(ctx, one, a.date.Add(12*time.Hour), crawler.CollectDeps{
		Logger: slog.New(slog.DiscardHandler), Transport: sessionTransport(a.capture, a.page.Body), Getenv: placeholders(spec.Env),
		OnPage: func(p crawler.PageReport) { mu.Lock(); reports = append(reports, p); mu.Unlock() },
	})
	if err != nil || len(reports) == 0 {
		return
	}
	reasons := map[string]int{}
	for _, p := range reports {
		for _, r := range p.Rejected {
			reasons[r.Reason]++
		}
	}
	if res.Rejected == 0 {
		a.say("crawl check: the crawler's parser reads %d listing(s) from the fetched page with this entry, no row rejected", len(res.Listings))
	} else {
		var rs []string
		for r, n := range reasons {
			rs = append(rs, fmt.Sprintf("%s %d", r, n))
		}
		sort.Strings(rs)
		a.say("crawl check: warning: the crawler's parser reads %d listing(s) from the fetched page with this entry and rejects %d row(s) (%s): "+
			"check the fields with crawler try --site %s --dump", len(res.Listings), res.Rejected, strings.Join(rs, ", "), st.Name)
	}
	if tee, n, total := sharedKeys(reports); n > 0 {
		a.say("undecided: %d of the page's %d rows that make a listing share its key (course, part, date, tee time) with another row: the entry reads them as one; "+
			"something the key lacks tells them apart (a course part?), and only the page can say what", n, total)
		if first, dup, m := a.sampledSharedKeys(); m > 0 {
			a.sayCollapsed(first, dup)
		} else {
			a.say("undecided: for one, two rows read as %s", tee)
			a.say("undecided: run again with what the page shows for one of them, its part included (put it for PART):")
			a.say("  %s", a.rerun(tee+" PART"))
		}
		a.contested = append(a.contested, "course_part")
	}
	var listings []events.Listing // in the page's order
	for _, p := range reports {
		listings = append(listings, p.Listings...)
	}
	for _, e := range a.examples {
		if !slices.ContainsFunc(listings, func(l events.Listing) bool { return e.readBy(l, a.date) }) {
			a.say("undecided: the entry reads no listing that shows all of --example %q: check the fields with crawler try --site %s --dump", e.given, st.Name)
			a.contested = append(a.contested, "examples")
		}
	}
	a.preview(listings)
}

// sampledSharedKeys counts the sampled rows with a tee time whose listing key (as the entry reads the
// identity cells) another row has already, with the first such pair.
func (a *analysis) sampledSharedKeys() (first, dup, n int) {
	if len(a.cols) == 0 {
		return 0, 0, 0
	}
	key := func(r int) (string, bool) {
		k := ""
		for _, cell := range []string{"course", "course_part", "round_date", "tee_time"} {
			f, ok := a.out.Fields[cell]
			if !ok || f.Value != "" {
				continue
			}
			i := a.colOf(f)
			if i < 0 {
				return "", false
			}
			v := reading(cell, a.cols[i].values[r])
			if cell == "tee_time" && v == "" {
				return "", false
			}
			k += "\x00" + v
		}
		return k, true
	}
	seen := map[string]int{}
	for r := range a.cols[0].values {
		k, ok := key(r)
		if !ok {
			continue
		}
		if f, dupe := seen[k]; dupe {
			if n == 0 {
				first, dup = f, r
			}
			n++
			continue
		}
		seen[k] = r
	}
	return first, dup, n
}

// sharedKeys counts the rows of the pages read whose listing's key another row's listing has
// (the crawl keeps one of them), with the tee time of the first such.
func sharedKeys(reports []crawler.PageReport) (tee string, n, total int) {
	seen := map[string]bool{}
	for _, p := range reports {
		for _, l := range p.Listings {
			total++
			if seen[l.Key()] {
				if n == 0 {
					tee = l.TeeTime
				}
				n++
				continue
			}
			seen[l.Key()] = true
		}
	}
	return tee, n, total
}

// colOf is the sampled column a field reads (-1: none, or the field comes from the request).
func (a *analysis) colOf(f site.Field) int {
	return slices.IndexFunc(a.cols, func(c column) bool { return sameField(a.fieldOf(pickOf(c)), f) })
}

// sameField reports whether two fields read the same (their sources, attribute, regex, column,
// group and value).
func sameField(x, y site.Field) bool {
	return x.Selector == y.Selector && x.Attr == y.Attr && x.Regex == y.Regex && x.Path == y.Path && x.Value == y.Value &&
		x.Column == y.Column && x.Group == y.Group && x.GroupKey == y.GroupKey && slices.Equal(x.Fallbacks, y.Fallbacks)
}

// sayCollapsed shows two sampled rows that share a listing key, with the name-like columns that
// tell them apart, and the command to run again with an example naming the part.
func (a *analysis) sayCollapsed(first, r int) {
	var side []string
	example := ""
	for _, c := range a.cols {
		if x, y := site.CleanText(c.values[first]), site.CleanText(c.values[r]); x != y && c.fits(cells["course_part"], a.date).ok {
			side = append(side, fmt.Sprintf("%s %s | %s", c.label(), x, y))
			if example == "" {
				example = x
			}
		}
	}
	tee := ""
	if i := a.colOf(a.out.Fields["tee_time"]); i >= 0 {
		tee = site.CleanText(a.cols[i].values[first])
	}
	a.say("undecided: rows %d and %d both read as %s; the columns that differ: %s", first+1, r+1, tee, orNone(strings.Join(side, "; ")))
	a.say("undecided: run again with what the page shows for one of them, its part included (here %q, if the page shows that):", example)
	a.say("  %s", a.rerun(strings.TrimSpace(tee+" "+example)))
}

// previewRows is how many listings the preview shows.
const previewRows = 10

// previewColumns are the columns of the preview, by their header in crawler try's table.
var previewColumns = []string{"play_date", "tee_time", "course", "part", "price", "players"}

// preview ends what is said with the first listings as the crawler reads them from the fetched
// page, to compare with what the page shows.
func (a *analysis) preview(listings []events.Listing) {
	shown := map[string]site.ShownColumn{}
	for _, c := range site.Cells() {
		for _, sc := range c.Columns {
			shown[sc.Header] = sc
		}
	}
	a.say("compare with the page: the first %d of the %d listing(s) the crawler reads from it with this entry:", min(previewRows, len(listings)), len(listings))
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  "+strings.Join(previewColumns, "\t"))
	for _, l := range listings[:min(previewRows, len(listings))] {
		row := make([]string, len(previewColumns))
		for i, h := range previewColumns {
			row[i] = orDash(shown[h].Value(l))
		}
		fmt.Fprintln(tw, "  "+strings.Join(row, "\t"))
	}
	_ = tw.Flush() // a strings.Builder does not fail
	for _, line := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		a.say("%s", line)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// placeholders reads a value for each variable of an env block: the crawl check answers every
// request with the fetched page, so the values sent do not matter.
func placeholders(env map[string]string) func(string) string {
	return func(name string) string {
		for _, v := range env {
			if v == name {
				return "suggest-check"
			}
		}
		return ""
	}
}

// pageTransport answers every request with body (as UTF-8 HTML or JSON).
func pageTransport(body []byte) http.RoundTripper {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		ct := "text/html; charset=utf-8"
		if b := strings.TrimSpace(string(body[:min(len(body), 64)])); strings.HasPrefix(b, "{") || strings.HasPrefix(b, "[") {
			ct = "application/json; charset=utf-8"
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {ct}}, Request: r,
			Body: io.NopCloser(strings.NewReader(string(body))), ContentLength: int64(len(body))}, nil
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
