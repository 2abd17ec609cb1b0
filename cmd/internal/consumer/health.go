package consumer

import (
	"slices"
	"strings"
	"sync"
)

// Health is what keeps the consumer from being healthy right now, as /healthz reports it: named
// problems, each with a one-line reason ("stuck: sqlstate 42703: ...", "starting: waiting for
// PostgreSQL: ..."). The zero value is healthy and ready to use; it is safe for concurrent use.
type Health struct {
	mu       sync.Mutex
	problems map[string]string
	checks   map[string]func() []string
}

// Check adds a source of problems asked at every Problems call (the alert service's pollers): its
// reasons join the ones Set. A second Check of key replaces the first.
func (h *Health) Check(key string, check func() []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.checks == nil {
		h.checks = map[string]func() []string{}
	}
	h.checks[key] = check
}

// Set records (or replaces) the problem named key.
func (h *Health) Set(key, reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.problems == nil {
		h.problems = map[string]string{}
	}
	h.problems[key] = reason
}

// Clear removes the problem named key, if any.
func (h *Health) Clear(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.problems, key)
}

// Problems returns the reasons, sorted, or nil when healthy.
func (h *Health) Problems() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, r := range h.problems {
		out = append(out, r)
	}
	for _, check := range h.checks {
		out = append(out, check()...)
	}
	slices.Sort(out)
	return out
}

// String is the problems one per line, or "" when healthy.
func (h *Health) String() string { return strings.Join(h.Problems(), "\n") }
