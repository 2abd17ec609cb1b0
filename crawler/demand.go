package crawler

// Demand per page set (#51): the page sets some watch in force can match are crawled every
// watched_every of their site, within a budget, inside the site's one schedule loop; the others
// keep the site's schedule. A page set that showed an opening is crawled again confirm_after
// later, so that its alert is confirmed (or withheld) by a crawl of its own, and so is a page set
// whose alerts still wait after a crawl (watched or not: a watch that adds no demand has alerts too).

import (
	"slices"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
)

// Demand says which page sets of a site some watch in force can match (cmd/crawler: the watches
// file's and the chat's, or --demand's). It is asked at every tick of the schedule, so a watch made
// from the chat counts from the next tick on; it must be quick and safe for concurrent use.
type Demand interface {
	Watched(site string, set PageSet, now time.Time) bool
}

// siteDemand is one site's page-set schedule: when each page set was last fetched, which are
// watched, the confirm crawls due, and the budget of the watched crawls (a token bucket in page
// sets, refilled at rate per second up to burst). It is used by SiteSchedule's loop only.
type siteDemand struct {
	every, confirmAfter time.Duration
	budget              float64       // watched_budget: the share of the schedule's fetches an hour
	interval            time.Duration // the schedule's interval

	fetched      map[PageSet]time.Time // start of the last crawl that fetched each page set
	watchedSince map[PageSet]time.Time // when each watched page set became watched
	confirm      map[PageSet]time.Time // the confirm crawls due, by page set
	tokens       float64
	tokensAt     time.Time
	rate, burst  float64 // page sets a second, and the most the bucket holds
}

func newSiteDemand(t *site.SiteTimes) *siteDemand {
	return &siteDemand{every: t.WatchedEvery(), confirmAfter: t.ConfirmAfter(), budget: t.WatchedBudget(), interval: t.Interval,
		fetched: map[PageSet]time.Time{}, watchedSince: map[PageSet]time.Time{}, confirm: map[PageSet]time.Time{}}
}

// PageSets are the distinct page sets of a crawl of st at at, in request order; nil when its
// pages are not page sets (no requests, or none attributed to a play date or a course), so that
// demand and confirm crawls do not apply to it.
func PageSets(st *site.Site, at time.Time) []PageSet {
	_, vars, err := st.PageRequests(at)
	if err != nil {
		return nil
	}
	var out []PageSet
	for _, v := range vars {
		if p := pageSet(st, v); p != (PageSet{}) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// plan is what the site's crawl at now fetches, given its page sets now and which of them are
// watched: with scheduled (the site's schedule is due) every page set except the watched ones
// fetched within their interval; otherwise the watched page sets due, the stalest first, as many
// as the budget allows. The confirm crawls due are added either way. full reports a crawl of every
// page set (sets is then nil); an empty plan crawls nothing.
func (d *siteDemand) plan(now time.Time, sets []PageSet, watched []bool, scheduled bool) (crawl []PageSet, full bool) {
	d.refill(now, len(sets))
	var due []PageSet
	fresh := map[PageSet]bool{}
	for i, p := range sets {
		if !watched[i] {
			delete(d.watchedSince, p)
			continue
		}
		if _, ok := d.watchedSince[p]; !ok {
			d.watchedSince[p] = now
		}
		if at, ok := d.fetched[p]; ok && now.Before(at.Add(d.every)) {
			fresh[p] = true
		} else {
			due = append(due, p)
		}
	}
	for p := range d.watchedSince {
		if !slices.Contains(sets, p) {
			delete(d.watchedSince, p) // a date gone by
		}
	}
	confirm := d.confirmsDue(now, sets)
	if scheduled {
		for _, p := range sets {
			if !fresh[p] || slices.Contains(confirm, p) {
				crawl = append(crawl, p)
			}
		}
		if len(crawl) == len(sets) {
			return nil, true
		}
		return crawl, false
	}
	slices.SortStableFunc(due, func(a, b PageSet) int { return d.lastSeen(a).Compare(d.lastSeen(b)) })
	for _, p := range due {
		if d.tokens < 1-tokenSlack {
			break
		}
		d.tokens--
		crawl = append(crawl, p)
	}
	for _, p := range confirm {
		if !slices.Contains(crawl, p) {
			crawl = append(crawl, p)
		}
	}
	return crawl, false
}

// idle forgets the watched page sets and the confirm crawls due: outside its active hours a site
// is not crawled, and the first tick inside them finds its watched page sets again.
func (d *siteDemand) idle() {
	clear(d.watchedSince)
	clear(d.confirm)
}

// lastSeen is when p was last fetched, else when it became watched.
func (d *siteDemand) lastSeen(p PageSet) time.Time {
	if at, ok := d.fetched[p]; ok {
		return at
	}
	return d.watchedSince[p]
}

// confirmsDue are the page sets (of sets) whose confirm crawl is due at now.
func (d *siteDemand) confirmsDue(now time.Time, sets []PageSet) []PageSet {
	var out []PageSet
	for _, p := range sets {
		if at, ok := d.confirm[p]; ok && !now.Before(at) {
			out = append(out, p)
		}
	}
	return out
}

// refill adds the tokens earned since the last refill: budget × the schedule's page-set fetches
// an hour (n page sets every interval), at most one watched_every's worth.
func (d *siteDemand) refill(now time.Time, n int) {
	if d.interval <= 0 || n == 0 {
		return
	}
	d.rate = d.budget * float64(n) / d.interval.Seconds()
	d.burst = max(1, d.rate*d.every.Seconds())
	if d.tokensAt.IsZero() {
		d.tokens = d.burst
	} else if now.After(d.tokensAt) {
		d.tokens = min(d.burst, d.tokens+d.rate*now.Sub(d.tokensAt).Seconds())
	}
	d.tokensAt = now
}

// next is when the site's next watched or confirm crawl is due after its last plan (zero: none):
// the earliest watched page set's interval end, no sooner than the budget allows one, or a
// confirm crawl.
func (d *siteDemand) next() time.Time {
	var at time.Time
	earliest := func(t time.Time) {
		if !t.IsZero() && (at.IsZero() || t.Before(at)) {
			at = t
		}
	}
	for p := range d.watchedSince {
		due := d.watchedSince[p]
		if f, ok := d.fetched[p]; ok {
			due = f.Add(d.every)
		}
		if d.tokens < 1-tokenSlack && d.rate > 0 {
			due = later(due, d.tokensAt.Add(time.Duration((1-d.tokens)/d.rate*float64(time.Second))))
		}
		earliest(due)
	}
	for _, c := range d.confirm {
		earliest(c)
	}
	return at
}

// oldest is the last fetch of the stalest watched page set (when it became watched if never
// since); zero when none is watched.
func (d *siteDemand) oldest() time.Time {
	var at time.Time
	for p := range d.watchedSince {
		if s := d.lastSeen(p); at.IsZero() || s.Before(at) {
			at = s
		}
	}
	return at
}

// done records a crawl that started at start and fetched crawled (full: all, the site's page
// sets then): their last fetch, the confirm crawls it did, and a confirm crawl confirm_after later
// for each watched page set in which it saw an opening or a change (entered) and for each page set,
// watched or not, that holds an alert still waiting for its confirmation (awaiting).
func (d *siteDemand) done(start time.Time, crawled []PageSet, full bool, all, entered, awaiting []PageSet) {
	if full {
		crawled = all
	}
	for _, p := range crawled {
		d.fetched[p] = start
		if at, ok := d.confirm[p]; ok && !start.Before(at) {
			delete(d.confirm, p)
		}
	}
	if d.confirmAfter <= 0 {
		return
	}
	for _, p := range entered {
		if _, watched := d.watchedSince[p]; !watched {
			continue
		}
		d.confirm[p] = minTime(d.confirm[p], start.Add(d.confirmAfter))
	}
	for _, p := range awaiting {
		d.confirm[p] = minTime(d.confirm[p], start.Add(d.confirmAfter))
	}
	for p := range d.fetched {
		if !slices.Contains(all, p) {
			delete(d.fetched, p) // a date gone by
			delete(d.confirm, p)
		}
	}
}

// tokenSlack absorbs the rounding of the budget's refills (1/60 × 30 s is not quite ½).
const tokenSlack = 1e-9

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// minTime is the earlier of a and b, a zero time counting as none.
func minTime(a, b time.Time) time.Time {
	switch {
	case a.IsZero():
		return b
	case b.IsZero() || a.Before(b):
		return a
	}
	return b
}

// DemandReport is a site's demand at a moment, as `crawler check --watches` prints it: its page
// sets, the watched ones, and the requests an hour of its scheduled and of its watched crawls.
type DemandReport struct {
	Sets    int       // the site's page sets (0: its pages are not page sets; demand does not apply)
	Watched []PageSet // the page sets some watch can match
	// ScheduledPerHour are the requests an hour of the schedule's crawls, less the watched page
	// sets' (the schedule skips them while they are fresh); WatchedPerHour those of the watched
	// crawls, within the budget (BudgetPerHour). Confirm crawls come on top: one per opening seen.
	ScheduledPerHour, WatchedPerHour, BudgetPerHour float64
}

// ReportDemand is st's DemandReport at now under times and demand.
func ReportDemand(st *site.Site, times *site.SiteTimes, demand Demand, now time.Time) DemandReport {
	reqs, vars, err := st.PageRequests(now)
	sets := PageSets(st, now)
	if err != nil || len(sets) == 0 || times.Interval <= 0 {
		return DemandReport{}
	}
	perSet := map[PageSet]int{}
	for _, r := range reqs {
		perSet[pageSet(st, vars[r.Set])]++
	}
	r := DemandReport{Sets: len(sets)}
	perHour := time.Hour.Seconds() / times.Interval.Seconds()
	watchedReqs := 0
	for _, p := range sets {
		if demand != nil && demand.Watched(st.Name, p, now) {
			r.Watched = append(r.Watched, p)
			watchedReqs += perSet[p]
		}
	}
	r.BudgetPerHour = times.WatchedBudget() * float64(len(reqs)) * perHour
	r.WatchedPerHour = min(float64(watchedReqs)*time.Hour.Seconds()/times.WatchedEvery().Seconds(), r.BudgetPerHour)
	r.ScheduledPerHour = float64(len(reqs)) * perHour
	if times.WatchedEvery() < times.Interval {
		r.ScheduledPerHour = float64(len(reqs)-watchedReqs) * perHour
	}
	return r
}
