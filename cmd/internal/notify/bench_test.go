package notify_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
)

// benchWatches is n watches of every shape: course substrings, date ranges, weekdays, tee-time
// windows, price caps and player minimums.
func benchWatches(n int) *notify.Config {
	b := []byte("channels:\n  hook: {type: webhook, url: http://127.0.0.1:1/}\nwatches:\n")
	days := []string{"[sat, sun]", "[mon, tue, wed, thu, fri]", "[fri]"}
	for i := range n {
		b = fmt.Appendf(b, "  - name: w%d\n    courses: [course-%d]\n    play_dates: {from: 2026-12-01, to: 2026-12-%02d}\n    weekdays: %s\n"+
			"    tee_time: {from: \"%02d:00\", to: \"%02d:59\"}\n    max_price_krw: %d\n    min_players: %d\n    channels: [hook]\n",
			i, i%50, 10+i%20, days[i%3], 5+i%6, 7+i%6, 100000+1000*(i%100), 1+i%4)
	}
	c, err := notify.Parse(b, func(string) string { return "" })
	if err != nil {
		panic(err)
	}
	return c
}

func benchEvents(n int) []*events.Event {
	out := make([]*events.Event, n)
	for i := range out {
		price, players := int64(80000+500*(i%200)), 1+i%4
		l := events.Listing{Source: "sim", CourseName: fmt.Sprintf("Course-%d", i%60), RoundDate: "2026-12-05",
			PlayDate: fmt.Sprintf("2026-12-%02d", 1+i%28), TeeTime: fmt.Sprintf("%02d:%02d", 5+i%12, (i%4)*15), Values: events.Values{PriceKRW: &price, Players: &players}}
		e := events.Opened(l, "bench", time.Now())
		out[i] = &e
	}
	return out
}

// BenchmarkMatch is the matching throughput: events/s, each matched against 1,000 watches.
func BenchmarkMatch(b *testing.B) {
	cfg := benchWatches(1000)
	evs := benchEvents(10000)
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	matches, n := 0, 0
	start := time.Now()
	for b.Loop() {
		for _, e := range evs {
			matches += len(cfg.MatchAll(e, now))
		}
		n += len(evs)
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
	b.ReportMetric(float64(matches)/float64(n), "matches/event")
}
