package suggest

import (
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

func TestLinkCall(t *testing.T) {
	for _, tc := range []struct {
		in   string
		fn   string
		args []string
	}{
		{`JavaScript:Book_time('20251229','1부','동코스','0630','145000')`, "Book_time", []string{"20251229", "1부", "동코스", "0630", "145000"}},
		{`javascript:goRes("c1p0", 3);`, "goRes", []string{"c1p0", "3"}},
		{`Book_time2('145,000', '', 7)`, "Book_time2", []string{"145,000", "", "7"}},
		{`javascript:void(0)`, "void", []string{"0"}},
		{`javascript:f(g(1))`, "", nil}, // a nested call is no list of values
		{`javascript:f()`, "", nil},
		{`/tee?date=20251229`, "", nil},
	} {
		fn, args, quotes, ok := linkCall(tc.in)
		if fn != tc.fn || !slices.Equal(args, tc.args) || ok != (tc.fn != "") {
			t.Errorf("linkCall(%q) = %q %q %v, want %q %q", tc.in, fn, args, ok, tc.fn, tc.args)
		}
		// Every argument is what linkWhere's regex reads from the attribute.
		for k, want := range tc.args {
			_, attr, re := splitWhere(linkWhere("a", "href", fn, k, quotes[k]))
			m := regexp.MustCompile(re).FindStringSubmatch(tc.in)
			if attr != "href" || m == nil || m[1] != want {
				t.Errorf("argument %d of %q: regex %s reads %q, want %q", k, tc.in, re, m, want)
			}
		}
	}
}

// TestPageReaderReadsLinkCandidates (issue 49, item 0): a row whose tee time is only right as an
// argument of its booking link. The page reader handed the link candidate's "sel @attr ~ regex"
// form to the CSS parser unsplit (`selector "a[onclick*=\"fnReserve(\"] @onclick ~ …" is
// invalid: expected identifier, found @`), so the candidate that was right in every row was
// never read; it is split as setField splits it, and reads every row's listing.
func TestPageReaderReadsLinkCandidates(t *testing.T) {
	body := []byte(`<table id="tee"><tr><th>코스</th><th>시간</th><th>예약</th></tr>` +
		`<tr><td rowspan="2">샤인</td><td>06:30</td><td><a href="#" onclick="fnReserve('20261205','0630','A')">예약</a></td></tr>` +
		`<tr><td>06:37</td><td><a href="#" onclick="fnReserve('20261205','0637','A')">예약</a></td></tr>` +
		`<tr><td>06:44</td><td><a href="#" onclick="fnReserve('20261205','0644','A')">예약</a></td></tr></table>`)
	hr, ok, err := findHTMLRows(t.Context(), body)
	if err != nil || !ok {
		t.Fatalf("rows: %v %v", ok, err)
	}
	where := linkWhere("a", "onclick", "fnReserve", 1, '\'')
	if !slices.ContainsFunc(hr.cols, func(c column) bool { return c.where == where }) {
		t.Fatalf("no column %s among %v", where, hr.cols)
	}
	a := &analysis{date: time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul()), page: Page{Body: body},
		out: &site.SiteSpec{Row: hr.row, List: hr.list}}
	got := a.pageReader(t.Context())(map[string]pick{"tee_time": {where: where}}, "tee_time")
	if got.err != nil || got.listings != 3 || got.rejected != 0 {
		t.Errorf("the link candidate reads %s, want 3 listings, none rejected", got)
	}
}
