package site

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
)

// A sites file's mistakes are told in its own language: the line, where in the file, the key, and
// the keys allowed there (with the nearest one when a key looks misspelt), every mistake at once;
// never a Go type.
func TestSitesFileErrorsSpeakItsLanguage(t *testing.T) {
	t.Parallel()
	siteKeys := "name, start_urls, url_template, targets, days_ahead, charset, login, env, not_open, requests, format, json, list, row, grid, fields, empty_when, next_page, follow, allowed_domains, politeness, min_complete_ratio, deadline, schedule, active_hours, jitter, burst, misses_min_interval"
	for _, tc := range []struct {
		name, file string
		want       []string
	}{
		{"a site's key", strings.Replace(minimalSite, "    row:", "    days_ahaed: 3\n    row:", 1),
			[]string{`line 5: site "s": unknown key "days_ahaed" (did you mean days_ahead?); the keys allowed here: ` + siteKeys}},
		{"the file's key", "sitess:\n  - name: s\n",
			[]string{`line 1: unknown key "sitess" (did you mean sites?); the keys allowed here: sites`}},
		{"politeness", minimalSite + "    politeness: {delai: 1s, paralelism: 1}\n",
			[]string{`line 10: site "s": politeness: unknown key "delai" (did you mean delay?); the keys allowed here: delay, random_delay, parallelism, request_timeout, retries, backoff_base, backoff_cap, max_body_bytes, max_pages, user_agent, ignore_robots_txt, no_delay, no_retry`,
				`line 10: site "s": politeness: unknown key "paralelism" (did you mean parallelism?)`}},
		{"a field of a cell", strings.Replace(minimalSite, `selector: "td.c"`, `selectr: "td.c"`, 1),
			[]string{`line 7: site "s": fields.course: unknown key "selectr" (did you mean selector?); the keys allowed here: selector, column, attr, regex, path, group, group_key, value`}},
		{"a request", strings.Replace(minimalSite, `    start_urls: ["https://golf.example.kr/list"]`, "    requests:\n      - url: https://golf.example.kr/list\n        heders: {A: b}", 1),
			[]string{`line 6: site "s": requests[0]: unknown key "heders" (did you mean headers?); the keys allowed here: method, url, headers, form, json, capture`}},
		{"nothing alike", minimalSite + "    green_speed: 3\n",
			[]string{`line 10: site "s": unknown key "green_speed"; the keys allowed here: name,`}},
		{"a list where a mapping goes", minimalSite + "    politeness: [delay]\n",
			[]string{`line 10: site "s": politeness: a mapping of delay, random_delay, parallelism, `}},
		{"a word where a number goes", minimalSite + "    days_ahead: three\n",
			[]string{`line 10: site "s": days_ahead: "three" is not a whole number`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseSites([]byte(tc.file))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error:\n%s\nwant it to say:\n%s", msg, w)
				}
			}
			for _, goTalk := range []string{"not found in type", "site.", "crawler.", "unmarshal", "!!"} {
				if strings.Contains(msg, goTalk) {
					t.Errorf("error speaks Go (%q):\n%s", goTalk, msg)
				}
			}
		})
	}
}

// The file's own checks know every key and kind the decoder does: a file they pass decodes with
// no unknown key and no value of the wrong kind (yaml.v3's KnownFields would say so in Go's words).
func FuzzSitesFileShape(f *testing.F) {
	f.Add([]byte(minimalSite))
	for _, p := range []string{"../sitesim/sites.yaml", "../../compose/dev/sites.yaml", "../../compose/app/sites.yaml"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(minimalSite + "    politeness: {delai: 1s}\n"))
	f.Add([]byte(minimalSite + "    days_ahead: 99999999999999999999\n"))
	f.Add([]byte("sites:\n  - &a {name: s}\n  - {<<: *a, row: tr}\n"))
	f.Add(sitesim.CorpusYAML) // every simulator shape's entry: fallbacks, grid, grouped rows, captures among them
	f.Add([]byte(minimalSite + "      price: {selector: [td.s, {a: b}], colum: 2}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var doc yaml.Node
		if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 || len(shapeErrors(&doc)) > 0 {
			return
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		var sf sitesFile
		if err := dec.Decode(&sf); err != nil && (strings.Contains(err.Error(), "not found in type") || strings.Contains(err.Error(), "cannot unmarshal")) {
			t.Fatalf("the shape checks passed, the decoder did not: %v", err)
		}
	})
}
