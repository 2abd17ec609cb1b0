package site

import "testing"

func TestDeriveList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ row, want string }{
		{"table.tee-list tr.tee-row", "table.tee-list"},
		{"#resList tr.res", "#resList"},
		{"#resList > tbody > tr", "#resList > tbody"},
		{"div.list  >  ul li.item", "div.list  >  ul"},
		{`div[data-x="a b"] tr`, `div[data-x="a b"]`},
		{"table#a tr.r, table#b tr.r", "table#a, table#b"},
		{"ul li:not(.a .b)", "ul"},
		{"tr.slot", ""},
		{"h2 + tr.slot", ""},
		{"table tr, tr.x", ""},
	} {
		got, ok := deriveList(tc.row)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("deriveList(%q) = %q, %v; want %q", tc.row, got, ok, tc.want)
		}
	}
}

// FuzzDeriveList: any row selector derives a list that compiles, or none.
func FuzzDeriveList(f *testing.F) {
	for _, s := range []string{"table.tee-list tr.tee-row", "#a > b", "a, b c", `x[y="a,b c"] z`, "a +b", `\ `} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, row string) {
		if list, ok := deriveList(row); ok && checkSelector(list) != nil {
			t.Fatalf("deriveList(%q) = %q, which does not compile", row, list)
		}
	})
}
