package alerts

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
	ch map[string]*ChannelState
}

// ChannelState is one channel's entry in /healthz's checks.alerts.channels.
type ChannelState struct {
	LastOK       *time.Time `json:"last_ok,omitempty"`
	FailingSince *time.Time `json:"failing_since,omitempty"`
	LastFailure  string     `json:"last_failure,omitempty"`
	Requests     int        `json:"requests"`
	Failures     int        `json:"failures"`
	inFlight     []time.Time
}

func newChannelHealth(now func() time.Time, after time.Duration, channels []string) *channelHealth {
	h := &channelHealth{now: now, after: after, ch: map[string]*ChannelState{}}
	for _, c := range channels {
		h.ch[c] = &ChannelState{}
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

func (h *channelHealth) state(channel string) *ChannelState {
	s := h.ch[channel]
	if s == nil {
		s = &ChannelState{}
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
	out := make(map[string]ChannelState, len(h.ch))
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

// inFlight counts the requests of every channel begun and not ended.
func (h *channelHealth) inFlight() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.ch {
		n += len(s.inFlight)
	}
	return n
}

// HealthSection is one section of /healthz: its name and its check, which returns the section's
// value and the reasons it is unhealthy (none: healthy).
type HealthSection struct {
	Name  string
	Check func() (any, []string)
}

// Health is the service's /healthz sections: "alerts", every channel's sends (a channel whose every
// send failed, or whose request has hung, for longer than FailingAfter is a reason), and, with
// command channels polled, "alerts_commands", each poller ("polling"; a poller stopped by 409, or
// whose every getUpdates failed for longer than FailingAfter, "failing (since …)", is a reason).
func (s *Service) Health() []HealthSection {
	out := []HealthSection{{Name: "alerts", Check: s.health.check}}
	if len(s.pollers) > 0 {
		out = append(out, HealthSection{Name: "alerts_commands", Check: s.commandsCheck})
	}
	return out
}

// Problems are the reasons of every section of Health that is unhealthy now.
func (s *Service) Problems() []string {
	var out []string
	for _, h := range s.Health() {
		_, bad := h.Check()
		out = append(out, bad...)
	}
	return out
}

// commandsCheck is the alerts_commands section.
func (s *Service) commandsCheck() (any, []string) {
	out := map[string]string{}
	var bad []string
	for _, p := range s.pollers {
		name := p.Commander.Channel.Name
		if err := p.Status(); err != nil {
			msg := s.scrub(err.Error())
			out[name] = msg
			bad = append(bad, "alerts_commands: channel "+name+": "+msg)
			continue
		}
		out[name] = "polling"
	}
	return out, bad
}
