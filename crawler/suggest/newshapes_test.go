package suggest

import (
	"strings"
	"testing"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/crawler/sitesim"
)

// corpusSite is the hand-written entry name of the simulator's corpus (sitesim.CorpusEntry, the
// shapes the shipped sites file does not crawl), its URLs at base: what a developer would write
// for the shape, the reference the suggestions are held to.
func corpusSite(t *testing.T, name, base string) *site.Site {
	t.Helper()
	sites, err := site.ParseSites([]byte("sites:\n" + sitesim.CorpusEntry(name, base)))
	if err != nil {
		t.Fatal(err)
	}
	return sites[0]
}

// TestSuggestedEntryForYearlessJSONDates: JSON rows that carry the play date as MM/DD; the
// suggestion reads round_date from the rows (the crawler infers the year, across the new year
// here), and crawls like the hand-written entry.
func TestSuggestedEntryForYearlessJSONDates(t *testing.T) {
	day := simStart.AddDate(0, 0, 1)
	clock := &simClock{t: simStart}
	sim, srv := simServer(t, clock)
	curl := "curl '" + srv.URL + sitesim.PathJSONMMDD + "?ccNo=139&playDate=" + day.Format("20060102") + "' -H 'Accept: application/json, text/javascript, */*; q=0.01' -H 'X-Requested-With: XMLHttpRequest'"
	sg, stderr := runSuggest(t, curl, Options{Date: day, DaysAhead: crawlDays, ProbeEmpty: true, Targets: clubTargets(sim)})
	if !sg.Complete {
		t.Fatalf("partial: %v", sg.Missing)
	}
	if !strings.Contains(stderr, "round_date ← playDay: ") || sg.Site.Fields["round_date"].Path != "playDay" {
		t.Errorf("round_date is not read from the rows' MM/DD: %+v", sg.Site.Fields["round_date"])
	}
	sameEvents(t, crawlWeek(t, clock, noEnv, corpusSite(t, "sim-json-mmdd", srv.URL), sg.Site))
}

// TestSuggestedEntryForEUCKRPage: old ASP pages in EUC-KR that say so only in their <meta>: one
// club a page with rows without classes (sources_observed.go), and every club on one page
// (sitesim.EUCKRSite, corpus.yaml's sim-euckr); the suggestion reads them as the crawler decodes them, declares the
// charset, and crawls like the hand-written entry.
func TestSuggestedEntryForEUCKRPage(t *testing.T) {
	day := simStart.AddDate(0, 0, 1)
	for _, tc := range []struct {
		name    string
		path    string
		targets bool
		hand    func(base string) *site.Site
	}{
		{name: "one club a page", path: sitesim.PathASP + "?gc=140&ymd=" + day.Format("2006.01.02"), targets: true,
			hand: func(base string) *site.Site { return corpusSite(t, "sim-asp-euckr", base) }},
		{name: "every club on one page", path: sitesim.PathEUCKRPage + "?book_date=" + day.Format("20060102"),
			hand: func(base string) *site.Site { return corpusSite(t, "sim-euckr", base) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &simClock{t: simStart}
			sim, srv := simServer(t, clock)
			o := Options{Date: day, DaysAhead: crawlDays, ProbeEmpty: true}
			if tc.targets {
				o.Targets = clubTargets(sim)
			}
			sg, stderr := runSuggest(t, "curl '"+srv.URL+tc.path+"' -H 'Accept: text/html' -b 'ASPSESSIONIDQAQB=KJHGFDSA'", o)
			if !sg.Complete {
				t.Fatalf("partial: %v", sg.Missing)
			}
			if !strings.Contains(stderr, "charset ← euc-kr") || sg.Site.Charset == "" {
				t.Errorf("the charset is not declared (charset %q)", sg.Site.Charset)
			}
			sameEvents(t, crawlWeek(t, clock, noEnv, tc.hand(srv.URL), sg.Site))
		})
	}
}

// TestSuggestChecksIdentity: JSON rows that name each tee time's caddie
// (caddie_name, a person, changing every six hours) beside the course part. For a club without
// parts, today's suggest took the caddie for the course part, so every caddie change closed and
// reopened the tee time. The caddie is rejected, stderr says by which rule, and the suggestion
// crawls like the hand-written entry, for the club without parts and for one with parts.
func TestSuggestChecksIdentity(t *testing.T) {
	day := simStart.AddDate(0, 0, 1)
	for _, club := range []string{"139", "138"} {
		t.Run("club "+club, func(t *testing.T) {
			clock := &simClock{t: simStart}
			sim, srv := simServer(t, clock)
			curl := "curl '" + srv.URL + sitesim.PathJSONCaddie + "?ccId=" + club + "&ymd=" + day.Format("20060102") + "' -H 'Accept: application/json'"
			sg, stderr := runSuggest(t, curl, Options{Date: day, DaysAhead: crawlDays, ProbeEmpty: true, Targets: clubTargets(sim), Now: clock.Now})
			if !sg.Complete {
				t.Fatalf("partial: %v", sg.Missing)
			}
			if f := sg.Site.Fields["course_part"]; f.Path != "courseNm" {
				t.Errorf("course_part ← %+v, want courseNm", f)
			}
			if !strings.Contains(stderr, "caddie_name: rejected for the listing key by rule (d)") {
				t.Errorf("stderr does not say that caddie_name was rejected, and by which rule")
			}
			sameEvents(t, crawlWeek(t, clock, noEnv, corpusSite(t, "sim-json-caddie", srv.URL), sg.Site))
		})
	}
}
