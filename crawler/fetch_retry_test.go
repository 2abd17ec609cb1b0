package crawler

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)
	base, capD := 500*time.Millisecond, 10*time.Second
	hdr := func(v string) http.Header { return http.Header{"Retry-After": []string{v}} }
	for _, tc := range []struct {
		name     string
		status   int
		hdr      http.Header
		attempt  int
		min, max time.Duration
		retry    bool
	}{
		{"Timeout", 0, nil, 0, 250 * time.Millisecond, 500 * time.Millisecond, true},
		{"500Second", 500, nil, 1, 500 * time.Millisecond, time.Second, true},
		{"503Fourth", 503, nil, 3, 2 * time.Second, 4 * time.Second, true},
		{"Capped", 502, nil, 30, 5 * time.Second, 10 * time.Second, true},
		{"408", 408, nil, 0, 250 * time.Millisecond, 500 * time.Millisecond, true},
		{"404", 404, nil, 0, 0, 0, false},
		{"403", 403, nil, 0, 0, 0, false},
		{"429Seconds", 429, hdr("7"), 0, 7 * time.Second, 7 * time.Second, true},
		{"429Date", 429, hdr(now.Add(20 * time.Second).Format(http.TimeFormat)), 0, 20 * time.Second, 20 * time.Second, true},
		{"429PastDate", 429, hdr(now.Add(-time.Hour).Format(http.TimeFormat)), 0, 0, 0, true},
		{"429TooLong", 429, hdr("3600"), 0, 0, 0, false},
		{"429Garbage", 429, hdr("soon"), 2, time.Second, 2 * time.Second, true},
		{"503RetryAfter", 503, hdr("2"), 5, 2 * time.Second, 2 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for range 20 { // jitter: every draw must be in range
				d, retry := retryDelay(tc.status, tc.hdr, tc.attempt, base, capD, now)
				if retry != tc.retry || d < tc.min || d > tc.max {
					t.Fatalf("retryDelay = %s, %v; want %v in [%s, %s]", d, retry, tc.retry, tc.min, tc.max)
				}
			}
		})
	}
}
