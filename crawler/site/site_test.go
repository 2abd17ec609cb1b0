package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadSitesShipped(t *testing.T) {
	t.Parallel()
	sites, err := LoadSites(filepath.Join("..", "..", DefaultSitesFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) != 5 || sites[0].Name != "sim-golf" {
		t.Fatalf("sites %+v, want five, sim-golf first", sites)
	}
	p := sites[0].Politeness
	if p.Parallelism != 2 || p.Retries != 3 || p.MaxBodyBytes != DefaultMaxBodyBytes || p.UserAgent != DefaultUserAgent ||
		p.IgnoreRobotsTxt || p.BackoffBase.D() != DefaultBackoffBase || p.BackoffCap.D() != DefaultBackoffCap {
		t.Errorf("politeness after defaults: %+v", p)
	}
	urls, err := sites[0].URLs(time.Date(2025, 12, 1, 10, 0, 0, 0, Seoul()))
	if err != nil {
		t.Fatal(err)
	}
	if len(urls) != 15 || urls[0] != "http://127.0.0.1:8089/tee?date=20251201&page=1" ||
		urls[14] != "http://127.0.0.1:8089/tee?date=20251215&page=1" {
		t.Errorf("urls %d: first %q last %q", len(urls), urls[0], urls[len(urls)-1])
	}
}

const minimalSite = `
sites:
  - name: s
    start_urls: ["https://golf.example.kr/list"]
    row: "tr.row"
    fields:
      course: {selector: "td.c"}
      round_date: {selector: "td.d"}
      tee_time: {selector: "td.t"}
`

func TestParseSitesDefaults(t *testing.T) {
	t.Parallel()
	sites, err := ParseSites([]byte(minimalSite))
	if err != nil {
		t.Fatal(err)
	}
	s := sites[0]
	p := s.Politeness
	if p.Delay.D() != DefaultDelay || p.RandomDelay.D() != DefaultRandomDelay || p.RequestTimeout.D() != DefaultRequestTimeout ||
		p.MaxPages != DefaultMaxPages || len(s.AllowedDomains) != 1 || s.AllowedDomains[0] != "golf.example.kr" {
		t.Errorf("defaults not applied: %+v allowed %v", p, s.AllowedDomains)
	}
}

func TestParseSitesErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, edit, want string
	}{
		{"Empty", "", "empty"},
		{"UnknownKey", minimalSite + "    politness: {}\n", `unknown key "politness" (did you mean politeness?)`},
		{"TypoInField", strings.Replace(minimalSite, "selector: \"td.c\"", "selectr: \"td.c\"", 1), `unknown key "selectr" (did you mean selector?)`},
		{"NoURLs", strings.Replace(minimalSite, `start_urls: ["https://golf.example.kr/list"]`, "", 1), "set either start_urls or url_template"},
		{"BothURLs", strings.Replace(minimalSite, "row:", "url_template: \"https://x/{{.Date.Format \\\"0102\\\"}}\"\n    row:", 1), "not both"},
		{"BadScheme", strings.Replace(minimalSite, "https://golf", "ftp://golf", 1), "scheme must be http or https"},
		{"NoCourse", strings.Replace(minimalSite, `course: {selector: "td.c"}`, "", 1), "fields.course needs a selector"},
		{"BadSelector", strings.Replace(minimalSite, `"tr.row"`, `"tr..row"`, 1), "row selector"},
		{"RegexGroups", strings.Replace(minimalSite, `{selector: "td.t"}`, `{selector: "td.t", regex: "(\\d+):(\\d+)"}`, 1), "exactly one"},
		{"Parallelism", minimalSite + "    politeness: {parallelism: 3}\n", "parallelism is 3"},
		{"BareDuration", minimalSite + "    politeness: {delay: 1}\n", "must be a string with a unit"},
		{"NegativeDeadline", minimalSite + "    deadline: -1s\n", "deadline is -1s"},
		{"LongDeadline", minimalSite + "    deadline: 25h\n", "deadline is 25h0m0s"},
		{"BadTemplate", strings.Replace(minimalSite, `start_urls: ["https://golf.example.kr/list"]`, `url_template: "https://x/{{.Nope}}"`, 1), "url_template"},
		{"Duplicate", minimalSite + strings.TrimPrefix(minimalSite, "\nsites:\n"), "used twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseSites([]byte(tc.edit))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadSitesMissingFile(t *testing.T) {
	t.Parallel()
	_, err := LoadSites(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("error %v, want a not-exist error", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

// TestURLsSeoulDate: a crawl at 23:30 UTC is already the next day in Seoul.
func TestURLsSeoulDate(t *testing.T) {
	t.Parallel()
	s, err := SiteSpec{Name: "s", URLTemplate: `https://x.kr/t?d={{.Date.Format "2006-01-02"}}&i={{.Index}}`, DaysAhead: 1,
		Row: "tr", Fields: Fields{"course": {Selector: "a"}, "round_date": {Selector: "b"}, "tee_time": {Selector: "c"}}}.Compile()
	if err != nil {
		t.Fatal(err)
	}
	urls, err := s.URLs(time.Date(2025, 12, 31, 23, 30, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://x.kr/t?d=2026-01-01&i=0", "https://x.kr/t?d=2026-01-02&i=1"}
	if strings.Join(urls, " ") != strings.Join(want, " ") {
		t.Errorf("urls %v, want %v", urls, want)
	}
}
