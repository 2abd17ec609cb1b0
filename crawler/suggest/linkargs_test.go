package suggest

import (
	"regexp"
	"slices"
	"testing"
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
