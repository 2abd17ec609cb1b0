package suggest

import (
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// BenchmarkSuggestRows is the row analysis (rows and fields of a fetched page, one table of the
// ordinary shape) on 2,000 and 20,000 rows side by side in each iteration: ratio_20k/2k is about 10 when it
// is linear (it was quadratic: 1,000 rows 15 s, 20,000 still running after 653 s); the target is
// at most 12. ratio_read_20k/2k is the same for a table with a list price beside the price, whose
// two candidates are each read through the crawler's parser on the whole page.
func BenchmarkSuggestRows(b *testing.B) {
	small, big := bigHTML(2000), bigHTML(20000)
	smallRead, bigRead := bigHTMLPrices(2000, true), bigHTMLPrices(20000, true)
	analyse := func(body []byte) time.Duration {
		a := analysis{date: time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul()), say: func(string, ...any) {},
			page: Page{Body: body}, out: &site.SiteSpec{}}
		start := time.Now()
		if err := a.rows(b.Context()); err != nil || len(a.missing) > 0 {
			b.Fatalf("analysis: %v, missing %v", err, a.missing)
		}
		if a.out.Fields["price"].Selector != "td.p" {
			b.Fatalf("price ← %+v, want td.p", a.out.Fields["price"])
		}
		return time.Since(start)
	}
	var tSmall, tBig, tSmallRead, tBigRead time.Duration
	for b.Loop() {
		tSmall += analyse(small)
		tBig += analyse(big)
		tSmallRead += analyse(smallRead)
		tBigRead += analyse(bigRead)
	}
	b.ReportMetric(float64(tSmall.Milliseconds())/float64(b.N), "ms_2k")
	b.ReportMetric(float64(tBig.Milliseconds())/float64(b.N), "ms_20k")
	b.ReportMetric(float64(tBig)/float64(tSmall), "ratio_20k/2k")
	b.ReportMetric(float64(tSmallRead.Milliseconds())/float64(b.N), "ms_read_2k")
	b.ReportMetric(float64(tBigRead.Milliseconds())/float64(b.N), "ms_read_20k")
	b.ReportMetric(float64(tBigRead)/float64(tSmallRead), "ratio_read_20k/2k")
}
