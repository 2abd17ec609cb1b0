package replay

import (
	"context"
	"time"
)

// limiter is a token bucket: rate tokens a second, at most burst stored, starting full. wait
// takes n tokens, going into debt if needed, and sleeps until the debt is paid, so that over any
// stretch of time at most burst + rate·t events pass. (golang.org/x/time/rate does the same; this
// is the dozen lines replay needs without a new module.)
type limiter struct {
	rate   float64 // tokens per second
	burst  float64
	tokens float64
	last   time.Time
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error
}

func newLimiter(rate float64, burst int, now func() time.Time, sleep func(context.Context, time.Duration) error) *limiter {
	return &limiter{rate: rate, burst: float64(burst), tokens: float64(burst), last: now(), now: now, sleep: sleep}
}

// wait takes n tokens and returns when they are paid for, or ctx's error if ctx ends first (the
// tokens are then given back).
func (l *limiter) wait(ctx context.Context, n int) error {
	now := l.now()
	l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.rate)
	l.last = now
	l.tokens -= float64(n)
	if l.tokens >= 0 {
		return nil
	}
	d := time.Duration(-l.tokens / l.rate * float64(time.Second))
	if err := l.sleep(ctx, d); err != nil {
		l.tokens += float64(n)
		return err
	}
	return nil
}
