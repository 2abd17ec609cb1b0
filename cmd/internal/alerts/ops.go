package alerts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
)

// Prune deletes the sent and skipped claims claimed longer ago than Retention (a failure is
// logged: the next prune tries again).
func (s *Service) Prune(ctx context.Context) {
	if s.cfg.Retention <= 0 {
		return
	}
	n, err := s.store.Prune(ctx, time.Now().Add(-s.cfg.Retention))
	switch {
	case err != nil && ctx.Err() == nil:
		s.logger.WarnContext(ctx, "alerts: prune old claims", "err", s.scrub(err.Error()))
	case n > 0:
		s.logger.InfoContext(ctx, "alerts: old claims deleted", "deleted", n, "retention", s.cfg.Retention.String())
	}
}

// Unsent counts the claims still waiting to be sent.
func (s *Service) Unsent(ctx context.Context) (int, error) {
	rows, err := s.store.List(ctx, notify.Filter{Status: notify.StatusSending, Limit: 1_000_000})
	if err != nil {
		return 0, fmt.Errorf("alerts: count the unsent claims: %w", err)
	}
	return len(rows), nil
}

// OldestUnsent is how long ago the oldest claim still waiting to be sent was claimed (0: none).
func (s *Service) OldestUnsent() time.Duration {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := s.store.List(ctx, notify.Filter{Status: notify.StatusSending, Limit: 1_000_000})
	if err != nil || len(rows) == 0 {
		return 0
	}
	oldest := rows[0].ClaimedAt
	for _, r := range rows {
		if r.ClaimedAt.Before(oldest) {
			oldest = r.ClaimedAt
		}
	}
	return time.Since(oldest)
}

// registerMetrics registers the service's own series on reg (Config.MetricsPrefix).
func (s *Service) registerMetrics(reg prometheus.Registerer, prefix string) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: prefix + "alerts_oldest_unsent_seconds",
		Help: "Age of the oldest alert claimed and not yet sent, failed or skipped (0: none)."}, func() float64 { return s.OldestUnsent().Seconds() }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: prefix + "alerts_withheld_total",
			Help: "Alerts withheld: pending (confirm_after) when their listing closed before a crawl confirmed it open (listed by crawler notifications --status withheld)."},
			func() float64 { return float64(s.Withheld()) }))
}

// Wait waits up to d for every claim to be sent (or failed, or skipped) and returns how many are
// still unsent, saying so in one line (`crawler once` leaves them for its next run).
func (s *Service) Wait(ctx context.Context, d time.Duration) (int, error) {
	deadline := time.Now().Add(d)
	for {
		n, err := s.Unsent(ctx)
		switch {
		case err != nil:
			s.logger.WarnContext(ctx, "alerts: count the unsent claims", "err", s.scrub(err.Error()))
			return n, err
		case n == 0:
			s.logger.InfoContext(ctx, "alerts: every claim sent, failed or skipped")
			return 0, nil
		case !time.Now().Before(deadline) || ctx.Err() != nil:
			s.logger.WarnContext(ctx, "alerts left claimed for the next run", "unsent", n, "alert_wait", d.String(),
				"note", "the next run sends them under the same Idempotency-Key, unless older than the max age by then")
			return n, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(min(50*time.Millisecond, time.Until(deadline))):
		}
	}
}

// Resent is one outcome a resend recorded: the claims of one message (or the part of it skipped
// for one reason).
type Resent struct {
	Watch, Channel string
	Key            uuid.UUID // the message's Idempotency-Key: the one it failed with
	Claims         int
	Outcome        notify.Outcome
}

// Resend is `notifications resend` on either store: it puts the claims f selects back to sending
// (notify.ClaimStore.Resend; f.Channels is set to the watches file's, the only ones it can send
// on) and sends them at once, one channel after the other, each message under the key it failed
// with, exempt from the event-age check, the closed, watch_removed and watch_muted skips applied
// (the chat's watches count: they are loaded first). It returns how many claims it put back and
// every outcome recorded, in order. A claim of the channel still sending from before (a
// single-process store's leftovers) goes out with them. The service must not be started.
func (s *Service) Resend(ctx context.Context, f notify.ResendFilter) (int, []Resent, error) {
	if err := s.load(ctx); err != nil {
		return 0, nil, err
	}
	f.Channels = f.Channels[:0:0]
	for name := range s.file.Channels {
		f.Channels = append(f.Channels, name)
	}
	slices.Sort(f.Channels)
	n, err := s.store.Resend(ctx, f)
	if err != nil || n == 0 {
		return n, nil, err
	}
	var mu sync.Mutex
	var out []Resent
	for _, name := range f.Channels {
		snd := s.sender(name)
		if snd.Client == nil { // a channel no watch uses
			snd.Client = notify.NewClient(s.transport())
		}
		snd.Wake, snd.Stop = nil, nil
		snd.Finished = func(g notify.Group, o notify.Outcome) {
			mu.Lock()
			defer mu.Unlock()
			out = append(out, Resent{Watch: g.Watch, Channel: g.Channel, Key: g.Key, Claims: len(g.Claims), Outcome: o})
		}
		for {
			done, err := snd.Once(ctx)
			if err != nil {
				return n, out, fmt.Errorf("resend on %s: %w", name, err)
			}
			if done == 0 {
				break
			}
		}
	}
	return n, out, nil
}

// Test sends channel name's test message (notify.Channel.TestMessage) through the service's client policy
// and returns the channel's answer (`alerts test`).
func (s *Service) Test(ctx context.Context, name string) (notify.Answer, error) {
	ch := s.file.Channels[name]
	if ch == nil {
		return notify.Answer{}, fmt.Errorf("no channel %q", name)
	}
	client := s.clients[name]
	if client == nil {
		client = notify.NewClient(s.transport())
	}
	return ch.Exchange(ctx, client, ch.TestMessage(s.cfg.Now()))
}

// destinationKey is the fingerprints row of channel name's destination: '#' is in no watch's name.
func destinationKey(name string) string { return "#channel " + name }

// destination identifies where a channel delivers (its type, URL, bot and chat), as a hash: the
// URL and the token are secrets.
func destination(ch *notify.Channel) string {
	sum := sha256.Sum256([]byte(fmt.Sprint(ch.Type, "\x00", ch.URL, "\x00", ch.Token, "\x00", ch.ChatID, "\x00", ch.BaseURL)))
	return hex.EncodeToString(sum[:16])
}

// resendToChangedDestinations puts back to sending the failed claims of every channel whose
// destination changed since the last start (a corrected chat_id or URL), so that the senders
// deliver what the channel could not (a new watch's backlog among them: what is open now; a claim
// whose listing closed since is skipped at send time), and records every used channel's
// destination. The first start with a channel records it and resends nothing.
func (s *Service) resendToChangedDestinations(ctx context.Context) error {
	known, err := s.store.Fingerprints(ctx, "")
	if err != nil {
		return fmt.Errorf("alerts: %w", err)
	}
	b := notify.ClaimBatch{Now: s.cfg.Now()}
	var changed []string
	for _, name := range s.file.UsedChannels() {
		key, dest := destinationKey(name), destination(s.file.Channels[name])
		if old, ok := known[key]; ok && old == dest {
			continue
		} else if ok {
			changed = append(changed, name)
		}
		b.Fingerprints = append(b.Fingerprints, notify.WatchFingerprint{Watch: key, Fingerprint: dest})
	}
	if len(changed) > 0 {
		n, err := s.store.Resend(ctx, notify.ResendFilter{Channels: changed})
		if err != nil {
			return fmt.Errorf("alerts: resend to the changed destinations: %w", err)
		}
		s.logger.InfoContext(ctx, "alerts: a channel's destination changed: its failed alerts go out again", "channels", changed, "alerts", n)
	}
	if _, err := s.intake(ctx, b); err != nil {
		return fmt.Errorf("alerts: record the channels' destinations: %w", err)
	}
	return nil
}
