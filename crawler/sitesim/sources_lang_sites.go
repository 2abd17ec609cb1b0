package sitesim

import (
	"fmt"
	"sort"
	"strings"
)

// langSites are hand-written entries, in documented keys only (docs/sites.md), for the shapes of
// the sites language (sources_lang.go), by name; CLUBS stands for the clubs as targets, BASE for
// the simulator's address.
var langSites = map[string]string{
	"lang-sale-else-list": `  - name: lang-sale-else-list
    targets: CLUBS
    requests:
      - method: POST
        url: 'BASE/getTeeList'
        form: {coDiv: '{{.Target.id}}', date: '{{.Date.Format "20060102"}}', cos: All}

    format: json
    json:
      rows: rows
      success: {path: rtnCode, equals: "0000"}
      empty_when: [{path: rows, is: empty}]
      not_open_when: [{path: rtnCode, equals: "9001"}]
    fields:
      course: {value: '{{.Target.name}}'}
      course_part: {path: BK_COS_NM}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {path: BK_TIME}
      price: {path: [BK_S_CHARGE_NM, BK_B_CHARGE_NM]}
`,
	"lang-rowspan": `  - name: lang-rowspan
    targets: CLUBS
    requests:
      - url: 'BASE/reservation/timeTable.asp?club={{.Target.id}}&date={{.Date.Format "20060102"}}'
    row: "table.time_table tbody tr"
    grid: true
    empty_when: [{contains: "예약 가능한 시간이 없습니다"}]
    fields:
      course: {value: '{{.Target.name}}'}
      course_part: {column: 1}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {column: 2}
      price: {column: 4}
      players: {selector: "td:nth-child(5)"}
`,
	"lang-grouped": `  - name: lang-grouped
    targets: CLUBS
    requests:
      - url: 'BASE/api/v1/teetimes/grouped?clubId={{.Target.id}}&date={{.Date.Format "2006-01-02"}}'
    format: json
    json:
      rows: 'dates[][].times[]'
      success: {path: status, equals: success}
      empty_when: [{path: count, equals: "0"}]
    fields:
      course: {value: '{{.Target.name}}'}
      course_part: {group: 2, path: courseNm}
      round_date: {group_key: 1}
      tee_time: {path: teeTm}
      price: {path: greenFee}
      players: {path: player}
`,
	"lang-csrf": `  - name: lang-csrf
    targets: CLUBS
    requests:
      - url: 'BASE/member/reservation.php'
        capture:
          csrf: {selector: 'form#rsvForm input[name=_csrf]', attr: value}
` + langCSRFTimes,
	"lang-csrf-json": `  - name: lang-csrf-json
    targets: CLUBS
    requests:
      - url: 'BASE/member/csrfToken.json'
        capture:
          csrf: {path: csrfToken}
` + langCSRFTimes,
	"lang-sid": `  - name: lang-sid
    targets: CLUBS
    requests:
      - url: 'BASE/sid/main.asp'
        capture:
          sid: {selector: 'a.menu[href*="real_list"]', attr: href, regex: 'sid=([0-9a-f]+)'}
      - url: 'BASE/sid/real_list.asp?sid={{.Captured.sid}}&club={{.Target.id}}&date={{.Date.Format "20060102"}}'
    row: "table.list tr.slot"
    fields:
      course: {value: '{{.Target.name}}'}
      course_part: {selector: td.cos}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {selector: td.time}
      price: {selector: td.fee}
      players: {selector: td.cnt}
`,
}

// langCSRFTimes is the rest of the CSRF entries after their capturing request: the times
// request that sends the token, and what its JSON answer holds.
const langCSRFTimes = `      - method: POST
        url: 'BASE/member/ajax/teeTimes.php'
        form: {_csrf: '{{.Captured.csrf}}', club: '{{.Target.id}}', date: '{{.Date.Format "20060102"}}'}
    format: json
    json:
      rows: list
      success: {path: result, equals: ok}
      empty_when: [{path: list, is: empty}]
    fields:
      course: {value: '{{.Target.name}}'}
      course_part: {path: course}
      round_date: {value: '{{.Date.Format "2006-01-02"}}'}
      tee_time: {path: time}
      price: {path: price}
      players: {path: person}
`

// LangSite is the hand-written sites-file entry (a list item, indented for "sites:") of the sites
// language's shape name (LangSiteNames), reading the simulator at base with DefaultCourses as its
// targets: the reference crawler suggest's proposals for these shapes are held to.
func LangSite(name, base string) string {
	entry, ok := langSites[name]
	if !ok {
		panic("sitesim: no sites-language entry " + name)
	}
	var clubs []string
	for i, c := range DefaultCourses() {
		clubs = append(clubs, fmt.Sprintf("{id: %q, name: %s}", ClubID(i), c.Name))
	}
	return strings.NewReplacer("BASE", base, "CLUBS", "["+strings.Join(clubs, ", ")+"]").Replace(entry)
}

// LangSiteNames are the names LangSite knows, sorted.
func LangSiteNames() []string {
	out := make([]string, 0, len(langSites))
	for name := range langSites {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
