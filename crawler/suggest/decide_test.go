package suggest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
	"github.com/golfcrawler/golf-crawler/internal/testkit"
)

// TestSuggestDecidesByCrawling: pages where the shapes and names of the columns pick the wrong
// one. The HTML table shows the 집합시간 (when the group meets, shared by the tee times of a half
// hour) before the tee time, both named 시간 and shaped like times, and the 정상가 (struck
// through) before the 할인가; the JSON rows carry greenfee (the list price) beside onegreenfee
// (the price a golfer pays), both named like a green fee. By shape and name, suggest took the
// meeting time for the tee time (its crawl collapsed the tee times of each half hour into one)
// and the list price for the price (no price drop ever seen). Each candidate is now read
// through the crawler's parser on the fetched page: the tee time reads the most listings, and
// of two prices the lower one, the one a golfer pays, wins; stderr names the winner, the
// runner-up and the list price, and the entry crawls like the hand-written one.
func TestSuggestDecidesByCrawling(t *testing.T) {
	day := simStart.AddDate(0, 0, 1)
	for _, tc := range []struct {
		name, hand string
		curl       func(base string) string
		want       map[string]string // field: where
		examples   []string
		say        []string
	}{
		{name: "html", hand: "sim-prices-html",
			curl: func(base string) string {
				return "curl '" + base + sitesim.PathPricesHTML + "' -H 'Content-Type: application/x-www-form-urlencoded; charset=UTF-8' " +
					"-H 'X-Requested-With: XMLHttpRequest' --data-raw 'golfResType=real&clubCd=138&pointDate=" + day.Format("20060102") + "'"
			},
			want: map[string]string{"tee_time": "td:nth-child(2)", "price": "td:nth-child(6)", "course_part": "td:nth-child(3)"},
			say: []string{"tee_time ← td:nth-child(2) (시간 td:nth-child(2))", "runner-up td:nth-child(1) (집합시간 td:nth-child(1))",
				"price: td:nth-child(6) (할인가 td:nth-child(6)) is the price a golfer pays", "not td:nth-child(5) (정상가 td:nth-child(5)) (list price"},
		},
		{name: "json", hand: "sim-prices-json",
			curl: func(base string) string {
				return "curl '" + base + sitesim.PathPricesJSON + "?requestType=get&gc=138&chosenDate=" + day.Format("2006-01-02") + "' -H 'Accept: application/json'"
			},
			want: map[string]string{"tee_time": "time", "price": "onegreenfee", "course_part": "course"},
			say:  []string{"price: onegreenfee is the price a golfer pays", "not greenfee (list price", "shown by the row(s) of "},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &simClock{t: simStart}
			sim, srv := simServer(t, clock)
			examples := tc.examples
			if tc.name == "json" { // a tee time, as the page shows it
				var page struct{ Data []map[string]string }
				req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+sitesim.PathPricesJSON+"?requestType=get&gc=138&chosenDate="+day.Format("2006-01-02"), nil)
				if err != nil {
					t.Fatal(err)
				}
				_, body := testkit.Do(t, srv.Client(), req)
				if err := json.Unmarshal([]byte(body), &page); err != nil || len(page.Data) == 0 {
					t.Fatalf("the JSON page: %v, %s", err, body)
				}
				examples = append(examples, page.Data[0]["time"])
			}
			sg, stderr := runSuggest(t, tc.curl(srv.URL), Options{Date: day, DaysAhead: crawlDays, ProbeEmpty: true, Targets: clubTargets(sim),
				Examples: examples})
			if !sg.Complete {
				t.Fatalf("partial: %v", sg.Missing)
			}
			for field, where := range tc.want {
				if f := sg.Site.Fields[field]; f.Path+f.Selector != where {
					t.Errorf("%s ← %+v, want %s", field, f, where)
				}
			}
			for _, s := range tc.say {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not say %q", s)
				}
			}
			sameEvents(t, crawlWeek(t, clock, noEnv, corpusSite(t, tc.hand, srv.URL), sg.Site))
		})
	}
}

// TestSuggestReadsTeeTimesWithTheParts: a club whose two parts share their tee times, and a
// column of the times each row was last changed (09:12), unique per row, after the tee time. Read before the course
// part is decided, the tee times of the two parts collapsed into one listing each and the update
// times read more: they won. The identity cells are now read with the column named like the part
// (코스) held as the part, the two read alike, and the tee time's name decides.
func TestSuggestReadsTeeTimesWithTheParts(t *testing.T) {
	day := time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul())
	rows := [][2]string{{"06:30", "동코스"}, {"06:30", "서코스"}, {"07:00", "동코스"}, {"07:00", "서코스"}, {"07:30", "동코스"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		var b strings.Builder
		b.WriteString(`<html><body><table class="tbl"><tr><th>시간</th><th>코스</th><th>그린피</th><th>변경시각</th></tr>`)
		for i, r := range rows {
			fmt.Fprintf(&b, `<tr><td>%s</td><td>%s</td><td>150,000원</td><td>09:%02d</td></tr>`, r[0], r[1], 12+7*i)
		}
		b.WriteString(`</table></body></html>`)
		fmt.Fprint(w, b.String())
	}))
	t.Cleanup(srv.Close)
	sg, stderr := runSuggest(t, "curl '"+srv.URL+"/tee.asp?date=20261205'", Options{Date: day, Name: "레이크 CC"})
	if !sg.Complete {
		t.Fatalf("partial: %v", sg.Missing)
	}
	if f := sg.Site.Fields["tee_time"]; f.Selector != "td:nth-child(1)" {
		t.Errorf("tee_time ← %+v, want td:nth-child(1)", f)
	}
	if !strings.Contains(stderr, "with it the crawler's parser reads 5 listing(s), 0 rejected; runner-up td:nth-child(4) (변경시각 td:nth-child(4)): 5 listing(s)") {
		t.Errorf("stderr does not say that both read 5 listings")
	}
	if f := sg.Site.Fields["course_part"]; f.Selector != "td:nth-child(2)" {
		t.Errorf("course_part ← %+v, want td:nth-child(2)", f)
	}
	// The two read the rows alike: the entry is decided only by a rule, which stderr names.
	if !sg.Complete || !strings.Contains(stderr, "tee_time: decided by rule: td:nth-child(1) (시간 td:nth-child(1)) over td:nth-child(4) (변경시각 td:nth-child(4)) (its name does not say tee_time") {
		t.Errorf("complete %v; stderr does not name the rule that decided the tee time", sg.Complete)
	}
}

// TestPayRanks: of two or more price columns, the one a golfer pays wins by its values first:
// the lower one (a list price is above it in every row), unless it is under half the other (an
// amount off, as dc_price beside price in GolfZon County's teeList); when the values agree, the
// struck-through cell and the list name lose, the sale name wins.
func TestPayRanks(t *testing.T) {
	col := func(name string, struck int, vs ...string) column {
		return column{name: name, where: name, values: vs, struck: struck}
	}
	for _, tc := range []struct {
		name string
		cols []column
		want string // the column that pays
	}{
		{"lower wins", []column{col("greenfee", 0, "150000", "180000"), col("onegreenfee", 0, "120000", "180000")}, "onegreenfee"},
		{"an amount off is no price", []column{col("dc_price", 0, "20000", "30000"), col("price", 0, "150000", "180000")}, "price"},
		{"three: list, amount off, sale", []column{col("price", 0, "150000", "180000"), col("dc_amt", 0, "30000", "30000"), col("sale_price", 0, "120000", "150000")}, "sale_price"},
		{"struck", []column{col("그린피 a", 1, "150,000원", "150,000원"), col("그린피 b", 0, "150,000원", "150,000원")}, "그린피 b"},
		{"names", []column{col("정가 td", 0, "150,000원"), col("할인가 td", 0, "150,000원")}, "할인가 td"},
		{"greenFee and salePrice", []column{col("greenFee", 0, "150000", "150000"), col("salePrice", 0, "150000", "120000")}, "salePrice"},
		{"greenFee and dcFee alike", []column{col("greenFee", 0, "150000"), col("dcFee", 0, "150000")}, "dcFee"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cands []candidate
			for i := range tc.cols {
				cands = append(cands, candidate{i: i})
			}
			d := decide(tc.cols, cands, "price", nil, nil)
			if got := tc.cols[d.win.i].name; got != tc.want {
				t.Errorf("pays: %s, want %s (list: %v)", got, tc.want, d.list)
			}
			if strings.Contains(tc.name, "amount off") && (len(d.off) != 1 || !strings.HasPrefix(d.off[0], "d")) {
				t.Errorf("amounts off passed over: %v, want the dc column", d.off)
			}
		})
	}
}

// TestSuggestSkipsRowNumbers: a table whose first column numbers the rows (No: 1, 2, 3, …, as
// teezzim_webview_server's adelscott.js reads past). Its values fit a player count, so suggest
// took it for players, and every tee time's players changed when a booking above it moved it.
// A column of the rows' positions is no candidate, and stderr says so.
func TestSuggestSkipsRowNumbers(t *testing.T) {
	day := time.Date(2026, 12, 5, 0, 0, 0, 0, site.Seoul())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		var b strings.Builder
		b.WriteString(`<html><body><table class="tbl"><tr><th>No</th><th>시간</th><th>그린피</th></tr>`)
		for i, tee := range []string{"06:30", "06:38", "06:46", "06:54", "07:02"} {
			fmt.Fprintf(&b, `<tr><td>%d</td><td>%s</td><td>150,000원</td></tr>`, i+1, tee)
		}
		b.WriteString(`</table></body></html>`)
		fmt.Fprint(w, b.String())
	}))
	t.Cleanup(srv.Close)
	sg, stderr := runSuggest(t, "curl '"+srv.URL+"/tee.asp?date=20261205'", Options{Date: day, Name: "레이크 CC"})
	if !sg.Complete {
		t.Fatalf("partial: %v", sg.Missing)
	}
	if f, ok := sg.Site.Fields["players"]; ok {
		t.Errorf("players ← %+v, want none", f)
	}
	if !strings.Contains(stderr, "players: td:nth-child(1) (No td:nth-child(1)) is no candidate: its values are the rows' positions") {
		t.Errorf("stderr does not say the row number is no candidate")
	}
}
