// Package alerts is the tee-time alert service of both paths, built once: New validates a
// watches file's configuration and builds one sender per channel a watch (or a chat) uses and one
// poller and commander per command channel, all over one HTTP client policy (notify.NewClient);
// Start runs them, Stop stops them gracefully, Health is their /healthz sections, and Claim is
// the one "claim a batch, with the backlog of the watches that ask" of both paths.
//
// The commands choose only what differs: the claim store (liteclaims in the crawler's state dir,
// pgclaims in PostgreSQL) and where events come from (a site crawl's hook, the Kafka loop of
// `booking-consumer notify`):
//
//	svc, err := alerts.New(store, alerts.Config{Watches: watches, ...})
//	err = svc.Start(ctx)                               // the senders, the pollers, the start-up backlog
//	n, err := svc.Claim(ctx, alerts.Crawl{Events: evs, Site: site, First: first, Open: snapshot})
//	err = svc.Stop(ctx)                                // the sends in flight have until ctx ends
//
// The engine (watches, matching, claims, messages, channels, the sender) is cmd/internal/notify,
// the Telegram chat cmd/internal/notify/chat; this package sits above both.
package alerts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/golfcrawler/golf-crawler/cmd/internal/notify"
	"github.com/golfcrawler/golf-crawler/cmd/internal/notify/chat"
	"github.com/golfcrawler/golf-crawler/events"
)

// Store is where the service keeps its claims and the chat's watches: liteclaims (SQLite, one
// process) or pgclaims (PostgreSQL, several notifiers under leases). Both pass claimstoretest.
type Store interface {
	notify.ClaimStore
	notify.ChatStore
	// Fingerprints are the fingerprints the watches were last answered with on source (a store
	// that answers every source at once ignores it).
	Fingerprints(ctx context.Context, source string) (map[string]string, error)
}

// pollerLocker is a store shared by several processes (pgclaims): each command channel's bot is
// polled by the one process holding it (Telegram allows one poller per bot).
type pollerLocker interface {
	LockPoller(ctx context.Context, ch *notify.Channel) (release func(), err error)
}

// previewer is a store that can say what a claim would do without writing it (--dry-run).
type previewer interface {
	Preview(ctx context.Context, b notify.ClaimBatch) ([]notify.Claimed, error)
}

// Listings is what is open now on a source: the port a watch that asks anew is answered from
// (the crawl's snapshot on the crawler path, booking_lifetimes on the central one). Each event is
// the opening of a listing's current lifetime, its occurred_at the first-seen time.
type Listings interface {
	OpenListings(ctx context.Context, source string) ([]*events.Event, error)
}

// Crawl is one claim: the events of a site crawl or of a batch of the Kafka loop, and how to
// answer the watches that ask anew.
type Crawl struct {
	Events []*events.Event
	// Site is the source crawled ("" on the central path: every source at once).
	Site string
	// First: the source had no snapshot before (a fresh state dir, a new site): its openings were
	// open before the crawler looked, so they are claimed as every asking watch's backlog (worded
	// as already open), not as openings.
	First bool
	// Open answers the watches that ask anew on Site (new, or their conditions changed since they
	// were last answered there) with what is open now; nil asks no watch (a Kafka batch).
	Open Listings
	// Confirm (the crawler path) is the crawl's evidence for the alerts that wait for their
	// confirmation; nil (the central path, which cannot observe "still open") confirms nothing
	// and makes every claim sending at once.
	Confirm *Confirm
}

// Confirm is what one site crawl tells the service to confirm alerts by (#51 item 3). With After
// above zero an alert of an opening, a re-opening or a change into a watch is claimed pending (a
// backlog claim is not: its listing was open before). Each crawl of the site resolves the site's
// pending claims (those of earlier crawls, whatever their After was): one whose listing a crawl
// at least After after its first sighting (its event's occurred_at) Shows, still inside its
// watch, is confirmed (sending); one whose listing closed (under the misses rule) or opened
// anew since is withheld; one that left its watch is skipped (left_watch), one older than the
// max age stale; the others wait.
type Confirm struct {
	At    time.Time     // when the crawl looked
	After time.Duration // the site's confirm_after (0: first sighting)
	// Seen is the listing of a key as the crawl left it (its snapshot about to be saved).
	Seen func(listingKey string) Sighting
}

// Sighting is one listing as a crawl left it (Confirm.Seen).
type Sighting struct {
	Listing events.Listing // its last seen values
	Open    bool           // open: not closed (nor gone)
	Since   time.Time      // the first sighting of its current lifetime
	// Shows: the crawl covered the listing's page set completely (fetched, answered, not withheld)
	// and saw it, not being missed: evidence that it is open now.
	Shows bool
}

// Config is the service's configuration. Watches is required; a zero duration or count takes the
// engine's default.
type Config struct {
	Watches     *notify.Config
	MaxAge      time.Duration // notify.DefaultMaxAge
	MaxAttempts int           // notify.DefaultMaxAttempts
	RetryBase   time.Duration // the first retry's wait (1s)
	// Settle (central path) is how long a sender waits after a wake, so that the claims of one
	// crawl's several consumer batches go out together (0: none).
	Settle time.Duration
	// NoBacklog: a watch that asks anew claims nothing of what matches already (its fingerprint is
	// recorded all the same), as a watch's backlog: false does for it.
	NoBacklog bool
	// FailingAfter: a channel whose every send failed, or a command channel whose every poll
	// failed, for longer makes Health unhealthy (0: never).
	FailingAfter time.Duration
	// Retention: sent and skipped claims claimed longer ago are deleted at Start and by Prune (0:
	// never).
	Retention time.Duration
	// Open, when set (the central path), answers the watches that ask anew at Start and whenever
	// the chat's watches change, on every source at once. Without it (the crawler) a watch asks
	// at each site's next Claim.
	Open Listings
	// Commands runs a poller per command channel (`crawler run`, `booking-consumer notify`; not
	// `crawler once`, nor a dry run).
	Commands bool
	// DryRun, when set, writes what each claim would send there and writes nothing, sends nothing
	// (the store must preview: pgclaims).
	DryRun io.Writer
	Logger *slog.Logger
	// Registerer, when set, gets the notifier's and the chat's Prometheus series.
	Registerer prometheus.Registerer
	// MetricsPrefix, when set with Registerer, also registers <prefix>alerts_oldest_unsent_seconds
	// (OldestUnsent) and <prefix>alerts_withheld_total (Withheld) there ("crawler_": `crawler run`).
	MetricsPrefix string
	// Transport is the base transport of every alert request (nil: a clone of Go's default per
	// channel); tests and benchmarks inject faults through it.
	Transport http.RoundTripper
	Now       func() time.Time // the claim clock ("today" for next_days); time.Now if nil
}

// Service is the alert service of one process. Its methods are safe for concurrent use.
type Service struct {
	cfg     Config
	store   Store
	file    *notify.Config
	secrets []string
	logger  *slog.Logger
	metrics *notify.Metrics
	health  *channelHealth
	live    atomic.Pointer[notify.Config] // the watches in force: the file's, then the chat's
	wakes   map[string]chan struct{}
	senders []*notify.Sender
	clients map[string]*http.Client // each channel's, its requests followed by health
	pollers []*chat.Poller

	withheld atomic.Int64 // pending claims withheld (their listing closed first)

	mu       sync.Mutex
	known    map[string]map[string]string          // site → watch → fingerprint recorded (a cache of the store's)
	pending  map[string]map[uuid.UUID]notify.Claim // source → the claims pending there (a cache of the store's; nil until loaded)
	onChange []func(*notify.Config)
	loaded   bool

	draining  chan struct{} // closed by drain: the senders' Stop
	drainOnce sync.Once
	abandon   context.CancelFunc // cancels the senders' requests in flight
	sendersWG sync.WaitGroup
	stopPolls context.CancelFunc
	pollsWG   sync.WaitGroup
	locks     []func()
	started   bool
	stopOnce  sync.Once
}

// New validates cfg and builds the service over store: one sender per used channel (none on a
// dry run), one poller and commander per command channel when cfg.Commands. Nothing runs and
// nothing is read until Start.
func New(store Store, cfg Config) (*Service, error) {
	var errs []error
	switch {
	case store == nil:
		errs = append(errs, errors.New("alerts: no claim store"))
	case cfg.Watches == nil:
		errs = append(errs, errors.New("alerts: no watches"))
	}
	if cfg.MaxAge < 0 || cfg.MaxAttempts < 0 || cfg.RetryBase < 0 || cfg.Settle < 0 || cfg.FailingAfter < 0 || cfg.Retention < 0 {
		errs = append(errs, errors.New("alerts: max age, attempts, retry backoff, settle, failing-after and retention must not be negative"))
	}
	if _, ok := store.(previewer); cfg.DryRun != nil && !ok {
		errs = append(errs, fmt.Errorf("alerts: a dry run needs a store that previews claims (%T does not)", store))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	cfg.MaxAge = cmpOr(cfg.MaxAge, notify.DefaultMaxAge)
	cfg.MaxAttempts = cmpOr(cfg.MaxAttempts, notify.DefaultMaxAttempts)
	cfg.RetryBase = cmpOr(cfg.RetryBase, time.Second)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{cfg: cfg, store: store, file: cfg.Watches, secrets: cfg.Watches.Secrets(), logger: cfg.Logger,
		known: map[string]map[string]string{}, draining: make(chan struct{}), clients: map[string]*http.Client{}}
	s.live.Store(cfg.Watches)
	var chatMetrics *chat.Metrics
	if cfg.Registerer != nil {
		s.metrics, chatMetrics = notify.NewMetrics(cfg.Registerer), chat.NewMetrics(cfg.Registerer)
		if cfg.MetricsPrefix != "" {
			s.registerMetrics(cfg.Registerer, cfg.MetricsPrefix)
		}
	}
	used := cfg.Watches.UsedChannels()
	s.health = newChannelHealth(time.Now, cfg.FailingAfter, used)
	s.wakes = map[string]chan struct{}{}
	for _, name := range used {
		s.wakes[name] = make(chan struct{}, 1)
		s.clients[name] = notify.NewClient(s.health.transport(name, s.transport()))
	}
	if cfg.DryRun != nil {
		return s, nil
	}
	for _, name := range used {
		s.senders = append(s.senders, s.sender(name))
	}
	if cfg.Commands {
		for _, name := range used {
			if ch := cfg.Watches.Channels[name]; ch.Commands {
				s.pollers = append(s.pollers, s.poller(ch, chatMetrics))
			}
		}
	}
	return s, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// transport is a base transport for one channel's client.
func (s *Service) transport() http.RoundTripper {
	if s.cfg.Transport != nil {
		return s.cfg.Transport
	}
	return http.DefaultTransport.(*http.Transport).Clone()
}

// sender is a sender of channel name, in its state before Start (a template for Resend too).
func (s *Service) sender(name string) *notify.Sender {
	return &notify.Sender{Store: s.store, Channel: s.file.Channels[name], InForce: s.InForce, MaxAge: s.cfg.MaxAge,
		MaxAttempts: s.cfg.MaxAttempts, BackoffBase: s.cfg.RetryBase, Settle: s.cfg.Settle, Client: s.clients[name],
		Wake: s.wakes[name], Stop: s.draining, Metrics: s.metrics, Logger: s.logger, Secrets: s.secrets, Now: s.cfg.Now}
}

// wake wakes the senders of channels without blocking.
func (s *Service) wake(channels []string) {
	for _, c := range channels {
		select {
		case s.wakes[c] <- struct{}{}:
		default:
		}
	}
}

// InForce is the watches in force now: the file's, then the chat's (loaded by Start, Load or
// Watches; swapped whole on every change).
func (s *Service) InForce() *notify.Config { return s.live.Load() }

// OnChange calls fn with the watches in force whenever they change (a chat's /watch, /mute,
// /unmute, /remove) and when Start loads them: the crawler's scheduler follows what the watches
// ask of it this way. fn must not block.
func (s *Service) OnChange(fn func(*notify.Config)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onChange = append(s.onChange, fn)
}

// Watches loads the chat's watches from the store and returns every watch in force, the file's
// then the chat's (`crawler watches`, `booking-consumer watches`).
func (s *Service) Watches(ctx context.Context) ([]*notify.Watch, error) {
	if err := s.reload(ctx); err != nil {
		return nil, err
	}
	return s.InForce().Watches, nil
}

// reload puts the store's chat watches in force beside the file's (one left out is logged) and
// tells OnChange.
func (s *Service) reload(ctx context.Context) error {
	ws, err := s.store.ChatWatches(ctx)
	if err != nil {
		return fmt.Errorf("alerts: %w", err)
	}
	c, errs := s.file.WithChat(ws, chat.ReadSpec)
	for _, err := range errs {
		s.logger.WarnContext(ctx, "alerts: chat watch left out", "err", err)
	}
	s.live.Store(c)
	s.mu.Lock()
	s.loaded = true
	fns := slices.Clone(s.onChange)
	s.mu.Unlock()
	for _, fn := range fns {
		fn(c)
	}
	return nil
}

// load is reload once.
func (s *Service) load(ctx context.Context) error {
	s.mu.Lock()
	loaded := s.loaded
	s.mu.Unlock()
	if loaded {
		return nil
	}
	return s.reload(ctx)
}

// Start loads the chat's watches, prunes old claims (Retention), takes each command channel's bot
// (a store shared by processes), sends what a channel whose destination changed failed to
// deliver, starts the senders (each sends first every claim still sending from before, under its
// key), answers the watches that ask anew (cfg.Open) and starts the pollers. When ctx ends
// (SIGTERM) the senders start draining: nothing new is sent; Stop ends the rest.
func (s *Service) Start(ctx context.Context) error {
	if err := s.load(ctx); err != nil {
		return err
	}
	if s.cfg.Retention > 0 {
		s.Prune(ctx)
	}
	if l, ok := s.store.(pollerLocker); ok {
		for _, p := range s.pollers {
			release, err := l.LockPoller(ctx, p.Commander.Channel)
			if err != nil {
				s.releaseLocks()
				return err
			}
			s.locks = append(s.locks, release)
		}
	}
	if s.cfg.DryRun == nil {
		if err := s.resendToChangedDestinations(ctx); err != nil {
			s.releaseLocks()
			return err
		}
	}
	left, err := s.Unsent(ctx)
	if err != nil {
		s.releaseLocks()
		return err
	}
	s.logger.InfoContext(ctx, "alerts ready", "watches", len(s.file.Watches), "chat_watches", len(s.InForce().Watches)-len(s.file.Watches),
		"channels", s.file.UsedChannels(), "unsent_from_before", left)
	sctx, abandon := context.WithCancel(context.WithoutCancel(ctx))
	s.abandon = abandon
	context.AfterFunc(ctx, s.drain)
	for _, snd := range s.senders {
		s.sendersWG.Go(func() { snd.Run(sctx) })
	}
	s.started = true
	if s.cfg.Open != nil {
		if _, err := s.Claim(ctx, Crawl{Open: s.cfg.Open}); err != nil {
			return errors.Join(err, s.Stop(context.Background()))
		}
	}
	pctx, stopPolls := context.WithCancel(ctx)
	s.stopPolls = stopPolls
	for _, p := range s.pollers {
		s.pollsWG.Go(func() {
			if err := p.Run(pctx); err != nil {
				s.logger.ErrorContext(pctx, "alerts: chat commands stopped", "channel", p.Commander.Channel.Name, "err", s.scrub(err.Error()))
			}
		})
	}
	return nil
}

// drain stops the senders gracefully (notify.Sender.Stop), once: no group is picked, no attempt
// begins, a request already sent runs to its answer.
func (s *Service) drain() {
	s.drainOnce.Do(func() { close(s.draining) })
}

// Stop drains the senders (if Start's ctx has not ended already) and gives the sends in flight
// until ctx ends to be answered and marked, so that a message the channel accepted is not sent
// again at the next start; then it abandons them (a claim stays sending and is sent again under
// its key: the webhook's receiver deduplicates, a chat channel may show it twice). It stops the
// pollers and gives back the bots. The store stays open (the caller's).
func (s *Service) Stop(ctx context.Context) error {
	s.stopOnce.Do(func() {
		s.drain()
		if s.started {
			s.stopSenders(ctx)
		}
		if s.stopPolls != nil {
			s.stopPolls()
		}
		s.pollsWG.Wait()
		s.releaseLocks()
	})
	return nil
}

// stopSenders waits for the drained senders until ctx ends, then abandons the requests in flight.
func (s *Service) stopSenders(ctx context.Context) {
	done := make(chan struct{})
	go func() { s.sendersWG.Wait(); close(done) }()
	select {
	case <-done:
	default:
		if s.health.inFlight() > 0 {
			deadline, _ := ctx.Deadline()
			s.logger.Info("alerts: stopping: the sends in flight have until the deadline to be answered and marked",
				"deadline", deadline.Format(time.RFC3339Nano))
		}
		select {
		case <-done:
		case <-ctx.Done():
			if s.health.inFlight() > 0 {
				s.logger.Warn("alerts: sends still in flight at the deadline are abandoned; their claims stay sending for the next start")
			}
		}
	}
	s.abandon()
	<-done
}

func (s *Service) releaseLocks() {
	for _, release := range s.locks {
		release()
	}
	s.locks = nil
}

func (s *Service) scrub(msg string) string {
	for _, sec := range s.secrets {
		if sec != "" {
			msg = strings.ReplaceAll(msg, sec, "xxxxx")
		}
	}
	return msg
}
