package crawler

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/events"
)

// MinTargetReference is the smallest reference of the per-target collapse guard: a target (a
// club of a site with targets) whose listings in the last crawl that counted them were fewer is
// not guarded, so that a real sell-out of one small club closes on time.
const MinTargetReference = 5

// targetGuard is the collapse guard per target of one crawl: the courses whose listings collapsed
// against their reference, withheld (PageSet{Course: name}) until the collapse is believed.
type targetGuard struct {
	Withheld []PageSet      // the collapsed targets, not yet believed
	Believed []string       // the targets whose collapse was believed in this crawl
	Refs     map[string]int // the reference of every collapsed target, for the log
	Next     map[string]int // Snapshot.TargetCollapses after this crawl
}

// guardTargets applies the collapse guard to each target of a site with targets: the listings of
// one course name (the target's name when course comes from the target, the club's as the rows
// name it otherwise) with a tee time after c.At, against the same count in prev of the listings
// seen by the last crawl that counted them (open, no miss pending). Listings c.Withheld covers,
// and those a partial crawl did not fetch (c.Fetched), count on neither side; a partial crawl
// withholds a collapsed target without counting toward its belief. A target collapses when its reference is at least MinTargetReference
// and the site's collapse rule (collapsed) holds; it is believed at its collapseCrawls-th
// collapsed crawl in a row. Call it only for a crawl that counts as complete and not collapsed.
func guardTargets(st *site.Site, prev Snapshot, cur []events.Listing, c Crawl, collapseCrawls int, loc *time.Location) targetGuard {
	g := targetGuard{Refs: map[string]int{}, Next: map[string]int{}}
	if len(st.Targets) == 0 {
		return g
	}
	counted := func(l events.Listing) bool {
		return !teeTimePassed(l, c.At, loc) && !c.withheld(l)
	}
	ref, now := map[string]int{}, map[string]int{}
	for _, e := range prev.Listings {
		if e.Open() && e.Misses == 0 && e.Suspect == 0 && counted(e.Listing) {
			ref[site.CleanText(e.Listing.CourseName)]++
		}
	}
	for _, l := range cur {
		if counted(l) {
			now[site.CleanText(l.CourseName)]++
		}
	}
	for _, course := range slices.Sorted(maps.Keys(ref)) {
		if ref[course] < MinTargetReference || !Collapsed(st.MinCompleteRatio, ref[course], now[course]) {
			continue
		}
		g.Refs[course] = ref[course]
		n := prev.TargetCollapses[course] + 1
		if n >= collapseCrawls && c.Fetched == nil {
			g.Believed = append(g.Believed, course)
			continue
		}
		g.Next[course] = n
		g.Withheld = append(g.Withheld, PageSet{Course: course})
	}
	if c.Fetched != nil { // a partial crawl is never a collapse crawl: the counts stay
		g.Next = maps.Clone(prev.TargetCollapses)
	}
	return g
}

// withhold adds the page sets to what a crawl withholds.
func withhold(w func(events.Listing) bool, sets []PageSet) func(events.Listing) bool {
	sets = slices.Clone(sets)
	return func(l events.Listing) bool {
		if w != nil && w(l) {
			return true
		}
		for _, p := range sets {
			if p.Covers(l) {
				return true
			}
		}
		return false
	}
}

// logTargetGuard logs the per-target collapse guard's decisions.
func (r *Runner) logTargetGuard(ctx context.Context, log *slog.Logger, g targetGuard) {
	for _, p := range g.Withheld {
		log.WarnContext(ctx, "target collapsed: its closes are withheld", "target", p.Course,
			"last_complete_listings", g.Refs[p.Course], "collapsed_crawls", g.Next[p.Course])
	}
	for _, course := range g.Believed {
		log.WarnContext(ctx, "target collapse believed: its missing listings count as missed", "target", course,
			"last_complete_listings", g.Refs[course])
	}
}
