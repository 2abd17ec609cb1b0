package notify

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// A watch is a query: when it is new, or its conditions changed, its first evaluation on a
// source answers with what matches now (the backlog), worded as already open, and from then on
// only what enters it fires (Rule). The store keeps, per watch and source, the Fingerprint it
// last evaluated; a different one (or none) is a new question.

// Fingerprint is the identity of w's question: its conditions and channels (not its name, not
// enabled, not backlog). A watch whose fingerprint changed gets the backlog again; a listing
// already claimed for the watch and a channel is not claimed again (ClaimStore: Backlog claims).
func (w *Watch) Fingerprint() string {
	b, _ := json.Marshal(struct {
		Sources, Courses, CoursesExact []string
		DateFrom, DateTo               time.Time
		NextDays                       int
		Weekdays                       []time.Weekday
		TimeFrom, TimeTo               string
		MaxPriceKRW                    *int64
		MinPlayers                     *int
		Channels                       []string
	}{w.Sources, w.Courses, w.CoursesExact, w.DateFrom, w.DateTo, w.NextDays, w.Weekdays, w.TimeFrom, w.TimeTo,
		w.MaxPriceKRW, w.MinPlayers, w.Channels})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// WatchFingerprint is the fingerprint of a watch as evaluated on one source, recorded by Claim in
// the transaction of the backlog it answered with.
type WatchFingerprint struct {
	Watch, Source, Fingerprint string
}

// BacklogClaims are the claims of the listings open now (open: the listing_opened event of each
// listing's current lifetime, with its last seen values and its first-seen time as occurred_at)
// that match w, one per channel, marked Backlog: the store claims one only if no claim of its
// watch, channel and listing exists for the listing's current lifetime, exempts it from the
// event-age rule (its age counts from the claim), and the message says "open for N days".
func (w *Watch) BacklogClaims(open []*events.Event, now time.Time) []Claim {
	return w.backlogClaims(prepareAll(open, now))
}

// prepareAll is the matching views of the openings among evs, each prepared once for every
// watch asking (prepare lower-cases the course and parses the play date: per watch and listing
// it was most of a first crawl's matching).
func prepareAll(evs []*events.Event, now time.Time) []*view {
	out := make([]*view, 0, len(evs))
	for _, e := range evs {
		if e.EventType == events.ListingOpened {
			out = append(out, prepare(e, now))
		}
	}
	return out
}

func (w *Watch) backlogClaims(open []*view) []Claim {
	if w.Muted {
		return nil
	}
	var out []Claim
	for _, v := range open {
		e := v.e
		if !w.matches(v, e.PriceKRW, e.Players) {
			continue
		}
		for _, ch := range w.Channels {
			out = append(out, Claim{Key: ClaimKey(w.Name, ch, e.EventID), Watch: w.Name, Channel: ch, Event: e, Backlog: true})
		}
	}
	return out
}

// Asking returns the watches (not muted) that ask anew: every one when all (a source's first
// crawl), else those whose fingerprint in known (by watch name) is another or none.
func (c *Config) Asking(known map[string]string, all bool) []*Watch {
	var fps []string
	if !all {
		fps = c.fingerprints()
	}
	var out []*Watch
	for i, w := range c.Watches {
		if !w.Muted && (all || known[w.Name] != fps[i]) {
			out = append(out, w)
		}
	}
	return out
}

// fingerprints is each watch's Fingerprint, computed once per config: Asking runs on every site
// crawl, and a fingerprint is a JSON encoding and a SHA-256 (with 1,000 watches, 4.5-8 ms a site
// crawl, under the hook's lock). A config's watches do not change once it is in use.
func (c *Config) fingerprints() []string {
	c.fpOnce.Do(func() {
		c.fps = make([]string, len(c.Watches))
		for i, w := range c.Watches {
			c.fps[i] = w.Fingerprint()
		}
	})
	if len(c.fps) != len(c.Watches) { // watches appended after the first call (tests)
		fps := make([]string, len(c.Watches))
		for i, w := range c.Watches {
			fps[i] = w.Fingerprint()
		}
		return fps
	}
	return c.fps
}

// AddBacklog adds to b the answers of the watches asking (Asking): each one's backlog claims over
// open (none under noBacklog or the watch's backlog: false) and its fingerprint on source, which
// the store records in b's transaction, so that a restart with the same watches asks nothing.
func (b *ClaimBatch) AddBacklog(asking []*Watch, open []*events.Event, source string, noBacklog bool) {
	var views []*view
	for _, w := range asking {
		if !noBacklog && !w.NoBacklog {
			if views == nil {
				views = prepareAll(open, b.Now)
			}
			b.Claims = append(b.Claims, w.backlogClaims(views)...)
		}
		b.Fingerprints = append(b.Fingerprints, WatchFingerprint{Watch: w.Name, Source: source, Fingerprint: w.Fingerprint()})
	}
}
