// Package retry holds the arithmetic every retry loop in the project shares: one capped
// exponential backoff with equal jitter, and one sleep that ends early with its context. Which
// errors are retried, and for how long, stays with each caller.
package retry

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is capped exponential backoff with equal jitter: attempt n (1-based) waits a uniform
// draw in [d/2, d] with d = min(Max, Base·2^(n-1)), so that parallel retries spread out.
type Backoff struct {
	Base time.Duration
	Max  time.Duration
}

// Delay returns the wait before retry number attempt (1-based), jittered. A Max below Base
// counts as Base.
func (b Backoff) Delay(attempt int) time.Duration {
	limit := max(b.Max, b.Base)
	d := b.Base
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	if d <= 0 {
		return 0
	}
	half := d / 2
	return half + rand.N(d-half+1)
}

// Sleep waits d or until ctx ends: nil after the full wait, ctx.Err() otherwise.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
