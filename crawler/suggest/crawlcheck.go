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
		Logger: slog.New(slog.DiscardHandler), Transport: pageTransport(a.page.Body),
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
