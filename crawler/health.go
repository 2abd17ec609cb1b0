package crawler

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// Health is the state /healthz reports: the runs, the skipped runs and each site's last complete
// crawl. It holds no metric: a RunMetrics implementation (cmd/crawler's Prometheus collector)
// feeds it. All methods are safe for concurrent use; use NewHealth.
type Health struct {
	// UnhealthyAfter makes /healthz answer 503 when a site has had no complete crawl for this many
	// crawls in a row (incomplete or errored); 0 never does. Set it before serving.
	UnhealthyAfter int

	mu     sync.Mutex
	now    func() time.Time
	state  healthState
	sites  map[string]*SiteHealth
	checks map[string]HealthCheck // AddHealthCheck
}

// SiteHealth is one site's entry in /healthz.
type SiteHealth struct {
	LastCompleteAt *time.Time `json:"last_complete_at,omitempty"`
	// IncompleteRuns counts the site's crawls since its last complete one (incomplete or errored).
	IncompleteRuns int `json:"incomplete_runs"`
	// WatchedOldestAgeSeconds is the age of the last fetch of the site's stalest watched page set
	// (#51), as information: a club that does not answer never turns /healthz 503 by it. Absent
	// while no page set of the site is watched.
	WatchedOldestAgeSeconds *float64 `json:"watched_oldest_age_seconds,omitempty"`

	watchedSince time.Time
}

// healthState is the JSON body of /healthz.
type healthState struct {
	Status      string     `json:"status"`
	StartedAt   time.Time  `json:"started_at"`
	Runs        int        `json:"runs"`
	SkippedRuns int        `json:"skipped_runs"`
	LastRunAt   *time.Time `json:"last_run_at,omitempty"`
	LastOutcome string     `json:"last_outcome,omitempty"`
	LastRunSecs float64    `json:"last_run_duration_seconds,omitempty"`
	Reason      string     `json:"reason,omitempty"` // why status is "unhealthy"

	Sites  map[string]SiteHealth `json:"sites,omitempty"`
	Checks map[string]any        `json:"checks,omitempty"` // the sections AddHealthCheck added
}

// HealthCheck is a section of /healthz that a command adds beside the crawl's (cmd/crawler: the
// alerts' channels). It returns the section's JSON value and the reasons, if any, that make
// /healthz answer 503; it is called on every /healthz request and must be quick and safe for
// concurrent use.
type HealthCheck func() (value any, unhealthy []string)

// NewHealth returns an empty Health; now stamps /healthz's started_at (nil: time.Now).
func NewHealth(now func() time.Time) *Health {
	if now == nil {
		now = time.Now
	}
	return &Health{state: healthState{Status: "ok", StartedAt: now()}, sites: map[string]*SiteHealth{}, now: now}
}

// SkippedRun records a scheduled run skipped because the previous one was still going.
func (h *Health) SkippedRun() {
	h.mu.Lock()
	h.state.SkippedRuns++
	h.mu.Unlock()
}

// SiteCrawled records one site's crawl and returns the site's entry after it.
func (h *Health) SiteCrawled(s SiteSummary) SiteHealth {
	h.mu.Lock()
	defer h.mu.Unlock()
	sh := h.sites[s.Source]
	if sh == nil {
		sh = &SiteHealth{}
		h.sites[s.Source] = sh
	}
	if s.Err != nil {
		sh.IncompleteRuns++
		return *sh
	}
	sh.IncompleteRuns = s.IncompleteRuns
	if !s.LastComplete.IsZero() {
		at := s.LastComplete
		sh.LastCompleteAt = &at
	}
	return *sh
}

// Watched records the last fetch of the site's stalest watched page set (zero: none watched),
// shown as its age (SiteHealth.WatchedOldestAgeSeconds).
func (h *Health) Watched(site string, oldest time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	sh := h.sites[site]
	if sh == nil {
		sh = &SiteHealth{}
		h.sites[site] = sh
	}
	sh.watchedSince = oldest
}

// RunFinished records a run that ended at end after d.
func (h *Health) RunFinished(outcome string, end time.Time, d time.Duration) {
	h.mu.Lock()
	h.state.Runs++
	h.state.LastRunAt = &end
	h.state.LastOutcome = outcome
	h.state.LastRunSecs = d.Seconds()
	h.mu.Unlock()
}

// AddHealthCheck adds check as section name of /healthz's "checks".
func (h *Health) AddHealthCheck(name string, check HealthCheck) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.checks == nil {
		h.checks = map[string]HealthCheck{}
	}
	h.checks[name] = check
}

// ServeHTTP serves /healthz, with a JSON body {status, started_at, runs, skipped_runs, last_run_at,
// last_outcome, last_run_duration_seconds, sites: {name: {last_complete_at, incomplete_runs,
// watched_oldest_age_seconds}},
// checks: {name: ...}, reason}. It answers 200 while the process serves, except when a site has
// had no complete crawl for UnhealthyAfter crawls in a row, or a check added with AddHealthCheck
// reports a problem: then 503, status "unhealthy" and a reason naming the sites (and the checks'
// reasons), so that an orchestrator notices a site whose layout changed (its crawls are
// incomplete, so nothing ever closes) instead of the crawler silently never closing. One failed
// crawl is a metric to alert on, not a 503.
func (h *Health) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	st := h.state
	st.Sites = make(map[string]SiteHealth, len(h.sites))
	var bad []string
	now := h.now()
	for name, sh := range h.sites {
		st.Sites[name] = *sh
		if !sh.watchedSince.IsZero() {
			age := max(0, now.Sub(sh.watchedSince).Seconds())
			shown := *sh
			shown.WatchedOldestAgeSeconds = &age
			st.Sites[name] = shown
		}
		if h.UnhealthyAfter > 0 && sh.IncompleteRuns >= h.UnhealthyAfter {
			since := "ever"
			if sh.LastCompleteAt != nil {
				since = "since " + events.FormatTime(*sh.LastCompleteAt)
			}
			bad = append(bad, fmt.Sprintf("site %s: no complete crawl in %d runs (%s)", name, sh.IncompleteRuns, since))
		}
	}
	checks := make(map[string]HealthCheck, len(h.checks))
	for k, c := range h.checks {
		checks[k] = c
	}
	h.mu.Unlock()
	for name, c := range checks { // outside the lock: a check may take its own
		v, reasons := c()
		if st.Checks == nil {
			st.Checks = map[string]any{}
		}
		st.Checks[name] = v
		bad = append(bad, reasons...)
	}
	w.Header().Set("Content-Type", "application/json")
	if len(bad) > 0 {
		slices.Sort(bad)
		st.Status, st.Reason = "unhealthy", strings.Join(bad, "; ")
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(st) // the client went away: nothing to do
}
