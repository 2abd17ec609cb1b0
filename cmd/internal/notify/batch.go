package notify

import (
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// Batch is the claim batch of evs at now: every (watch, channel) match of an opening or a change
// that enters a watch (see Rule), once per claim key, in event and config order, and the latest
// close of every listing that closed. Both claim paths build their batches here: the Kafka
// consumer's (pgclaims.Claimer) and the crawler's.
func (c *Config) Batch(evs []*events.Event, now time.Time, maxAge time.Duration) ClaimBatch {
	b := ClaimBatch{Now: now, MaxAge: maxAge}
	seen := map[[16]byte]bool{}
	closes := map[string]int{} // listing key → index in b.Closes
	for _, e := range evs {
		if e == nil {
			continue
		}
		if e.EventType == events.ListingClosed {
			if i, ok := closes[e.ListingKey]; !ok {
				closes[e.ListingKey] = len(b.Closes)
				b.Closes = append(b.Closes, Close{ListingKey: e.ListingKey, At: e.OccurredAt})
			} else if e.OccurredAt.After(b.Closes[i].At) {
				b.Closes[i].At = e.OccurredAt
			}
			continue
		}
		for _, w := range c.MatchAll(e, now) {
			for _, ch := range w.Channels {
				k := ClaimKey(w.Name, ch, e.EventID)
				if seen[k] {
					continue
				}
				seen[k] = true
				b.Claims = append(b.Claims, Claim{Key: k, Watch: w.Name, Channel: ch, Event: e})
			}
		}
	}
	return b
}

// Watch returns the watch named name, or nil.
func (c *Config) Watch(name string) *Watch {
	for _, w := range c.Watches {
		if w.Name == name {
			return w
		}
	}
	return nil
}
