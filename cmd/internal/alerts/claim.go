package alerts

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/events"
)

// Claim claims one crawl's matches in one durable transaction of the store and wakes the senders
// of the channels that got new claims; it returns how many claims it made sending. Every match of
// one watch and channel in the crawl goes out as one message (split by the channel's limit). On
// a source's first crawl (c.First) every event is the opening of a listing that was open before
// the crawler looked: those are claimed as the backlog of every watch asking, not as openings.
// With c.Open, the watches that ask anew on c.Site (new, or their fingerprint recorded there is
// another or none; every one on a first crawl) are answered in the same transaction with what
// is open now (notify.ClaimBatch.AddBacklog, unless NoBacklog), and their fingerprints recorded
// there, so that a restart with the same watches asks nothing. With c.Confirm (the crawler
// path) the site's pending claims are resolved by the crawl's evidence and, with its After, the
// crawl's own matches claimed pending (see Confirm), in the same transaction. It never sends:
// sending runs beside the crawl. On a dry run it writes what it would do and records nothing.
func (s *Service) Claim(ctx context.Context, c Crawl) (int, error) {
	now := s.cfg.Now()
	watches := s.InForce()
	evs := c.Events
	if c.First {
		evs = nil // every event is an opening of what was open before: the backlog below, not a match
	}
	b := watches.Batch(evs, now, s.cfg.MaxAge)
	if c.Confirm != nil && c.Site != "" && s.cfg.DryRun == nil {
		if err := s.loadPending(ctx); err != nil {
			return 0, err
		}
		b.Resolve = s.resolve(c.Site, *c.Confirm, watches, now)
		if c.Confirm.After > 0 {
			for i := range b.Claims {
				b.Claims[i].Pending = true // a Batch claim is an opening or a change into its watch
			}
		}
	}
	var asking []*notify.Watch
	open := 0
	if c.Open != nil {
		var err error
		if asking, err = s.asking(ctx, watches, c.Site, c.First); err != nil {
			return 0, err
		}
		if len(asking) > 0 {
			var evs []*events.Event
			if !s.cfg.NoBacklog && slices.ContainsFunc(asking, func(w *notify.Watch) bool { return !w.NoBacklog }) {
				if evs, err = c.Open.OpenListings(ctx, c.Site); err != nil {
					return 0, fmt.Errorf("backlog: %w", err)
				}
			}
			open = len(evs)
			b.AddBacklog(asking, evs, c.Site, s.cfg.NoBacklog)
		}
	}
	if s.cfg.DryRun != nil {
		return 0, s.preview(ctx, b)
	}
	claimed, err := s.intake(ctx, b)
	if err != nil {
		return 0, err
	}
	claimed += s.resolved(c.Site, b.Resolve)
	if known := s.known[c.Site]; c.Site != "" && known != nil {
		s.mu.Lock()
		for _, f := range b.Fingerprints {
			known[f.Watch] = f.Fingerprint
		}
		s.mu.Unlock()
	}
	if len(asking) > 0 && c.Site == "" {
		names := make([]string, len(asking))
		for i, w := range asking {
			names[i] = w.Name
		}
		s.logger.InfoContext(ctx, "watches answered with what is open now", "watches", names, "open_listings", open,
			"claimed", claimed, "no_backlog", s.cfg.NoBacklog)
	}
	return claimed, nil
}

// asking returns the watches (not muted) that ask site anew with their current conditions: all
// of them on the site's first crawl, else those whose recorded fingerprint is another or none. A
// site's fingerprints are read once and then kept up to date by Claim; every source's (site "",
// the central path, several notifiers sharing them) are read each time.
func (s *Service) asking(ctx context.Context, watches *notify.Config, site string, first bool) ([]*notify.Watch, error) {
	s.mu.Lock()
	known, ok := s.known[site]
	s.mu.Unlock()
	if !ok || site == "" {
		fps, err := s.store.Fingerprints(ctx, site)
		if err != nil {
			return nil, fmt.Errorf("backlog: %w", err)
		}
		known = fps
		if site != "" {
			s.mu.Lock()
			s.known[site] = fps
			s.mu.Unlock()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return watches.Asking(known, first), nil
}

// preview writes, per match of b, what a real claim would do with it (the store writes nothing).
func (s *Service) preview(ctx context.Context, b notify.ClaimBatch) error {
	if len(b.Claims) == 0 {
		return nil
	}
	res, err := s.store.(previewer).Preview(ctx, b)
	if err != nil {
		return err
	}
	byKey := map[[16]byte]notify.Claim{}
	for _, cl := range b.Claims {
		byKey[cl.Key] = cl
	}
	now := s.cfg.Now()
	for _, r := range res {
		cl := byKey[r.Key]
		lang := "ko"
		if ch := s.file.Channels[r.Channel]; ch != nil {
			lang = ch.Language
		}
		switch r.Status {
		case notify.StatusSending:
			text := notify.Text(lang, cl.Watch, []*events.Event{cl.Event}, []bool{cl.Backlog}, now)
			fmt.Fprintf(s.cfg.DryRun, "would send to %s (watch %s, key %s):\n%s\n\n", r.Channel, cl.Watch, r.Key, text)
		default:
			reason := r.Reason
			if reason == "" {
				reason = string(r.Status)
			}
			fmt.Fprintf(s.cfg.DryRun, "would skip %s for %s (watch %s, key %s): %s\n", cl.Event.EventID, r.Channel, cl.Watch, r.Key, reason)
		}
	}
	return nil
}

// intake claims b in one transaction of the store, counts what it created and wakes the senders
// of the channels that got new claims; it returns how many claims it created sending.
func (s *Service) intake(ctx context.Context, b notify.ClaimBatch) (int, error) {
	if len(b.Claims) == 0 && len(b.Closes) == 0 && len(b.Fingerprints) == 0 && len(b.Resolve) == 0 {
		return 0, nil
	}
	created, err := s.store.Claim(ctx, b)
	if err != nil {
		return 0, fmt.Errorf("claim %d matches: %w", len(b.Claims), err)
	}
	claimed, skipped, pending := 0, 0, 0
	var woken []string
	for _, c := range created {
		if c.Status == notify.StatusPending {
			pending++
			s.await(b, c.Key)
			continue
		}
		if c.Status != notify.StatusSending {
			skipped++
			s.metrics.Skipped(c.Reason, 1)
			continue
		}
		claimed++
		if !slices.Contains(woken, c.Channel) {
			woken = append(woken, c.Channel)
		}
	}
	s.metrics.Claimed(claimed)
	s.wake(woken)
	if claimed > 0 || skipped > 0 || pending > 0 {
		s.logger.InfoContext(ctx, "claimed matches", "claimed", claimed, "pending", pending, "skipped", skipped, "matches", len(b.Claims))
	}
	return claimed, nil
}

// Awaiting is the listings of site whose alerts are pending, once each: the crawler makes their
// page sets' confirm crawls due.
func (s *Service) Awaiting(site string) []events.Listing {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []events.Listing
	seen := map[string]bool{}
	for _, c := range s.pending[site] {
		if e := c.Event; !seen[e.ListingKey] {
			seen[e.ListingKey] = true
			out = append(out, events.Listing{Source: e.Source, CourseName: e.CourseName, CoursePart: e.CoursePart,
				PlayDate: e.PlayDate, TeeTime: e.TeeTime})
		}
	}
	return out
}

// loadPending reads the store's pending claims once (at the first crawl that confirms): the
// service keeps them by source from then on (one process confirms: the crawler's state-dir lock).
func (s *Service) loadPending(ctx context.Context) error {
	s.mu.Lock()
	loaded := s.pending != nil
	s.mu.Unlock()
	if loaded {
		return nil
	}
	cs, err := s.store.Pending(ctx)
	if err != nil {
		return fmt.Errorf("alerts: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending == nil {
		s.pending = map[string]map[uuid.UUID]notify.Claim{}
		for _, c := range cs {
			s.addPending(c)
		}
	}
	return nil
}

// addPending keeps c as pending on its event's source. s.mu is held.
func (s *Service) addPending(c notify.Claim) {
	m := s.pending[c.Event.Source]
	if m == nil {
		m = map[uuid.UUID]notify.Claim{}
		s.pending[c.Event.Source] = m
	}
	m[c.Key] = c
}

// await keeps the claim of b under key, which the store made pending.
func (s *Service) await(b notify.ClaimBatch, key uuid.UUID) {
	i := slices.IndexFunc(b.Claims, func(c notify.Claim) bool { return c.Key == key })
	if i < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending != nil {
		s.addPending(b.Claims[i])
	}
}

// resolve decides, by the crawl's evidence cf, what becomes of site's pending claims (see
// Confirm): their Resolve entries, none for a claim that waits on.
func (s *Service) resolve(site string, cf Confirm, watches *notify.Config, now time.Time) []notify.Resolve {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []notify.Resolve
	for key, c := range s.pending[site] {
		e := c.Event
		seen := cf.Seen(e.ListingKey)
		switch {
		case !seen.Open || seen.Since.Truncate(time.Microsecond).After(e.OccurredAt): // (occurred_at is in microseconds)
			out = append(out, notify.Resolve{Key: key, Status: notify.StatusWithheld})
		case seen.Shows && !cf.At.Before(e.OccurredAt.Add(cf.After)):
			if w := watches.Watch(c.Watch); w != nil && !w.Matches(e, seen.Listing.PriceKRW, seen.Listing.Players, now) {
				out = append(out, notify.Resolve{Key: key, Status: notify.StatusSkipped, Reason: notify.ReasonLeftWatch})
			} else {
				out = append(out, notify.Resolve{Key: key, Status: notify.StatusSending})
			}
		case e.OccurredAt.Before(now.Add(-s.cfg.MaxAge)):
			out = append(out, notify.Resolve{Key: key, Status: notify.StatusSkipped, Reason: notify.ReasonStale})
		}
	}
	return out
}

// resolved records rs, committed: the claims leave the pending ones, the withheld and skipped are
// counted, and the senders of the confirmed claims' channels are woken. It returns how many were
// confirmed.
func (s *Service) resolved(site string, rs []notify.Resolve) int {
	if len(rs) == 0 {
		return 0
	}
	s.mu.Lock()
	var woken []string
	confirmed := 0
	for _, r := range rs {
		c := s.pending[site][r.Key]
		delete(s.pending[site], r.Key)
		switch r.Status {
		case notify.StatusSending:
			confirmed++
			if !slices.Contains(woken, c.Channel) {
				woken = append(woken, c.Channel)
			}
		case notify.StatusWithheld:
			s.withheld.Add(1)
		default:
			s.metrics.Skipped(r.Reason, 1)
		}
	}
	s.mu.Unlock()
	s.metrics.Claimed(confirmed)
	s.wake(woken)
	return confirmed
}

// Withheld is how many pending claims were withheld since the service was made.
func (s *Service) Withheld() int64 { return s.withheld.Load() }
