package site

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// langSite is a sites file of one site: a JSON API (requests, json and fields given), or with
// html an HTML list, for the sites language's checks.
func langSite(format, requests, fields string) string {
	s := "sites:\n  - name: s\n    targets: [{id: \"1\", name: 클럽}]\n    requests:\n" + requests
	if format == FormatJSON {
		s += "    format: json\n    json: {rows: 'dates[][].times[]'}\n"
	} else {
		s += "    row: \"table.t tr\"\n"
	}
	return s + "    fields:\n      course: {value: '{{.Target.name}}'}\n      round_date: {value: '{{.Date.Format \"2006-01-02\"}}'}\n" + fields
}

const (
	langGET  = "      - url: 'https://x.kr/t?d={{.Date.Format \"20060102\"}}'\n"
	langTime = "      tee_time: {path: t}\n"
)

// Every misuse of the sites language's forms is an error of crawler check that names its line:
// fallbacks on a cell of the listing's key, a column without grid, a group without a grouped rows
// path or beyond it, a value read before it is captured, a captured value as a field.
func TestLangChecksNameTheLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, yaml, want string
	}{
		{"fallback on the key", langSite(FormatJSON, langGET, langTime+"      course_part: {path: [a, b]}\n"),
			"line 12: site \"s\": fields.course_part: fallback sources (path a, b) are for cells that identify nothing"},
		{"value after a key's path", langSite(FormatJSON, langGET, "      tee_time: {path: t, value: '0630'}\n"),
			"line 11: site \"s\": fields.tee_time: fallback sources (path t then value) are for cells that identify nothing"},
		{"empty list", langSite(FormatJSON, langGET, langTime+"      price: {path: []}\n"), "line 12: path: an empty list"},
		{"list of maps", langSite(FormatJSON, langGET, langTime+"      price: {path: [{a: b}]}\n"), "line 12: path: every source of the list is a non-empty string"},
		{"unknown key", langSite(FormatJSON, langGET, langTime+"      price: {path: p, colum: 3}\n"), `line 12: site "s": fields.price: unknown key "colum" (did you mean column?)`},
		{"column without grid", langSite(FormatHTML, langGET, "      tee_time: {column: 2}\n"),
			"line 10: site \"s\": fields.tee_time: column counts the columns of the rendered grid: set grid: true"},
		{"grid of json", strings.Replace(langSite(FormatJSON, langGET, langTime), "    format: json\n", "    format: json\n    grid: true\n", 1),
			"grid reads the rows of an HTML table"},
		{"group without groups", strings.Replace(langSite(FormatJSON, langGET, langTime+"      price: {group: 1, path: fee}\n"), "dates[][].times[]", "list", 1),
			"line 12: site \"s\": fields.price: group and group_key read the groups of a rows path that flattens groups"},
		{"group of the row", langSite(FormatJSON, langGET, langTime+"      price: {group: 3, path: fee}\n"),
			"line 12: site \"s\": fields.price: group is 3; json.rows \"dates[][].times[]\" has groups 1 to 2 (3 is the row itself: use path alone)"},
		{"group without path", langSite(FormatJSON, langGET, langTime+"      price: {group: 1}\n"), "line 12: site \"s\": fields.price: group 1 reads path in that group"},
		{"group key past the row", langSite(FormatJSON, langGET, langTime+"      course_part: {group_key: 4}\n"), "line 12: site \"s\": fields.course_part: group_key is 4"},
		{"rows path after the last []", strings.Replace(langSite(FormatJSON, langGET, langTime), "dates[][].times[]", "dates[].times", 1),
			"rows path \"dates[].times\": the rows are the elements of the last []"},
		{"captured later", langSite(FormatJSON, "      - url: 'https://x.kr/t?c={{.Captured.csrf}}&d={{.Date.Format \"20060102\"}}'\n"+
			"      - url: 'https://x.kr/form'\n        capture: {csrf: {selector: input}}\n", langTime),
			"line 5: site \"s\": requests[0]: url: template: url:1:28: executing \"url\" at <.Captured.csrf>: map has no entry for key \"csrf\""},
		{"capture without source", langSite(FormatJSON, "      - url: 'https://x.kr/form'\n        capture: {csrf: {attr: value, path: token}}\n"+langGET, langTime),
			"line 6: site \"s\": requests[0].capture.csrf: attr is an attribute of the element selector matches"},
		{"capture key typo", langSite(FormatJSON, "      - url: 'https://x.kr/form'\n        capture: {csrf: {selectr: input}}\n"+langGET, langTime),
			`line 6: site "s": requests[0].capture.csrf: unknown key "selectr" (did you mean selector?); the keys allowed here: selector, attr, path, regex`},
		{"request key typo", langSite(FormatJSON, "      - url: 'https://x.kr/form'\n        captures: {csrf: {selector: input}}\n"+langGET, langTime),
			`line 6: site "s": requests[0]: unknown key "captures" (did you mean capture?)`},
		{"only captures", langSite(FormatJSON, "      - url: 'https://x.kr/form'\n        capture: {csrf: {selector: input}}\n", langTime),
			"every request captures"},
		{"captured as a field", langSite(FormatJSON, "      - url: 'https://x.kr/form'\n        capture: {csrf: {selector: input}}\n"+langGET,
			langTime+"      players: {value: '{{.Captured.csrf}}'}\n"),
			"line 14: site \"s\": fields.players: value reads a captured value, which is a secret"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseSites([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error:\n%v\nwant one containing:\n%s\nin:\n%s", err, tc.want, tc.yaml)
			}
		})
	}
}

// The forms of the sites language are written back as they are read: a single source as a
// string (an entry without fallbacks unchanged), several as a flow list, and the new keys.
func TestLangFieldsRoundTrip(t *testing.T) {
	t.Parallel()
	text := langSite(FormatJSON, "      - url: 'https://x.kr/form'\n        capture: {csrf: {path: token}}\n"+
		"      - method: POST\n        url: 'https://x.kr/t'\n        form: {_csrf: '{{.Captured.csrf}}', d: '{{.Date.Format \"20060102\"}}'}\n",
		"      course_part: {group: 2, path: name}\n      tee_time: {path: t}\n      price: {path: [BK_S_CHARGE_NM, BK_B_CHARGE_NM], value: '150000'}\n      players: {group_key: 3}\n")
	sites, err := ParseSites([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	b, err := yaml.Marshal(sites[0].Fields)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"course_part:\n    path: name\n    group: 2\n",
		"tee_time:\n    path: t\n",
		"price:\n    path: [BK_S_CHARGE_NM, BK_B_CHARGE_NM]\n    value: \"150000\"\n",
		"players:\n    group_key: 3\n",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("fields written as:\n%s\nwant them to contain:\n%s", b, want)
		}
	}
	var back Fields
	if err := yaml.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if p := back["price"]; p.Path != "BK_S_CHARGE_NM" || len(p.Fallbacks) != 1 || p.Fallbacks[0] != "BK_B_CHARGE_NM" || p.Value != "150000" {
		t.Errorf("price read back as %+v", p)
	}
	if d := sites[0].Describe(); !strings.Contains(d, "1 request(s) x 1 target(s)") || !strings.Contains(d, "after 1 capturing request(s)") {
		t.Errorf("check describes the site as %q", d)
	}
}

// A source gives a value when its normaliser reads one: not empty, a dash, 마감 or the like, and
// for price and players not 0.
func TestCellGives(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, Seoul())
	price, players := &cellTable[CellIndex("price")], &cellTable[CellIndex("players")]
	for _, tc := range []struct {
		cell *Cell
		raw  string
		want bool
	}{
		{price, "220,000", true}, {price, "", false}, {price, "-", false}, {price, "0", false}, {price, "전화문의", false},
		{price, "abc", false}, {players, "4명", true}, {players, "0", false}, {players, "마감", false},
	} {
		if got := tc.cell.gives(tc.raw, at); got != tc.want {
			t.Errorf("%s %q gives a value: %v, want %v", tc.cell.Name, tc.raw, got, tc.want)
		}
	}
}

// A listing's URL drops the parameters that hold a secret, and only those; a URL without one is
// returned as written.
func TestDropParams(t *testing.T) {
	t.Parallel()
	secret := func(v string) bool { return strings.Contains(v, "S3CR3T") }
	for raw, want := range map[string]string{
		"https://x.kr/list.asp?sid=S3CR3T&club=138&date=20261205": "https://x.kr/list.asp?club=138&date=20261205",
		"https://x.kr/a;jsessionid=S3CR3T/list?d=1#top":           "https://x.kr/a/list?d=1#top",
		"https://x.kr/list?z=1&a=%53%33CR3T":                      "https://x.kr/list?z=1",
		"https://x.kr/list?z=2&a=1":                               "https://x.kr/list?z=2&a=1",
		"https://x.kr/list?only=S3CR3T":                           "https://x.kr/list",
	} {
		if got := DropParams(raw, secret); got != want {
			t.Errorf("DropParams(%s) = %s, want %s", raw, got, want)
		}
	}
}

// docs/sites.md's examples of the sites language's forms compile.
func TestLangSitesExample(t *testing.T) {
	t.Parallel()
	sites, err := ParseSites([]byte(docsSitesExample(t, "What real club servers answer beyond these")))
	if err != nil {
		t.Fatal(err)
	}
	if len(sites) != 4 {
		t.Errorf("%d sites in the example, want one per form (4)", len(sites))
	}
}

// A row whose date is not its request's play date is dropped (OtherDate) when the requests name
// the date, and kept when they do not (a request for every date at once).
func TestOtherDateRows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url   string
		other bool
	}{
		{`https://x.kr/t?d={{.Date.Format "2006-01-02"}}`, true},
		{`https://x.kr/week`, false},
	} {
		sites, err := ParseSites([]byte(`sites:
  - name: s
    requests: [{url: '` + tc.url + `'}]
    format: json
    json: {rows: 'dates[].times[]'}
    fields:
      course: {value: 클럽}
      round_date: {group_key: 1}
      tee_time: {path: t}
`))
		if err != nil {
			t.Fatal(err)
		}
		var r RawRow
		r.v[CellIndex("round_date")], r.v[CellIndex("tee_time")] = "2026-12-06", "0630"
		vars := &RequestVars{Date: time.Date(2026, 12, 5, 0, 0, 0, 0, Seoul())}
		lr := sites[0].FromRequest(r, vars, "https://x.kr/t", time.Date(2026, 12, 1, 9, 0, 0, 0, Seoul()))
		if lr.Err != nil || lr.OtherDate != tc.other || lr.Listing.PlayDate != "2026-12-06" {
			t.Errorf("%s: %+v, want other date %v", tc.url, lr, tc.other)
		}
	}
}
