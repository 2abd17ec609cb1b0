package crawler

// Page sets: which listings a failed (or not yet open) page would have shown, so that its failure
// withholds the closes of those listings only and the crawl counts as complete for the others.

import (
	"log/slog"
	"slices"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
)

// PageSet names the listings a failed page would have shown, so that its failure withholds closes
// only for them (see Result.FailedSets): PlayDate when round_date comes from the request (the
// page's requested date is then every row's play date), Course when course comes from the
// request (a target's name). An empty field matches every listing, so the zero PageSet, a failed
// page that cannot be attributed, covers the whole site.
type PageSet struct {
	PlayDate string
	Course   string
}

// pageSets are page sets as the log shows them, with snake_case keys like every other key.
type pageSets []PageSet

// LogValue is each set's play_date and course (those it names).
func (ps pageSets) LogValue() slog.Value {
	out := make([]map[string]string, len(ps))
	for i, p := range ps {
		out[i] = map[string]string{}
		if p.PlayDate != "" {
			out[i]["play_date"] = p.PlayDate
		}
		if p.Course != "" {
			out[i]["course"] = p.Course
		}
	}
	return slog.AnyValue(out)
}

// Covers reports whether l is among the listings the page set would have shown.
func (p PageSet) Covers(l events.Listing) bool {
	return (p.PlayDate == "" || p.PlayDate == l.PlayDate) && (p.Course == "" || p.Course == site.CleanText(l.CourseName))
}

// finishSets fills Result.FailedSets: the page set of every failed request, and the zero PageSet
// when a failed page has none; and Result.NotOpenSets.
func (cr *crawl) finishSets() {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	for _, set := range sortedSets(cr.notOpen) {
		p := PageSet{}
		if set >= 0 && set < len(cr.sets) {
			p = pageSet(cr.site, cr.sets[set])
		}
		if !slices.Contains(cr.res.NotOpenSets, p) {
			cr.res.NotOpenSets = append(cr.res.NotOpenSets, p)
		}
	}
	seen := map[PageSet]bool{}
	add := func(p PageSet) {
		if !seen[p] {
			seen[p] = true
			cr.res.FailedSets = append(cr.res.FailedSets, p)
		}
	}
	for _, key := range cr.res.FailedPages {
		if !cr.attributed[key] {
			add(PageSet{})
		}
	}
	for _, set := range sortedSets(cr.failedSets) {
		add(pageSet(cr.site, cr.sets[set]))
	}
}

func sortedSets(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// pageSet attributes a page set's listings: by play date when round_date comes from the
// request, by course when course does (site.Site.Attribution).
func pageSet(s *site.Site, vars site.RequestVars) PageSet {
	var p PageSet
	p.PlayDate, p.Course = s.Attribution(vars)
	return p
}

// withheldBy judges completeness per page set: when every failed page belongs to a page set that
// names its listings (a play date or a course from the request), the crawl counts as complete
// for every other listing, and Withheld reports the ones its failed page sets would have shown.
// Otherwise (a failed page without a page set, which covers the whole site) it returns false.
func withheldBy(failed []PageSet) (bool, func(events.Listing) bool) {
	if len(failed) == 0 || slices.Contains(failed, PageSet{}) {
		return false, nil
	}
	return true, func(l events.Listing) bool {
		for _, p := range failed {
			if p.Covers(l) {
				return true
			}
		}
		return false
	}
}
