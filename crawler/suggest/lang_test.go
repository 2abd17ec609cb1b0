package suggest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
)

// TestSuggestLangShapes (issue 49, the first paragraph's real club and rowspan table, items 0, 1,
// 3, 5 and 6): the shapes of the sites language's issue, each suggested unedited from the copied
// request, must exit 0 with the form the language has for it and crawl the simulated week as the
// hand-written entry does (sitesim.LangSite):
//   - the real club's getTeeList: BK_COS_NM over its code BK_COS, the sale price else the list
//     price (price: {path: [BK_S_CHARGE_NM, BK_B_CHARGE_NM]}), no players (BK_ROUNDF is a flag),
//     rtnCode 9001 not open beside the sold-out 0000 and an empty list, and the echoed member
//     number (msNum) left out and never printed;
//   - a table whose course cell spans its rows: grid: true with column: N;
//   - JSON rows nested in groups (dates → courses → times): a grouped rows path, the part from its
//     group and the date from its key.
func TestSuggestLangShapes(t *testing.T) {
	day := simStart.AddDate(0, 0, 1)
	for _, tc := range []struct {
		name string
		curl func(base string) string
		want func(t *testing.T, st *site.Site, stderr string)
	}{
		{name: "lang-sale-else-list",
			curl: func(base string) string {
				return "curl '" + base + sitesim.PathGetTeeList + "' -H 'Content-Type: application/x-www-form-urlencoded; charset=UTF-8' " +
					"--data-raw 'coDiv=138&date=" + day.Format("20060102") + "&cos=All&msNum=" + sitesim.MemberNumber + "'"
			},
			want: func(t *testing.T, st *site.Site, stderr string) {
				if f := st.Fields["price"]; f.Path != "BK_S_CHARGE_NM" || len(f.Fallbacks) != 1 || f.Fallbacks[0] != "BK_B_CHARGE_NM" {
					t.Errorf("price ← %+v, want path: [BK_S_CHARGE_NM, BK_B_CHARGE_NM]", f)
				}
				if f := st.Fields["course_part"]; f.Path != "BK_COS_NM" {
					t.Errorf("course_part ← %+v, want BK_COS_NM", f)
				}
				if f, ok := st.Fields["players"]; ok {
					t.Errorf("players ← %+v, want none (the page shows none)", f)
				}
				if j := st.JSON; len(j.NotOpenWhen) != 1 || j.NotOpenWhen[0].Equals != "9001" {
					t.Errorf("json.not_open_when %+v, want rtnCode 9001", j.NotOpenWhen)
				}
				if strings.Contains(stderr, sitesim.MemberNumber) {
					t.Errorf("the member number reached stderr")
				}
			}},
		{name: "lang-rowspan",
			curl: func(base string) string {
				return "curl '" + base + sitesim.PathTimeTable + "?club=138&date=" + day.Format("20060102") + "'"
			},
			want: func(t *testing.T, st *site.Site, _ string) {
				if !st.Grid || st.Fields["course_part"].Column != 1 {
					t.Errorf("grid %v, course_part ← %+v; want grid: true and column: 1", st.Grid, st.Fields["course_part"])
				}
			}},
		{name: "lang-grouped",
			curl: func(base string) string {
				return "curl '" + base + sitesim.PathGroupedTimes + "?clubId=138&date=" + day.Format("2006-01-02") + "'"
			},
			want: func(t *testing.T, st *site.Site, _ string) {
				if st.JSON.Rows != "dates[][].times[]" || st.Fields["round_date"].GroupKey != 1 || st.Fields["course_part"].Group != 2 {
					t.Errorf("rows %q, round_date ← %+v, course_part ← %+v; want dates[][].times[], group_key 1, group 2 courseNm",
						st.JSON.Rows, st.Fields["round_date"], st.Fields["course_part"])
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &simClock{t: simStart}
			sim, srv := simServer(t, clock)
			sg, stderr := runSuggest(t, tc.curl(srv.URL), Options{Date: day, DaysAhead: crawlDays, ProbeEmpty: true, Targets: clubTargets(sim), Now: clock.Now})
			if strings.Contains(string(sg.YAML), sitesim.MemberNumber) {
				t.Errorf("the member number reached the sites file")
			}
			if !sg.Complete || sg.Site == nil {
				t.Fatalf("not decided: missing %v, undecided %v", sg.Missing, sg.Undecided)
			}
			tc.want(t, sg.Site, stderr)
			hand, err := site.ParseSites([]byte("sites:\n" + sitesim.LangSite(tc.name, srv.URL)))
			if err != nil {
				t.Fatal(err)
			}
			sameEvents(t, crawlWeek(t, clock, noEnv, hand[0], sg.Site))
		})
	}
}

// TestSuggestLangShapesWithAnExample: the same shapes with one example row of what the page
// shows for the first tee time (its time, part, the price paid and, where shown, its players)
// are still decided the same way.
func TestSuggestLangShapesWithAnExample(t *testing.T) {
	day := simStart.AddDate(0, 0, 1)
	for _, tc := range []struct {
		name, path, query string
		players           bool
		post              bool
	}{
		{name: "lang-sale-else-list", path: sitesim.PathGetTeeList, query: "coDiv=138&date=" + day.Format("20060102") + "&cos=All", post: true},
		{name: "lang-rowspan", path: sitesim.PathTimeTable, query: "club=138&date=" + day.Format("20060102"), players: true},
		{name: "lang-grouped", path: sitesim.PathGroupedTimes, query: "clubId=138&date=" + day.Format("2006-01-02"), players: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &simClock{t: simStart}
			sim, srv := simServer(t, clock)
			curl := "curl '" + srv.URL + tc.path + "?" + tc.query + "'"
			if tc.post {
				curl = "curl '" + srv.URL + tc.path + "' --data-raw '" + tc.query + "'"
			}
			var example string
			for _, tr := range sim.Visible(simStart) {
				price, players := tr.StateAt(simStart)
				if tr.Malformed || tr.PlayDate != day.Format("2006-01-02") || tr.Course != sim.Clubs()[1].Name || price == nil {
					continue
				}
				example = fmt.Sprintf("%s %s %d원", tr.ShownTeeTime, tr.Part, *price)
				if tc.players {
					example += fmt.Sprintf(" %d명", players)
				}
				break
			}
			sg, _ := runSuggest(t, curl, Options{Date: day, DaysAhead: crawlDays, ProbeEmpty: true, Targets: clubTargets(sim), Now: clock.Now,
				Examples: []string{example}})
			if !sg.Complete || sg.Site == nil {
				t.Fatalf("--example %q: not decided: missing %v, undecided %v", example, sg.Missing, sg.Undecided)
			}
			hand, err := site.ParseSites([]byte("sites:\n" + sitesim.LangSite(tc.name, srv.URL)))
			if err != nil {
				t.Fatal(err)
			}
			sameEvents(t, crawlWeek(t, clock, noEnv, hand[0], sg.Site))
		})
	}
}
