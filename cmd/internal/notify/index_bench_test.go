package notify_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
)

// golferWatches is n watches shaped like golfers' wishes (issue #50 item 4's "golfer-shaped"):
// spread over 24 sources (each watch names one or two); one to three weekdays; a tee-time window
// of 2-4 hours starting between 05:00 and 15:00; 70 % with a price cap (80,000-230,000원); 60 % a
// play-date range of 1-14 days inside a 90-day season (from 2026-12-01), 20 % next_days 7-30, 20 %
// no date; a third a course substring (one of 40 courses).
func golferWatches(n int, seed uint64) *notify.Config {
	r := rand.New(rand.NewPCG(seed, 7))
	days := []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	b := []byte("channels:\n  hook: {type: webhook, url: http://127.0.0.1:1/}\nwatches:\n")
	season := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		b = fmt.Appendf(b, "  - name: w%d\n    channels: [hook]\n", i)
		if r.IntN(10) < 7 {
			b = fmt.Appendf(b, "    max_price_krw: %d\n", 80000+1000*r.IntN(151))
		}
		h := 5 + r.IntN(11)
		b = fmt.Appendf(b, "    tee_time: {from: \"%02d:00\", to: \"%02d:00\"}\n", h, h+2+r.IntN(3))
		src := r.IntN(24)
		if r.IntN(2) == 0 {
			b = fmt.Appendf(b, "    sources: [site-%d]\n", src)
		} else {
			b = fmt.Appendf(b, "    sources: [site-%d, site-%d]\n", src, (src+1+r.IntN(23))%24)
		}
		switch p := r.IntN(10); {
		case p < 6:
			from := season.AddDate(0, 0, r.IntN(90))
			b = fmt.Appendf(b, "    play_dates: {from: %s, to: %s}\n", from.Format(events.DateLayout),
				from.AddDate(0, 0, r.IntN(14)).Format(events.DateLayout))
		case p < 8:
			b = fmt.Appendf(b, "    next_days: %d\n", 7+r.IntN(24))
		}
		wd := r.Perm(7)[:1+r.IntN(3)]
		b = append(b, "    weekdays: ["...)
		for k, d := range wd {
			if k > 0 {
				b = append(b, ", "...)
			}
			b = append(b, days[d]...)
		}
		b = append(b, "]\n"...)
		if r.IntN(3) == 0 {
			b = fmt.Appendf(b, "    courses: [course-%d]\n", r.IntN(40))
		}
	}
	c, err := notify.Parse(b, func(string) string { return "" })
	if err != nil {
		panic(err)
	}
	return c
}

// seasonEvents is n openings over the 24 sources, 40 courses and the 90-day season.
func seasonEvents(n int) []*events.Event {
	r := rand.New(rand.NewPCG(3, 4))
	season := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	out := make([]*events.Event, n)
	for i := range out {
		price, players := int64(80000+1000*r.IntN(150)), 1+r.IntN(4)
		l := events.Listing{Source: fmt.Sprintf("site-%d", r.IntN(24)), CourseName: fmt.Sprintf("Course-%d CC", r.IntN(40)),
			RoundDate: "2026-12-01", PlayDate: season.AddDate(0, 0, r.IntN(90)).Format(events.DateLayout),
			TeeTime: fmt.Sprintf("%02d:%02d", 5+r.IntN(12), 10*r.IntN(6)), Values: events.Values{PriceKRW: &price, Players: &players}}
		e := events.Opened(l, "bench", time.Now())
		out[i] = &e
	}
	return out
}

// BenchmarkMatchScale is the matching cost per event with 1,000 golfer-shaped watches vs 10
// (golferWatches), measured side by side: the two take turns on each chunk of 500 events (the
// one to go first alternates, so neither always finds the chunk's events in cache), and
// ratio_1000w/10w is the median of the chunks' ratios, each of two timings a fraction of a
// millisecond apart: a burst of load on the machine hits both sides of a ratio alike, where a
// ratio of the two totals moved by ±20 % with the load between runs. The index keeps the cost
// nearly flat (target ≤ 2× per event).
func BenchmarkMatchScale(b *testing.B) {
	small, large := golferWatches(10, 1), golferWatches(1000, 1)
	evs := seasonEvents(20000)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	var tSmall, tLarge time.Duration
	var mSmall, mLarge, n, turn int
	var ratios []float64
	const chunk = 500
	match := func(c *notify.Config, part []*events.Event) (time.Duration, int) {
		m, t0 := 0, time.Now()
		for _, e := range part {
			m += len(c.MatchAll(e, now))
		}
		return time.Since(t0), m
	}
	for b.Loop() {
		for i := 0; i < len(evs); i += chunk {
			part := evs[i:min(i+chunk, len(evs))]
			var ds, dl time.Duration
			var ms, ml int
			if turn++; turn%2 == 0 {
				ds, ms = match(small, part)
				dl, ml = match(large, part)
			} else {
				dl, ml = match(large, part)
				ds, ms = match(small, part)
			}
			tSmall, tLarge, mSmall, mLarge = tSmall+ds, tLarge+dl, mSmall+ms, mLarge+ml
			ratios = append(ratios, float64(dl)/float64(ds))
		}
		n += len(evs)
	}
	slices.Sort(ratios)
	b.ReportMetric(float64(tSmall.Nanoseconds())/float64(n), "ns/event_10w")
	b.ReportMetric(float64(tLarge.Nanoseconds())/float64(n), "ns/event_1000w")
	b.ReportMetric(ratios[len(ratios)/2], "ratio_1000w/10w")
	b.ReportMetric(float64(mLarge)/float64(n), "matches/event_1000w")
}

// BenchmarkBacklogAsking is a first crawl's backlog with 1,000 golfer-shaped watches asking:
// AddBacklog over 1,600 openings (a site's listings), each opening prepared once for all of them.
func BenchmarkBacklogAsking(b *testing.B) {
	c := golferWatches(1000, 1)
	open := seasonEvents(1600)
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	claims := 0
	for b.Loop() {
		batch := notify.ClaimBatch{Now: now}
		batch.AddBacklog(c.Asking(nil, true), open, "site-1", false)
		claims = len(batch.Claims)
	}
	b.ReportMetric(float64(claims), "claims")
}

// BenchmarkAsking is a site crawl's question "which watches ask anew?" with 1,000 watches, none
// of them changed: one fingerprint comparison each.
func BenchmarkAsking(b *testing.B) {
	c := golferWatches(1000, 1)
	known := map[string]string{}
	for _, w := range c.Watches {
		known[w.Name] = w.Fingerprint()
	}
	for b.Loop() {
		if n := len(c.Asking(known, false)); n != 0 {
			b.Fatalf("%d watches ask anew, want none", n)
		}
	}
}
