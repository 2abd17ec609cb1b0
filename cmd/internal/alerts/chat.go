package alerts

import (
	"context"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/chat"
)

// poller is command channel ch's poller and commander: its watches are the service's in force,
// its changes reload them (chatChanged), /test goes out the way alerts go.
func (s *Service) poller(ch *notify.Channel, m *chat.Metrics) *chat.Poller {
	return &chat.Poller{Client: notify.NewClient(s.transport()), Logger: s.logger, Secrets: s.secrets, FailingAfter: s.cfg.FailingAfter,
		Commander: &chat.Commander{Channel: ch, Store: s.store, Watches: s.InForce, Changed: s.chatChanged, Metrics: m, Logger: s.logger,
			BacklogNow: s.cfg.Open != nil && !s.cfg.NoBacklog,
			Test: func(ctx context.Context) error {
				_, err := ch.Exchange(ctx, s.clients[ch.Name], ch.TestMessage(s.cfg.Now()))
				return err
			}}}
}

// chatChanged is a commander's Changed: the store's chat watches in force again and, on the
// central path, a new (or unmuted) one answered at once with what is open now.
func (s *Service) chatChanged(ctx context.Context) error {
	if err := s.reload(ctx); err != nil {
		return err
	}
	if s.cfg.Open != nil {
		if _, err := s.Claim(ctx, Crawl{Open: s.cfg.Open}); err != nil && ctx.Err() == nil {
			s.logger.ErrorContext(ctx, "chat watch: answer with what is open now", "err", s.scrub(err.Error()))
		}
	}
	return nil
}
