package suggest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// bigHTML is a page as big as a real club's month: one table of n rows of the ordinary shape (course, date, time,
// price, players).
func bigHTML(n int) []byte { return bigHTMLPrices(n, false) }

// bigHTMLPrices is bigHTML, with a struck-through list price before the price when list is set:
// two price columns, which the analysis reads through the crawler's parser to decide.
func bigHTMLPrices(n int, list bool) []byte {
	var b strings.Builder
	b.WriteString(`<html><body><table id="res"><tr><th>골프장</th><th>날짜</th><th>시간</th>`)
	if list {
		b.WriteString(`<th>정가</th>`)
	}
	b.WriteString(`<th>그린피</th><th>인원</th></tr>`)
	for i := range n {
		price := 100000 + i%50*1000
		fmt.Fprintf(&b, `<tr class="slot"><td class="club">레이크 CC</td><td class="d">12/05(토)</td><td class="t">%02d:%02d</td>`, 5+i/60%14, i%60)
		if list {
			fmt.Fprintf(&b, `<td class="l"><del>%d원</del></td>`, price+30000)
		}
		fmt.Fprintf(&b, `<td class="p">%d원</td><td class="n">4</td></tr>`, price)
	}
	b.WriteString(`</table></body></html>`)
	return []byte(b.String())
}

// bigJSON is the same rows as a JSON API answers them.
func bigJSON(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"code":"0000","list":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"club":"레이크 CC","teeTime":"%02d:%02d","greenFee":"%d","players":4}`, 5+i/60%14, i%60, 100000+i%50*1000)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// The analysis of the rows ends with its context (on a big page Ctrl-C and SIGTERM did nothing):
// on a big page with a cancelled context it returns the context's error instead of an answer.
func TestRowAnalysisEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	const n = 20000
	if _, _, err := findHTMLRows(ctx, bigHTML(n)); !errors.Is(err, context.Canceled) {
		t.Errorf("HTML rows with a cancelled context: err %v, want context.Canceled", err)
	}
	if _, _, err := findJSONRows(ctx, bigJSON(n)); !errors.Is(err, context.Canceled) {
		t.Errorf("JSON rows with a cancelled context: err %v, want context.Canceled", err)
	}
	a := analysis{o: Options{}, date: time.Now(), say: func(string, ...any) {}, page: Page{Body: bigHTML(n)}}
	a.out = &site.SiteSpec{}
	if err := a.rows(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("the analysis with a cancelled context: err %v, want context.Canceled", err)
	}
}
