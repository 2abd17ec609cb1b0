package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/golfcrawler/golf-crawler/cmd/internal/cli"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/liteclaims"
)

// alertStore is the claim store of the crawler's alerts: SQLite in the state dir.
type alertStore interface {
	notify.ClaimStore
	notify.ChatStore
	fingerprintStore
	Close() error
}

// openAlertStore opens (creating it if needed) the alerts database of stateDir. A database that
// cannot be read (a truncated file, a bad header) is an error naming the file, never a fresh
// start that would alert everything again.
func openAlertStore(ctx context.Context, stateDir string) (alertStore, error) {
	st, err := liteclaims.Open(ctx, alertsPath(stateDir))
	if err != nil {
		return nil, fmt.Errorf("alerts: %w", err)
	}
	return st, nil
}

// alertsRuntime is the crawler-side alerts of one crawler process: the claim store in the state
// dir, the Runner's hook and one sender per used channel, running beside the crawl so that a
// slow or dead channel never slows the crawl nor the other channels.
type alertsRuntime struct {
	cfg       alertsConfig
	watches   *notify.Config // the file's
	live      *notify.Live   // the file's and the chat's
	pollMu    sync.Mutex
	pollers   []*notify.Poller
	polls     sync.WaitGroup
	stopPolls context.CancelFunc
	store     alertStore
	hook      *crawlAlerts
	health    *channelHealth
	metrics   *notify.Metrics
	logger    *slog.Logger
	secrets   []string

	stop     context.CancelFunc // abandons the sends in flight
	draining chan struct{}      // closed by drain: the senders' Stop
	drainAt  time.Time          // when drain closed it
	drainMu  sync.Mutex
	senders  sync.WaitGroup
}

// openAlerts opens the state dir's alerts database for watches and registers the notifier's
// metrics, the oldest unsent claim's age and the channels' /healthz section on m. The caller
// holds the state dir's lock.
func openAlerts(ctx context.Context, env cli.Env, stateDir string, cfg alertsConfig, watches *notify.Config,
	m *crawlerMetrics) (*alertsRuntime, error) {
	st, err := openAlertStore(ctx, stateDir)
	if err != nil {
		return nil, err
	}
	a := &alertsRuntime{cfg: cfg, watches: watches, store: st, logger: env.Logger, secrets: watches.Secrets(),
		health: newChannelHealth(time.Now, cfg.FailingAfter, watches.UsedChannels())}
	if m != nil {
		a.metrics = notify.NewMetrics(m.reg)
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "crawler_alerts_oldest_unsent_seconds",
			Help: "Age of the oldest alert claimed and not yet sent, failed or skipped (0: none)."}, a.oldestUnsent))
		m.health.AddHealthCheck("alerts", a.health.check)
		if slices.ContainsFunc(watches.UsedChannels(), func(n string) bool { return watches.Channels[n].Commands }) {
			m.health.AddHealthCheck("alerts_commands", a.commandsCheck)
		}
	}
	a.live = notify.NewLive(watches)
	if err := loadChatWatches(ctx, st, a.live, env.Logger); err != nil {
		return nil, errors.Join(err, st.Close())
	}
	a.hook = newCrawlAlerts(a.live, st, cfg.MaxAge, cfg.NoBacklog, env.Logger, a.metrics)
	if n, err := st.Prune(ctx, time.Now().Add(-cfg.Retention)); err != nil {
		env.Logger.WarnContext(ctx, "alerts: prune old claims", "err", cli.Scrub(err.Error(), a.secrets))
	} else if n > 0 {
		env.Logger.InfoContext(ctx, "alerts: old claims deleted", "deleted", n, "retention", cfg.Retention.String())
	}
	left, err := unsent(ctx, st)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	env.Logger.InfoContext(ctx, "alerts ready", "db", alertsPath(stateDir), "watches", len(watches.Watches),
		"chat_watches", len(a.live.Load().Watches)-len(watches.Watches),
		"channels", watches.UsedChannels(), "unsent_from_before", left)
	return a, nil
}

// oldestUnsent is the gauge crawler_alerts_oldest_unsent_seconds.
func (a *alertsRuntime) oldestUnsent() float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := a.store.List(ctx, notify.Filter{Status: notify.StatusSending, Limit: 1_000_000})
	if err != nil || len(rows) == 0 {
		return 0
	}
	oldest := rows[0].ClaimedAt
	for _, r := range rows {
		if r.ClaimedAt.Before(oldest) {
			oldest = r.ClaimedAt
		}
	}
	return time.Since(oldest).Seconds()
}

// start runs one sender per used channel until close. Each sender first sends every claim still
// sending from before (a crash, or `crawler once` that left them), with its Idempotency-Key. When
// ctx ends (SIGTERM) the senders start draining: nothing new is sent, the sends in flight go on
// until close's grace.
func (a *alertsRuntime) start(ctx context.Context) {
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	a.stop = stop
	a.draining = make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			a.drain()
		case <-a.draining:
		}
	}()
	for _, name := range a.watches.UsedChannels() {
		ch := a.watches.Channels[name]
		client := &http.Client{Transport: a.health.transport(name, http.DefaultTransport.(*http.Transport).Clone()),
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		s := &notify.Sender{Store: a.store, Live: a.live, Channel: ch, MaxAge: a.cfg.MaxAge,
			MaxAttempts: a.cfg.MaxAttempts, BackoffBase: a.cfg.RetryBase, Client: client, Wake: a.hook.wakes[name],
			Metrics: a.metrics, Logger: a.logger, Secrets: a.secrets, Stop: a.draining}
		a.senders.Go(func() { s.Run(sctx) })
	}
}

// loadChatWatches puts the chat's watches of st in force beside the file's; one left out (its
// channel gone from the file, its name taken by a file watch) is logged.
func loadChatWatches(ctx context.Context, st notify.ChatStore, live *notify.Live, logger *slog.Logger) error {
	ws, err := st.ChatWatches(ctx)
	if err != nil {
		return fmt.Errorf("alerts: %w", err)
	}
	for _, err := range live.SetChat(ws) {
		logger.WarnContext(ctx, "alerts: chat watch left out", "err", err)
	}
	return nil
}

// startCommands runs, in `crawler run` (the process delivering the channels), one getUpdates
// poller per command channel (commands: true) until ctx ends. A poller that Telegram answers 409
// (another process polls the bot) stops and /healthz's alerts_commands says so.
func (a *alertsRuntime) startCommands(ctx context.Context) {
	ctx, a.stopPolls = context.WithCancel(ctx)
	a.pollMu.Lock()
	defer a.pollMu.Unlock()
	for _, name := range a.watches.UsedChannels() {
		ch := a.watches.Channels[name]
		if !ch.Commands {
			continue
		}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		p := &notify.Poller{Client: client, Logger: a.logger, Secrets: a.secrets, FailingAfter: a.cfg.FailingAfter, Commander: &notify.Commander{
			Channel: ch, Store: a.store, Live: a.live, Metrics: a.metrics, Logger: a.logger,
			Test: func(ctx context.Context) error {
				_, err := ch.Exchange(ctx, client, notify.TestMessage(ch, time.Now()))
				return err
			}}}
		a.pollers = append(a.pollers, p)
		a.polls.Go(func() {
			if err := p.Run(ctx); err != nil {
				a.logger.ErrorContext(ctx, "alerts: chat commands stopped", "channel", name, "err", cli.Scrub(err.Error(), a.secrets))
			}
		})
	}
}

// commandsCheck is /healthz's alerts_commands section: each command channel's poller, and 503
// when one stopped (409: another process polls its bot) or every getUpdates failed for longer
// than --alert-failing-after ("failing (since …)").
func (a *alertsRuntime) commandsCheck() (any, []string) {
	out := map[string]string{}
	var bad []string
	a.pollMu.Lock()
	defer a.pollMu.Unlock()
	for _, p := range a.pollers {
		name := p.Commander.Channel.Name
		if err := p.Status(); err != nil {
			out[name] = err.Error()
			bad = append(bad, "alerts_commands: channel "+name+": "+err.Error())
			continue
		}
		out[name] = "polling"
	}
	return out, bad
}

// afterRun prunes old claims (the schedule calls it after each run).
func (a *alertsRuntime) afterRun(ctx context.Context) {
	if _, err := a.store.Prune(ctx, time.Now().Add(-a.cfg.Retention)); err != nil && ctx.Err() == nil {
		a.logger.WarnContext(ctx, "alerts: prune old claims", "err", cli.Scrub(err.Error(), a.secrets))
	}
}

// wait waits up to d for every claim to be sent (or failed, or skipped) and returns how many are
// still unsent; `crawler once` leaves them for its next run.
func (a *alertsRuntime) wait(ctx context.Context, d time.Duration) (int, error) {
	deadline := time.Now().Add(d)
	for {
		n, err := unsent(ctx, a.store)
		if err != nil || n == 0 || !time.Now().Before(deadline) {
			return n, err
		}
		select {
		case <-ctx.Done():
			return n, nil
		case <-time.After(min(50*time.Millisecond, time.Until(deadline))):
		}
	}
}

// drain stops the senders gracefully (notify.Sender.Stop), once; it returns when it did.
func (a *alertsRuntime) drain() time.Time {
	a.drainMu.Lock()
	defer a.drainMu.Unlock()
	if a.drainAt.IsZero() {
		a.drainAt = time.Now()
		close(a.draining)
	}
	return a.drainAt
}

// close stops the senders and closes the database. The sends in flight get until grace after the
// drain began (SIGTERM, or now) to be answered and marked, so that a message the channel accepted
// is not sent again at the next start; after it they are abandoned (a claim stays sending and is
// sent again under the same key: the webhook's receiver deduplicates, a chat channel may show it
// twice).
func (a *alertsRuntime) close(grace time.Duration) error {
	if a.stop != nil {
		deadline := a.drain().Add(grace)
		done := make(chan struct{})
		go func() { a.senders.Wait(); close(done) }()
		select {
		case <-done:
		default:
			a.logger.Info("alerts: stopping: the sends in flight have until the deadline to be answered and marked",
				"grace", grace.String(), "deadline", deadline.Format(time.RFC3339Nano))
			select {
			case <-done:
			case <-time.After(time.Until(deadline)):
				a.logger.Warn("alerts: sends still in flight at the deadline are abandoned; their claims stay sending for the next start")
			}
		}
		a.stop()
		<-done
	}
	if a.stopPolls != nil {
		a.stopPolls()
		a.polls.Wait()
	}
	return a.store.Close()
}

// waitAndReport is `crawler once`'s wait for its sends: up to d, then one line saying how many
// alerts stay claimed for the next run.
func (a *alertsRuntime) waitAndReport(ctx context.Context, d time.Duration) {
	left, err := a.wait(ctx, d)
	switch {
	case err != nil:
		a.logger.WarnContext(ctx, "alerts: count the unsent claims", "err", cli.Scrub(err.Error(), a.secrets))
	case left > 0:
		a.logger.WarnContext(ctx, "alerts left claimed for the next run", "unsent", left, "alert_wait", d.String(),
			"note", "the next crawler run or once sends them under the same Idempotency-Key, unless older than --alert-max-age by then")
	default:
		a.logger.InfoContext(ctx, "alerts: every claim sent, failed or skipped")
	}
}
