package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/consumer"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/pgclaims"
)

// Watches from the chat, central path: each command channel (commands: true) of the watches file
// is long-polled by this process, once it holds the bot's poller in PostgreSQL (pgclaims.LockPoller:
// a second process on the same token is refused at start-up, naming the holder). The chat's
// watches are kept in chat_watches beside the claims and in force beside the file's (notify.Live);
// a new one is answered at once with what is open now (Claimer.Backlog).

// commandChannels are the channels of w whose chat takes commands.
func commandChannels(w *notify.Config) []*notify.Channel {
	var out []*notify.Channel
	for _, name := range w.UsedChannels() {
		if ch := w.Channels[name]; ch.Commands {
			out = append(out, ch)
		}
	}
	return out
}

// loadChatWatches puts the chat's watches of st in force beside the file's; one left out (its
// channel no longer a command channel of the file, its name taken by a file watch) is logged.
func loadChatWatches(ctx context.Context, st notify.ChatStore, live *notify.Live, logger *slog.Logger) error {
	ws, err := st.ChatWatches(ctx)
	if err != nil {
		return fmt.Errorf("chat watches: %w", err)
	}
	for _, err := range live.SetChat(ws) {
		logger.WarnContext(ctx, "chat watch left out", "err", err)
	}
	return nil
}

// chatPollers are the notifier's command pollers and the poller locks they run under.
type chatPollers struct {
	locks   []*pgclaims.PollerLock
	wg      sync.WaitGroup
	pollers []*notify.Poller
}

// lockPollers takes the poller of every command channel's bot, or none: a bot another process
// polls is an error naming both.
func lockPollers(ctx context.Context, pool *pgxpool.Pool, chans []*notify.Channel) (*chatPollers, error) {
	host, _ := os.Hostname()
	cp := &chatPollers{}
	for _, ch := range chans {
		l, err := pgclaims.LockPoller(ctx, pool, ch.Token, ch.Name, host, os.Getpid())
		if err != nil {
			cp.release()
			return nil, err
		}
		cp.locks = append(cp.locks, l)
	}
	return cp, nil
}

// run polls every command channel until ctx ends. A poller stopped by Telegram's 409 (another
// process, a crawler maybe, polls the bot: it cannot see this one's lock) is logged, counted
// (booking_notifier_command_poller_conflict) and puts /healthz at 503 naming the channel, as
// does one whose every getUpdates failed for longer than --failing-after.
func (cp *chatPollers) run(ctx context.Context, chans []*notify.Channel, claims *pgclaims.Store, live *notify.Live,
	claimer *pgclaims.Claimer, cfg notifyConfig, metrics *notify.Metrics, health *consumer.Health, logger *slog.Logger) {
	noBacklog, secrets := cfg.noBacklog, cfg.secrets
	for _, ch := range chans {
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		p := &notify.Poller{Client: client, Logger: logger, Secrets: secrets, FailingAfter: cfg.failing, Commander: &notify.Commander{
			Channel: ch, Store: claims, Live: live, Metrics: metrics, Logger: logger, BacklogNow: !noBacklog,
			Test: func(ctx context.Context) error {
				_, err := ch.Exchange(ctx, client, notify.TestMessage(ch, time.Now()))
				return err
			},
			Changed: func() {
				// A new (or unmuted) chat watch asks: answered now with what is open.
				if _, err := claimer.Backlog(ctx, noBacklog); err != nil && ctx.Err() == nil {
					logger.ErrorContext(ctx, "chat watch: answer with what is open now", "channel", ch.Name, "err", cli.Scrub(err.Error(), secrets))
				}
			}}}
		cp.pollers = append(cp.pollers, p)
		cp.wg.Go(func() {
			if err := p.Run(ctx); err != nil {
				logger.ErrorContext(ctx, "chat commands stopped", "channel", ch.Name, "err", cli.Scrub(err.Error(), secrets))
			}
		})
	}
	health.Check("commands", func() []string {
		var bad []string
		for _, p := range cp.pollers {
			if err := p.Status(); err != nil {
				bad = append(bad, "alerts_commands: channel "+p.Commander.Channel.Name+": "+cli.Scrub(err.Error(), secrets))
			}
		}
		return bad
	})
}

// stop waits for the pollers (their ctx ended) and releases the bots.
func (cp *chatPollers) stop() {
	if cp == nil {
		return
	}
	cp.wg.Wait()
	cp.release()
}

func (cp *chatPollers) release() {
	for _, l := range cp.locks {
		l.Release()
	}
	cp.locks = nil
}
