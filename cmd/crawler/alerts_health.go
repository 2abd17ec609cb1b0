package main

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/golfcrawler/golf-crawler/events"
)

// channelHealth follows every alert channel's requests (a RoundTripper per channel around the
// senders' client) for /healthz: a channel whose every request since FailingSince failed (an
// error, no answer, or a status that is not 2xx), or whose request has been hanging since then,
// is unhealthy once that is longer ago than after. It never holds a URL or a token: a failure
// is described by its status code or its kind only.
type channelHealth struct {
	now   func() time.Time
	after time.Duration // 0: never unhealthy

	mu sync.Mutex
	ch map[string]*channelState
}

// channelState is one channel's entry in /healthz's checks.alerts.channels.
type channelState struct {
	LastOK       *time.Time `json:"last_ok,omitempty"`
	FailingSince *time.Time `json:"failing_since,omitempty"`
	LastFailure  string     `json:"last_failure,omitempty"`
	Requests     int        `json:"requests"`
	Failures     int        `json:"failures"`
	inFlight     []time.Time
}

func newChannelHealth(now func() time.Time, after time.Duration, channels []string) *channelHealth {
	h := &channelHealth{now: now, after: after, ch: map[string]*channelState{}}
	for _, c := range channels {
		h.ch[c] = &channelState{}
	}
	return h
}

// transport returns base with channel's requests followed.
func (h *channelHealth) transport(channel string, base http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		start := h.begin(channel)
		resp, err := base.RoundTrip(req)
		switch {
		case err != nil:
			h.end(channel, start, "no answer (request error or timeout)")
		case resp.StatusCode < 200 || resp.StatusCode > 299:
			h.end(channel, start, "status "+strconv.Itoa(resp.StatusCode))
		default:
			h.end(channel, start, "")
		}
		return resp, err
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (h *channelHealth) state(channel string) *channelState {
	s := h.ch[channel]
	if s == nil {
		s = &channelState{}
		h.ch[channel] = s
	}
	return s
}

func (h *channelHealth) begin(channel string) time.Time {
	t := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.state(channel)
	s.Requests++
	s.inFlight = append(s.inFlight, t)
	return t
}

// end records the outcome of the request begun at start; failure "" is a success.
func (h *channelHealth) end(channel string, start time.Time, failure string) {
	t := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.state(channel)
	if i := slices.Index(s.inFlight, start); i >= 0 {
		s.inFlight = slices.Delete(s.inFlight, i, i+1)
	}
	if failure == "" {
		s.LastOK, s.FailingSince, s.LastFailure = &t, nil, ""
		return
	}
	s.Failures++
	s.LastFailure = failure
	if s.FailingSince == nil {
		s.FailingSince = &start
	}
}

// check is the crawler.HealthCheck of the alerts: every channel's state, and a reason per channel
// failing (or hanging) for longer than after.
func (h *channelHealth) check() (any, []string) {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]channelState, len(h.ch))
	var bad []string
	names := make([]string, 0, len(h.ch))
	for name := range h.ch {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		s := *h.ch[name]
		since := s.FailingSince
		if len(s.inFlight) > 0 && (since == nil || s.inFlight[0].Before(*since)) && now.Sub(s.inFlight[0]) > h.after {
			hung := s.inFlight[0]
			since, s.LastFailure = &hung, "a request hanging without an answer"
		}
		if since != nil && h.after > 0 && now.Sub(*since) > h.after {
			s.FailingSince = since
			bad = append(bad, fmt.Sprintf("alert channel %s: every send failed for %s (since %s; last: %s)",
				name, now.Sub(*since).Round(time.Second), events.FormatTime(*since), s.LastFailure))
		}
		s.inFlight = nil
		out[name] = s
	}
	return map[string]any{"channels": out}, bad
}
