package alerts

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestChannelHealth: a channel whose every request failed (a status, or no answer) for longer
// than the threshold is a /healthz reason, one hanging longer than it too; a success clears it;
// the reason never holds the URL.
func TestChannelHealth(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	h := newChannelHealth(func() time.Time { return now }, 30*time.Minute, []string{"hook"})
	answer := func(status int, err error) http.RoundTripper {
		return roundTripFunc(func(*http.Request) (*http.Response, error) {
			if err != nil {
				return nil, err
			}
			return &http.Response{StatusCode: status, Body: http.NoBody}, nil
		})
	}
	req, _ := http.NewRequest(http.MethodPost, "https://hooks.example/services/sEcReT", nil)
	send := func(status int, err error) {
		if resp, _ := h.transport("hook", answer(status, err)).RoundTrip(req); resp != nil {
			_ = resp.Body.Close()
		}
	}
	reasons := func() string { _, r := h.check(); return strings.Join(r, "; ") }

	send(http.StatusInternalServerError, nil)
	now = now.Add(20 * time.Minute)
	send(0, errors.New("dial tcp: connection refused"))
	if r := reasons(); r != "" {
		t.Errorf("failing for 20m of 30m: %q", r)
	}
	now = now.Add(11 * time.Minute)
	if r := reasons(); !strings.Contains(r, "alert channel hook: every send failed for 31m0s") || strings.Contains(r, "sEcReT") {
		t.Errorf("failing for 31m: %q", r)
	}
	send(http.StatusOK, nil)
	if r := reasons(); r != "" {
		t.Errorf("after a success: %q", r)
	}
	// A request that hangs: begun, never ended.
	h.begin("hook")
	now = now.Add(31 * time.Minute)
	if r := reasons(); !strings.Contains(r, "hanging") {
		t.Errorf("a request hanging for 31m: %q", r)
	}
}
