package crawler

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/golfcrawler/golf-crawler/crawler/site"
	"github.com/golfcrawler/golf-crawler/internal/retry"
)

// retryDelay decides whether a failed fetch is worth another attempt and how long to wait first.
//
// Retried: no response at all (status 0: timeout, connection refused or reset), 408, 429 and every
// 5xx. Any other status (404, 403, ...) is the site's answer and is not retried. The wait after
// attempt n (0-based) is base·2ⁿ capped at cap, with equal jitter (a uniform draw in [d/2, d]) so
// that parallel retries spread out. A Retry-After header (delta-seconds or HTTP-date, relative to
// now) replaces the backoff; one longer than MaxRetryAfter is not honoured by waiting but by giving
// the page up for this crawl, because a crawl must not stall on one page for minutes and retrying
// earlier than asked would be rude.
func retryDelay(status int, hdr http.Header, attempt int, base, cap time.Duration, now time.Time) (time.Duration, bool) {
	if !retryStatus(status) {
		return 0, false
	}
	if ra, ok := retryAfter(hdr.Get("Retry-After"), now); ok {
		if ra > site.MaxRetryAfter {
			return 0, false
		}
		return ra, true
	}
	return retry.Backoff{Base: base, Max: cap}.Delay(attempt + 1), true
}

// retryStatus reports whether a fetch that ended with status (0: no response) is worth another
// attempt.
func retryStatus(status int) bool {
	return status == 0 || status == http.StatusRequestTimeout || status == http.StatusTooManyRequests || status >= 500
}

// retryAfter parses a Retry-After value: delta-seconds ("120") or an HTTP-date. A date in the past
// means no wait.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64(24*time.Hour/time.Second) {
			return 24 * time.Hour, true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(0, t.Sub(now)), true
}
