// Package dashboard is the read-only web dashboard of booking-consumer (`booking-consumer serve`,
// or `run --http-addr`): server-rendered html/template pages over the store's read-only queries
// (store/dashboard.go, store/queries/dashboard_*.sql), every page one READ ONLY transaction with a
// statement_timeout.
//
// Pages: / (overview: counts by status, events per hour, median time to book by course and
// weekday, time to book per course, lead time, price changes), /listings (filters, sorting,
// paging) and /listings.csv (the CLI's `lifetimes --csv` for the same filters, same code path),
// /listing?key=K (one listing's events and lifetimes), /pipeline (consumer lag, dead letters, last
// ingest, metrics).
//
// Charts are SVG drawn on the server by a small renderer of our own (charts.go computes the
// shapes, one template writes them): no JavaScript, no CDN, nothing fetched at run time, no
// dependency. A plotting library such as gonum/plot would add a large dependency tree and a font
// pipeline for charts that are bars, boxes and a heatmap; its SVG embeds its own fonts, while ours
// uses the page's, so Korean course names render with the system's Korean font like the tables.
//
// Safety: only GET and HEAD (405 otherwise); every value goes through html/template's contextual
// escaping; filters are validated (400 with the reason, invalid UTF-8 and NUL included); page
// sizes are bounded; /static/ serves the files of static/ by name only; CSV cells that would start
// a formula get a leading quote; the server has read, write and idle timeouts; a login (bearer
// token, scheme case-insensitive, or basic auth, compared in constant time) is required whenever
// one is configured, Serve refuses a half-configured one (a user without a password or the
// reverse) on any address, and a non-loopback address without one.
package dashboard

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/golfcrawler/golf-crawler/events/kafkabus"
	"github.com/golfcrawler/golf-crawler/store"
)

//go:embed templates/*.html static/*
var assets embed.FS

// Defaults.
const (
	DefaultAddr         = "127.0.0.1:8080"
	DefaultDays         = 7
	DefaultQueryTimeout = 5 * time.Second
	DefaultPageSize     = 50
	MaxPageSize         = 500
)

// Auth is the login the dashboard asks for: a bearer token, or a user and password for HTTP basic
// auth, or both (either is accepted). Zero means no login.
type Auth struct {
	Token          string
	User, Password string
}

// Enabled reports whether a login is configured.
func (a Auth) Enabled() bool { return a.Token != "" || (a.User != "" && a.Password != "") }

// ErrNoLogin is returned by CheckAddr for a non-loopback address without a login.
var ErrNoLogin = errors.New("a non-loopback address needs a login: set DASHBOARD_TOKEN, or DASHBOARD_USER and DASHBOARD_PASSWORD")

// ErrHalfLogin is returned by CheckAddr, on any address, when only one of the user and the
// password is set: an empty variable is a mistake to report, never a reason to serve without login.
var ErrHalfLogin = errors.New("the login is half configured")

// check reports a half-configured basic auth (the values themselves are never in the error).
func (a Auth) check() error {
	switch {
	case a.User != "" && a.Password == "":
		return fmt.Errorf("%w: DASHBOARD_USER is set but DASHBOARD_PASSWORD is empty; set both for basic auth, or neither", ErrHalfLogin)
	case a.User == "" && a.Password != "":
		return fmt.Errorf("%w: DASHBOARD_PASSWORD is set but DASHBOARD_USER is empty; set both for basic auth, or neither", ErrHalfLogin)
	}
	return nil
}

// CheckAddr refuses a half-configured login on any address, and to serve addr without a login
// unless it is a loopback address (127.0.0.0/8, ::1 or localhost). An empty host (":8080")
// listens everywhere and needs one.
func CheckAddr(addr string, auth Auth) error {
	if err := auth.check(); err != nil {
		return fmt.Errorf("dashboard: %w", err)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("dashboard address %q: %w", addr, err)
	}
	if auth.Enabled() || IsLoopback(host) {
		return nil
	}
	return fmt.Errorf("dashboard address %q: %w", addr, ErrNoLogin)
}

// IsLoopback reports whether host names only the loopback interface.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Config is what the dashboard reads and how it shows it.
type Config struct {
	Store *store.Store
	Loc   *time.Location // zone of every time shown (default Asia/Seoul)
	// AsOf, if set, is the fixed time every page is as of (serve --as-of): the anchor of "the last
	// days" and the clock of the statuses, expiries and lifetimes, set as golf.now in each page's
	// transaction. nil: live, time.Now for the charts and the database's now() for the rest.
	AsOf         func() time.Time
	Days         int           // how many days the events-per-hour chart covers (default 7)
	QueryTimeout time.Duration // statement_timeout of every query (default 5 s)
	Auth         Auth
	// Lag reports the consumer lag per partition (kafkabus.GroupLag: the dashboard reaches Kafka only
	// through events/kafkabus); nil: Kafka is not configured.
	Lag func(context.Context) ([]kafkabus.PartitionLag, error)
	// Metrics, if set, is shown on the pipeline page (the consumer's own registry under `run`).
	Metrics prometheus.Gatherer
	Logger  *slog.Logger
}

// Handler serves the dashboard.
type Handler struct {
	cfg    Config
	fixed  bool // cfg.AsOf was given: the database reads as of it too
	mux    *http.ServeMux
	pages  pages
	static fs.FS // static/ of the embedded assets (staticFiles)
	curves summaryCache
}

// New returns the dashboard's handler.
func New(cfg Config) (*Handler, error) {
	if cfg.Store == nil {
		return nil, errors.New("dashboard: no store")
	}
	if cfg.Loc == nil {
		loc, err := time.LoadLocation("Asia/Seoul")
		if err != nil {
			return nil, err
		}
		cfg.Loc = loc
	}
	fixed := cfg.AsOf != nil
	if !fixed {
		cfg.AsOf = time.Now
	}
	if cfg.Days <= 0 {
		cfg.Days = DefaultDays
	}
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	static, err := staticFiles()
	if err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, fixed: fixed, mux: http.NewServeMux(), pages: p, static: static}
	h.mux.HandleFunc("/{$}", h.overview)
	h.mux.HandleFunc("/listings", h.listings)
	h.mux.HandleFunc("/listings.csv", h.listingsCSV)
	h.mux.HandleFunc("/listing", h.listing)
	h.mux.HandleFunc("/pipeline", h.pipeline)
	h.mux.HandleFunc("/static/", h.serveStatic)
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, http.StatusNotFound, "no such page: try the overview at /")
	})
	return h, nil
}

// ServeHTTP checks the method and the login, sets the security headers and serves the page.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	// No script at all, styles and images from the binary only.
	hd.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "read-only dashboard: only GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	if h.cfg.Auth.Enabled() && !h.cfg.Auth.allows(r) {
		if h.cfg.Auth.User != "" {
			hd.Set("WWW-Authenticate", `Basic realm="golf-crawler dashboard", charset="UTF-8"`)
		} else {
			hd.Set("WWW-Authenticate", `Bearer realm="golf-crawler dashboard"`)
		}
		http.Error(w, "login required", http.StatusUnauthorized)
		return
	}
	h.mux.ServeHTTP(w, r)
}

// allows compares the request's credentials with the configured ones in constant time (over
// SHA-256 digests, so the lengths leak nothing either).
func (a Auth) allows(r *http.Request) bool {
	eq := func(got, want string) bool {
		g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
		return subtle.ConstantTimeCompare(g[:], w[:]) == 1
	}
	if a.Token != "" {
		// RFC 9110 §11.1: the scheme is case-insensitive ("bearer", "BEARER").
		scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if ok && strings.EqualFold(scheme, "Bearer") && eq(strings.TrimLeft(tok, " "), a.Token) {
			return true
		}
	}
	if a.User != "" && a.Password != "" {
		if u, p, ok := r.BasicAuth(); ok {
			uok, pok := eq(u, a.User), eq(p, a.Password)
			return uok && pok
		}
	}
	return false
}

// NewServer returns an http.Server for h with timeouts: a slow or stuck client cannot hold a
// connection or the pages' database transactions for long.
func NewServer(addr string, h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// Serve listens on addr (after CheckAddr) and serves h until ctx ends, then shuts down within 5 s.
// ready, if not nil, receives the bound address once listening.
func Serve(ctx context.Context, addr string, h *Handler, ready func(net.Addr)) error {
	if err := CheckAddr(addr, h.cfg.Auth); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("dashboard: listen on %s: %w", addr, err)
	}
	srv := NewServer(addr, h, h.cfg.Logger)
	if ready != nil {
		ready(ln.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("dashboard: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("dashboard: shutdown: %w", err)
	}
	return nil
}
