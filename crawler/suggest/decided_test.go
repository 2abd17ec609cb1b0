package suggest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// jsonRowsServer answers /tee?date=YYYYMMDD with {"resultCode":"0000","list":[rows]} for the play
// date and the next one (rows(date)), an empty list for any other date.
func jsonRowsServer(t *testing.T, rows func(date string) []string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		fmt.Fprintf(w, `{"resultCode":"0000","list":[%s]}`, strings.Join(rows(r.URL.Query().Get("date")), ","))
	}))
	t.Cleanup(srv.Close)
	return srv
}

var decidedDay = time.Date(2026, 12, 6, 0, 0, 0, 0, site.Seoul())

// sampleTeeTimes are n tee times 7 minutes apart from 06:30.
func sampleTeeTimes(n int) []string {
	var out []string
	for i := range n {
		m := 6*60 + 30 + 7*i
		out = append(out, fmt.Sprintf("%02d:%02d", m/60, m%60))
	}
	return out
}

// TestSuggestCartFeeIsNoPrice (issue 49, the first shape): a JSON API with GREEN_FEE (130,000 to
// 200,000) beside a per-team CART_FEE (100,000 on every row). suggest took the cart fee for the
// price, the green fee for a list price above it, and exited 0; --example 160,000 only said where
// it was found. A fee per team is no price candidate, and the example binds.
func TestSuggestCartFeeIsNoPrice(t *testing.T) {
	srv := jsonRowsServer(t, func(date string) []string {
		var rows []string
		for i, tee := range sampleTeeTimes(8) {
			rows = append(rows, fmt.Sprintf(`{"TEE_TIME":"%s","GREEN_FEE":"%d","CART_FEE":"100000","PLAYERS":"%d"}`, tee, 130000+10000*i, 2+i%3))
		}
		return rows
	})
	curl := "curl '" + srv.URL + "/tee?date=" + decidedDay.Format("20060102") + "'"
	for _, examples := range [][]string{nil, {"160,000"}} {
		sg, stderr := runSuggest(t, curl, Options{Date: decidedDay, Name: "레이크 CC", Examples: examples})
		if !sg.Complete || sg.Site == nil {
			t.Fatalf("examples %q: not complete: missing %v, undecided %v", examples, sg.Missing, sg.Undecided)
		}
		if f := sg.Site.Fields["price"]; f.Path != "GREEN_FEE" {
			t.Errorf("examples %q: price ← %+v, want GREEN_FEE", examples, f)
		}
		if !strings.Contains(stderr, "price: CART_FEE is no candidate: its name says a fee per team (cart)") {
			t.Errorf("examples %q: stderr does not say why CART_FEE is no price", examples)
		}
	}
}

// crossingPrices are rows with two price columns neither of which is above the other in every
// row, named alike: no rule tells which one a golfer pays.
func crossingPrices(date string) []string {
	var rows []string
	for i, tee := range sampleTeeTimes(6) {
		a, b := 150000+10000*i, 200000-10000*i
		rows = append(rows, fmt.Sprintf(`{"TEE_TIME":"%s","FEE_A":"%d","FEE_B":"%d"}`, tee, a, b))
	}
	return rows
}

// TestSuggestUndecidedExitsTwo (issue 49, item 1): two price columns that read the rows alike
// (as many listings, every price known) with other values, and no rule between them. suggest
// took the first and said complete. Now the entry is undecided: stderr shows both side by side
// for one row and the command to run again with an example; with that example (the page's
// price) the cell is decided by it, and stderr says so.
func TestSuggestUndecidedExitsTwo(t *testing.T) {
	srv := jsonRowsServer(t, crossingPrices)
	curl := "curl '" + srv.URL + "/tee?date=" + decidedDay.Format("20060102") + "'"
	cmd := ShellCommand("crawler", "suggest", "--name", "레이크 CC", srv.URL+"/tee?date="+decidedDay.Format("20060102"))
	sg, stderr := runSuggest(t, curl, Options{Date: decidedDay, Name: "레이크 CC", Command: cmd})
	if sg.Complete || !slices.Equal(sg.Undecided, []string{"price"}) {
		t.Fatalf("complete %v, undecided %v; want price undecided", sg.Complete, sg.Undecided)
	}
	for _, want := range []string{"undecided: in the row of 06:30 they read:", "  price: FEE_A 150000 | FEE_B 200000",
		"  " + cmd + " --example '06:30 150000'"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q", want)
		}
	}
	sg, stderr = runSuggest(t, curl, Options{Date: decidedDay, Name: "레이크 CC", Examples: []string{"06:30 200,000원"}})
	if !sg.Complete || sg.Site.Fields["price"].Path != "FEE_B" {
		t.Fatalf("with the example: complete %v (undecided %v), price ← %+v; want FEE_B", sg.Complete, sg.Undecided, sg.Site.Fields["price"])
	}
	if !strings.Contains(stderr, `price: decided by the golfer's example ("06:30 200,000원"): FEE_B reads it; not FEE_A`) {
		t.Errorf("stderr does not say the example decided the price")
	}
}

// TestSuggestExampleNothingReads (issue 49, item 2): an example value no column reads in the
// example's row is an error naming the closest candidates, and an example no row shows is too.
func TestSuggestExampleNothingReads(t *testing.T) {
	srv := jsonRowsServer(t, crossingPrices)
	curl := "curl '" + srv.URL + "/tee?date=" + decidedDay.Format("20060102") + "'"
	req, err := ParseCurl(curl)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		example string
		want    string
	}{
		{"06:30 155,000원", `--example "06:30 155,000원": no row of the page shows all of it; in the closest, the row of 06:30, nothing reads price "155,000원" (closest: FEE_A 150000, FEE_B 200000)`},
		{"price=210,000", `--example "price=210,000": no row of the page shows all of it`},
		{"greenfee=160000", "greenfee is not a cell"},
	} {
		_, err := Suggest(t.Context(), Options{Request: req, Date: decidedDay, Name: "레이크 CC", Examples: []string{tc.example}, Fetcher: testFetcher(t)})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--example %q: err %v, want %q", tc.example, err, tc.want)
		}
	}
}

// TestSuggestEndsWithPreview (issue 49, item 4): stderr ends with the first ten listings as the
// crawler reads them from the fetched page (date, tee time, course, part, price, players), headed
// "compare with the page".
func TestSuggestEndsWithPreview(t *testing.T) {
	srv := jsonRowsServer(t, func(date string) []string {
		var rows []string
		for i, tee := range sampleTeeTimes(12) {
			rows = append(rows, fmt.Sprintf(`{"TEE_TIME":"%s","COURSE_NM":"%s","GREEN_FEE":"%d","PLAYERS":"%d"}`, tee, []string{"OUT", "IN"}[i%2], 130000+10000*i, 2+i%3))
		}
		return rows
	})
	sg, stderr := runSuggest(t, "curl '"+srv.URL+"/tee?date="+decidedDay.Format("20060102")+"'", Options{Date: decidedDay, Name: "레이크 CC"})
	if !sg.Complete {
		t.Fatalf("not complete: missing %v, undecided %v", sg.Missing, sg.Undecided)
	}
	lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
	if len(lines) < 12 {
		t.Fatalf("stderr has %d lines", len(lines))
	}
	tail := lines[len(lines)-12:]
	if tail[0] != "compare with the page: the first 10 of the 12 listing(s) the crawler reads from it with this entry:" {
		t.Errorf("the preview's heading is %q", tail[0])
	}
	if f := strings.Fields(tail[1]); !slices.Equal(f, []string{"play_date", "tee_time", "course", "part", "price", "players"}) {
		t.Errorf("the preview's header is %q", tail[1])
	}
	if f := strings.Fields(tail[2]); !slices.Equal(f, []string{"2026-12-06", "06:30", "레이크", "CC", "OUT", "130000", "2"}) {
		t.Errorf("the preview's first row is %q", tail[2])
	}
	if f := strings.Fields(tail[11]); !slices.Equal(f, []string{"2026-12-06", "07:33", "레이크", "CC", "IN", "220000", "2"}) {
		t.Errorf("the preview's last row is %q", tail[11])
	}
}
