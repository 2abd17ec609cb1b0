package site

import (
	"strings"
	"testing"
)

// The charset key takes the WHATWG labels and the Korean aliases, case-insensitive; an unknown
// label fails the sites file with its line (`crawler check` reports it).
func TestCharsetKeyIsChecked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ label, err string }{
		{"euc-kr", ""}, {"CP949", ""}, {"x-windows-949", ""}, {"utf-8", ""},
		{"klingon", `line 5: charset: unknown charset "klingon"`},
		{"[euc-kr]", "line 5: charset must be a label"},
	} {
		yml := "sites:\n  - name: enc\n    start_urls: [\"http://127.0.0.1/\"]\n    row: tr\n    charset: " + tc.label +
			"\n    fields: {course: {selector: td}, round_date: {selector: td}, tee_time: {selector: td}}\n"
		sites, err := ParseSites([]byte(yml))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.label, err)
		case tc.err == "" && string(sites[0].Charset) != tc.label:
			t.Errorf("%s: charset %q", tc.label, sites[0].Charset)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v, want %q", tc.label, err, tc.err)
		}
	}
	s := SiteSpec{Name: "x", StartURLs: []string{"http://127.0.0.1/"}, Row: "tr", Charset: "klingon"}
	if _, err := s.Compile(); err == nil || !strings.Contains(err.Error(), "unknown charset") {
		t.Errorf("Compile of a hand-built site with an unknown charset: %v", err)
	}
}
