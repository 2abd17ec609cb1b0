package main

import (
	"time"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/crawler"
)

// watchDemand is crawler.Demand over the watches in force: a page set is watched when one of
// them can match its listings (notify.Watch.Demands). watches is read at every question, so a
// watch made from the chat (alerts' live set) counts from the schedule's next tick.
type watchDemand struct {
	watches func() *notify.Config
}

var _ crawler.Demand = watchDemand{}

// Watched implements crawler.Demand.
func (d watchDemand) Watched(site string, set crawler.PageSet, now time.Time) bool {
	cfg := d.watches()
	if cfg == nil {
		return false
	}
	for _, w := range cfg.Watches {
		if w.Demands(site, set.Course, set.PlayDate, now) {
			return true
		}
	}
	return false
}

// demandOnlyEnv is the environment a --demand file is read with: the crawler sends nothing for
// it, so no channel's secret is read; every variable reads as a placeholder URL named after it
// (unique, so that one poller per bot still holds), which the file's checks accept.
func demandOnlyEnv(name string) string { return "https://demand-only.invalid/" + name }
